"""Adagrad: per-coordinate learning rates from accumulated squared gradients (``torch.optim.Adagrad``)."""
from .._ops.core import apply
from .._ops.optim import AdagradUpdate
from .optimizer import Optimizer, _check_nonnegative, _full, _step_tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``), at
    step :math:`t = 1, 2, \dots`::

        γ̃ ← γ / (1 + (t − 1) η)                       (lr γ, lr_decay η)
        g ← g + λ θ                                   (weight_decay λ ≠ 0)
        s ← s + g²                                    (sum, starts at initial_accumulator_value)
        θ ← θ − γ̃ g / (√s + ε)

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 1e-2.
        lr_decay (float): learning-rate decay η. Default: 0.
        weight_decay (float): L2 penalty λ. Default: 0.
        initial_accumulator_value (float): starting value of the sum ``s``. Default: 0.
        eps (float): ε added to the denominator. Default: 1e-10.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, differentiable, fused: accepted for compatibility; ember has one
            implementation (``differentiable=True`` raises NotImplementedError).

    State (per parameter, created with the optimizer): ``step``, ``sum``.

    Raises:
        ValueError: negative lr, lr_decay, weight_decay, initial_accumulator_value or eps.

    Source: Duchi et al., "Adaptive Subgradient Methods for Online Learning and Stochastic
    Optimization" (JMLR 2011); https://pytorch.org/docs/stable/generated/torch.optim.Adagrad.html
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_nonnegative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # PyTorch creates Adagrad's state eagerly, so a fresh state_dict already holds it.
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = self._init_state(p, group)

    def _init_state(self, param, group):
        return {"step": _step_tensor(),
                "sum": _full(param, group["initial_accumulator_value"])}

    hyperparameters = ("lr", "lr_decay", "weight_decay", "eps")

    def _step_param(self, p, state, group):
        written = [p, state["sum"], state["step"]]
        apply(AdagradUpdate, p, p.grad, *written[1:], *self._hyperparameters(group), maximize=group["maximize"],
              inplace=True)
        for t in written:
            t._versions[0] += 1

    def share_memory(self):
        """Kept for PyTorch compatibility: ember's CPU state needs no sharing step."""
