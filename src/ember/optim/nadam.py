"""NAdam: Adam with Nesterov momentum (``torch.optim.NAdam``)."""
from .._backend import namespace
from .optimizer import Optimizer, _check_nonnegative, _count_step_and_decay, _step_tensor, _zeros

__all__ = ["NAdam"]


def _check_betas(betas):
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


class NAdam(Optimizer):
    r"""NAdam (Dozat's Nesterov-accelerated Adam with a momentum schedule).

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``), at
    step :math:`t = 1, 2, \dots`::

        θ ← θ (1 − γ λ)   if decoupled_weight_decay   else   g ← g + λ θ
        μ_t = β1 (1 − ½ · 0.96^(t ψ)),   Π ← Π · μ_t     (ψ = momentum_decay; Π = mu_product)
        m ← m + (1 − β1)(g − m);   v ← β2 v + (1 − β2) g²
        d = √(v / (1 − β2^t)) + ε
        θ ← θ − γ (1 − μ_t) / (1 − Π) · g / d − γ μ_{t+1} / (1 − Π μ_{t+1}) · m / d

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 2e-3.
        betas (tuple[float, float]): decay rates (β1, β2). Default: (0.9, 0.999).
        eps (float): ε added to the denominator. Default: 1e-8.
        weight_decay (float): weight decay λ. Default: 0.
        momentum_decay (float): ψ. Default: 4e-3.
        decoupled_weight_decay (bool): decay the weights directly (NAdamW). Default: False.
        foreach, maximize, capturable, differentiable: as in PyTorch (one implementation).

    State (per parameter): ``step`` and ``mu_product`` (0-d float tensors, float32 unless the
    default dtype is float64, so Π rounds as PyTorch's does), ``exp_avg``, ``exp_avg_sq``.

    Raises:
        ValueError: negative lr, eps, weight_decay or momentum_decay; a beta outside [0, 1).

    Source: Dozat, "Incorporating Nesterov Momentum into Adam" (ICLR 2016 workshop);
    https://pytorch.org/docs/stable/generated/torch.optim.NAdam.html
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_nonnegative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_nonnegative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        return {"step": _step_tensor(), "mu_product": _step_tensor().fill_(1.0),
                "exp_avg": _zeros(param), "exp_avg_sq": _zeros(param)}

    def _update(self, param, grad, state, group):
        xp = namespace(param)
        lr, (beta1, beta2) = group["lr"], group["betas"]
        t, grad = _count_step_and_decay(param, grad, state, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * group["momentum_decay"]))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * group["momentum_decay"]))
        mu_product = state["mu_product"]._data
        mu_product *= mu
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        m += (1 - beta1) * (grad - m)
        v *= beta2
        v += (1 - beta2) * grad * grad
        denom = xp.sqrt(v / (1 - beta2 ** t)) + group["eps"]
        product = float(mu_product)
        param += (-lr * (1.0 - mu) / (1.0 - product)) * (grad / denom)
        param += (-lr * mu_next / (1.0 - product * mu_next)) * (m / denom)
