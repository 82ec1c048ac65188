"""Adadelta: learning-rate-free updates from running averages (``torch.optim.Adadelta``)."""
from .._backend import namespace
from .optimizer import Optimizer, _check_nonnegative, _step_tensor, _zeros

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``)::

        g ← g + λ θ                                   (weight_decay λ ≠ 0)
        v ← ρ v + (1 − ρ) g²                          (square_avg)
        Δ ← √(u + ε) / √(v + ε) · g
        u ← ρ u + (1 − ρ) Δ²                          (acc_delta)
        θ ← θ − γ Δ

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): coefficient γ that scales Δ before it is applied. Default: 1.0.
        rho (float): decay ρ of the running averages. Default: 0.9.
        eps (float): ε inside the square roots. Default: 1e-6.
        weight_decay (float): L2 penalty λ. Default: 0.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, capturable, differentiable: accepted for compatibility; ember has one
            implementation (``differentiable=True`` raises NotImplementedError).

    State (per parameter): ``step``, ``square_avg``, ``acc_delta``.

    Raises:
        ValueError: negative lr, eps or weight_decay; rho outside [0, 1].

    Source: Zeiler, "ADADELTA: An Adaptive Learning Rate Method" (2012);
    https://pytorch.org/docs/stable/generated/torch.optim.Adadelta.html
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_nonnegative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        return {"step": _step_tensor(), "square_avg": _zeros(param), "acc_delta": _zeros(param)}

    def _update(self, param, grad, state, group):
        xp = namespace(param)
        rho, eps = group["rho"], group["eps"]
        state["step"]._data += 1
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param -= group["lr"] * delta
