"""SGD: stochastic gradient descent with momentum (``torch.optim.SGD``)."""
from .._ops.core import apply
from .._ops.optim import SgdUpdate
from .optimizer import Optimizer, _check_nonnegative

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent, optionally with (Nesterov) momentum.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``)::

        g ← g + λ θ                                   (weight_decay λ ≠ 0)
        b ← g                                         (first step, momentum μ ≠ 0)
        b ← μ b + (1 − τ) g                           (later steps; dampening τ)
        g ← g + μ b  if nesterov  else  b             (momentum μ ≠ 0)
        θ ← θ − γ g                                   (lr γ)

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 1e-3.
        momentum (float): momentum factor μ. Default: 0.
        dampening (float): dampening τ of the momentum. Default: 0.
        weight_decay (float): L2 penalty λ. Default: 0.
        nesterov (bool): use Nesterov momentum. Default: False.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, differentiable, fused: accepted for compatibility; ember has one
            implementation (``differentiable=True`` raises NotImplementedError).

    State (per parameter, when μ ≠ 0): ``momentum_buffer``.

    Raises:
        ValueError: negative lr, momentum or weight_decay; Nesterov momentum without a
            positive momentum and zero dampening.

    Source: Sutskever et al., "On the importance of initialization and momentum in deep
    learning" (ICML 2013); https://pytorch.org/docs/stable/generated/torch.optim.SGD.html
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_nonnegative(lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    hyperparameters = ("lr", "momentum", "dampening", "weight_decay")

    def _init_state(self, param, group):
        # The buffer starts as the first gradient, so it is made by the first update.
        return {"momentum_buffer": None} if group["momentum"] != 0 else {}

    def _step_param(self, p, state, group):
        buf = state.get("momentum_buffer")
        new = apply(SgdUpdate, p, p.grad, buf, *self._hyperparameters(group), nesterov=group["nesterov"],
                    maximize=group["maximize"], inplace=True)
        p._versions[0] += 1
        if buf is not None:
            buf._versions[0] += 1
        elif len(new) == 2:
            state["momentum_buffer"] = new[1]
