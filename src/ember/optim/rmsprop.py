"""RMSprop: gradient scaled by a running root mean square (``torch.optim.RMSprop``)."""
from .._ops.core import apply
from .._ops.optim import RmspropUpdate
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

    hyperparameters = ("lr", "alpha", "eps", "weight_decay", "momentum")

    def _step_param(self, p, state, group):
        # (a buffer only with momentum, a gradient average only centered: KeyError without, as torch's)
        written = [p, state["square_avg"], state["step"], state["momentum_buffer"] if group["momentum"] > 0 else None,
                   state["grad_avg"] if group["centered"] else None]
        apply(RmspropUpdate, p, p.grad, *written[1:], *self._hyperparameters(group), maximize=group["maximize"],
              inplace=True)
        for t in written:
            if t is not None:
                t._versions[0] += 1
