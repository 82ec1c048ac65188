"""Adamax: Adam under the infinity norm (``torch.optim.Adamax``)."""
from .._backend import namespace
from .nadam import _check_betas
from .optimizer import Optimizer, _check_nonnegative, _step_tensor, _zeros

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax: the second moment of Adam replaced by an exponentially weighted infinity norm.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``), at
    step :math:`t`::

        g ← g + λ θ
        m ← m + (1 − β1)(g − m)
        u ← max(β2 u, |g| + ε)                   (exp_inf)
        θ ← θ − γ / (1 − β1^t) · m / u

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 2e-3.
        betas (tuple[float, float]): decay rates (β1, β2). Default: (0.9, 0.999).
        eps (float): ε. Default: 1e-8.
        weight_decay (float): L2 penalty λ. Default: 0.
        foreach, maximize, capturable, differentiable: as in PyTorch (one implementation).

    State (per parameter): ``step`` (0-d float tensor), ``exp_avg``, ``exp_inf``.

    Raises:
        ValueError: negative lr, eps or weight_decay; a beta outside [0, 1).

    Source: Kingma & Ba, "Adam: A Method for Stochastic Optimization" (ICLR 2015), section 7.1;
    https://pytorch.org/docs/stable/generated/torch.optim.Adamax.html
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None,
                 *, maximize=False, differentiable=False, capturable=False):
        _check_nonnegative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_nonnegative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        return {"step": _step_tensor(), "exp_avg": _zeros(param), "exp_inf": _zeros(param)}

    def _update(self, param, grad, state, group):
        xp = namespace(param)
        lr, (beta1, beta2), weight_decay = group["lr"], group["betas"], group["weight_decay"]
        state["step"]._data += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        m, u = state["exp_avg"]._data, state["exp_inf"]._data
        m += (1 - beta1) * (grad - m)
        u *= beta2
        xp.maximum(u, xp.abs(grad) + group["eps"], out=u)
        param -= lr / (1 - beta1 ** float(state["step"]._data)) * (m / u)
