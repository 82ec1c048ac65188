"""RMSprop: gradient scaled by a running root mean square (``torch.optim.RMSprop``)."""
from .._backend import namespace
from .optimizer import Optimizer, _check_nonnegative, _step_tensor, _zeros

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop, optionally centered and with momentum.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``)::

        g ← g + λ θ                                   (weight_decay λ ≠ 0)
        v ← α v + (1 − α) g²                          (square_avg)
        ḡ ← ḡ + (1 − α)(g − ḡ);  ṽ ← v − ḡ²           (centered; grad_avg)   else ṽ ← v
        b ← μ b + g / (√ṽ + ε);  θ ← θ − γ b           (momentum μ > 0; momentum_buffer)
        θ ← θ − γ g / (√ṽ + ε)                          (μ = 0)

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 1e-2.
        alpha (float): smoothing constant α. Default: 0.99.
        eps (float): ε added to the denominator. Default: 1e-8.
        weight_decay (float): L2 penalty λ. Default: 0.
        momentum (float): momentum factor μ. Default: 0.
        centered (bool): normalize by an estimate of the gradient's variance. Default: False.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        capturable, foreach, differentiable: accepted for compatibility; ember has one
            implementation (``differentiable=True`` raises NotImplementedError).

    State (per parameter): ``step``, ``square_avg``, ``momentum_buffer`` (μ > 0), ``grad_avg``
    (centered).

    Raises:
        ValueError: negative lr, eps, momentum, weight_decay or alpha.

    Source: Hinton, Lecture 6e of "Neural Networks for Machine Learning" (2012); centered form
    from Graves, "Generating Sequences With Recurrent Neural Networks" (2013);
    https://pytorch.org/docs/stable/generated/torch.optim.RMSprop.html
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_nonnegative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        state = {"step": _step_tensor(), "square_avg": _zeros(param)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros(param)
        if group["centered"]:
            state["grad_avg"] = _zeros(param)
        return state

    def _update(self, param, grad, state, group):
        xp = namespace(param)
        alpha, momentum, weight_decay = group["alpha"], group["momentum"], group["weight_decay"]
        state["step"]._data += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        square_avg = state["square_avg"]._data
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"]._data
            grad_avg += (1 - alpha) * (grad - grad_avg)
            avg = xp.sqrt(square_avg - grad_avg * grad_avg) + group["eps"]
        else:
            avg = xp.sqrt(square_avg) + group["eps"]
        if momentum > 0:
            buf = state["momentum_buffer"]._data
            buf *= momentum
            buf += grad / avg
            param -= group["lr"] * buf
        else:
            param -= group["lr"] * grad / avg
