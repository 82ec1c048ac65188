"""RAdam: Adam with a rectified adaptive learning rate (``torch.optim.RAdam``)."""
import math

from .._backend import namespace
from .nadam import _check_betas
from .optimizer import Optimizer, _check_nonnegative, _count_step_and_decay, _step_tensor, _zeros

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam: while the variance of the adaptive rate is intractable (ρ_t ≤ 5) the step is
    plain momentum SGD; afterwards Adam's step scaled by the rectification term r_t.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``), at
    step :math:`t`::

        θ ← θ (1 − γ λ)   if decoupled_weight_decay   else   g ← g + λ θ
        m ← m + (1 − β1)(g − m);   v ← β2 v + (1 − β2) g²;   m̂ = m / (1 − β1^t)
        ρ_∞ = 2 / (1 − β2) − 1;   ρ_t = ρ_∞ − 2 t β2^t / (1 − β2^t)
        ρ_t > 5:  r_t = √((ρ_t − 4)(ρ_t − 2) ρ_∞ / ((ρ_∞ − 4)(ρ_∞ − 2) ρ_t))
                  θ ← θ − γ m̂ r_t √(1 − β2^t) / (√v + ε)
        else:     θ ← θ − γ m̂

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 1e-3.
        betas (tuple[float, float]): decay rates (β1, β2). Default: (0.9, 0.999).
        eps (float): ε added to the denominator. Default: 1e-8.
        weight_decay (float): weight decay λ. Default: 0.
        decoupled_weight_decay (bool): decay the weights directly (RAdamW). Default: False.
        foreach, maximize, capturable, differentiable: as in PyTorch (one implementation).

    State (per parameter): ``step`` (0-d float tensor), ``exp_avg``, ``exp_avg_sq``.

    Raises:
        ValueError: negative lr, eps or weight_decay; a beta outside [0, 1).

    Source: Liu et al., "On the Variance of the Adaptive Learning Rate and Beyond" (ICLR 2020);
    https://pytorch.org/docs/stable/generated/torch.optim.RAdam.html
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_nonnegative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_nonnegative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        return {"step": _step_tensor(), "exp_avg": _zeros(param), "exp_avg_sq": _zeros(param)}

    def _update(self, param, grad, state, group):
        xp = namespace(param)
        lr, (beta1, beta2) = group["lr"], group["betas"]
        t, grad = _count_step_and_decay(param, grad, state, group)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        m += (1 - beta1) * (grad - m)
        v *= beta2
        v += (1 - beta2) * grad * grad
        bias_correction2 = 1 - beta2 ** t
        m_hat = m / (1 - beta1 ** t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            param -= m_hat * lr * (bias_correction2 ** 0.5 / (xp.sqrt(v) + group["eps"])) * rect
        else:
            param -= m_hat * lr
