"""SparseAdam: Adam on the rows a sparse gradient touches (``torch.optim.SparseAdam``)."""
import math

from .._backend import namespace
from .nadam import _check_betas
from .optimizer import Optimizer, _zeros

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    r"""Adam restricted to the rows of each parameter that its gradient touches: the moments
    and parameter of the other rows stay as they are (a "lazy" Adam for embeddings).

    ember has no sparse layout: ``nn.Embedding(sparse=True)`` gives a dense gradient whose
    untouched rows are zero, so a row (an index along dim 0) counts as touched when any of its
    gradient entries is non-zero; this is the set of indices PyTorch's sparse gradient holds,
    except for a looked-up row whose gradient is exactly zero everywhere. For the touched rows,
    at step t (counted per parameter, also for steps that touch none)::

        m ← m + (1 − β1)(g − m);   v ← v + (1 − β2)(g² − v)
        θ ← θ − γ √(1 − β2^t) / (1 − β1^t) · m / (√v + ε)

    Args:
        params (iterable): dense tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 1e-3.
        betas (tuple[float, float]): decay rates (β1, β2). Default: (0.9, 0.999).
        eps (float): ε added to the denominator. Default: 1e-8.
        maximize (bool): maximize the objective instead of minimizing. Default: False.

    State (per parameter): ``step`` (a Python int, as in PyTorch), ``exp_avg``, ``exp_avg_sq``.

    Raises:
        ValueError: lr or eps not positive; a beta outside [0, 1); a complex parameter.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.SparseAdam.html
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def _init_state(self, param, group):
        return {"step": 0, "exp_avg": _zeros(param), "exp_avg_sq": _zeros(param)}

    def _update(self, param, grad, state, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        state["step"] += 1
        if param.ndim == 0:
            param, grad = param.reshape(1), grad.reshape(1)
            m, v = state["exp_avg"]._data.reshape(1), state["exp_avg_sq"]._data.reshape(1)
        else:
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        xp = namespace(grad)
        rows = xp.flatnonzero(grad.reshape(len(grad), -1).any(axis=1))
        if rows.size == 0:
            return
        g, m_old, v_old = grad[rows], m[rows], v[rows]
        m_new = m_old + (g - m_old) * (1 - beta1)
        v_new = v_old + (g * g - v_old) * (1 - beta2)
        m[rows], v[rows] = m_new, v_new
        t = state["step"]
        step_size = lr * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        param[rows] += -step_size * (m_new / (xp.sqrt(v_new) + eps))
