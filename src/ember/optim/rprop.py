"""Rprop: resilient backpropagation (``torch.optim.Rprop``)."""
from .._backend import namespace
from .optimizer import Optimizer, _check_nonnegative, _full, _step_tensor, _zeros

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Rprop: each element moves by its own step size against the sign of its gradient; the
    step size grows while the gradient keeps its sign and shrinks when it flips.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``),
    elementwise, with ``g_prev`` the previous (possibly zeroed) gradient::

        s = sign(g · g_prev)
        Δ ← clamp(Δ · (η+ if s > 0, η− if s < 0, 1 otherwise), Δ_min, Δ_max)
        g ← 0 where s < 0         (no move right after a sign flip)
        θ ← θ − sign(g) Δ;   g_prev ← g

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): initial step size Δ. Default: 1e-2.
        etas (tuple[float, float]): (η−, η+), with 0 < η− < 1 < η+. Default: (0.5, 1.2).
        step_sizes (tuple[float, float]): (Δ_min, Δ_max). Default: (1e-6, 50).
        foreach, maximize, capturable, differentiable: as in PyTorch (one implementation).

    State (per parameter): ``step`` (0-d float tensor), ``prev``, ``step_size``.

    Raises:
        ValueError: negative lr; etas not satisfying 0 < η− < 1 < η+.

    Source: Riedmiller & Braun, "A Direct Adaptive Method for Faster Backpropagation
    Learning: The RPROP Algorithm" (1993);
    https://pytorch.org/docs/stable/generated/torch.optim.Rprop.html
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        _check_nonnegative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        return {"step": _step_tensor(), "prev": _zeros(param),
                "step_size": _full(param, group["lr"])}

    def _update(self, param, grad, state, group):
        xp = namespace(param)
        (eta_minus, eta_plus), (step_min, step_max) = group["etas"], group["step_sizes"]
        state["step"]._data += 1
        prev, step_size = state["prev"]._data, state["step_size"]._data
        sign = xp.sign(grad * prev)
        factor = xp.where(sign > 0, eta_plus, xp.where(sign < 0, eta_minus, 1)).astype(param.dtype)
        step_size *= factor
        xp.clip(step_size, step_min, step_max, out=step_size)
        grad = xp.where(sign < 0, 0, grad).astype(param.dtype)
        param -= xp.sign(grad) * step_size
        prev[...] = grad
