"""AdamW: Adam with decoupled weight decay (``torch.optim.AdamW``)."""
from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Adam with weight decay applied to the weights, not folded into the gradient.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``), at
    step :math:`t`::

        θ ← θ (1 − γ λ)
        m ← m + (1 − β1)(g − m)
        v ← β2 v + (1 − β2) g²;   v̂ ← max(v̂, v) and use v̂ for v (amsgrad)
        θ ← θ − γ / (1 − β1^t) · m / (√v / √(1 − β2^t) + ε)

    Args are those of :class:`~ember.optim.Adam` except that ``weight_decay`` (λ) defaults to
    1e-2 and decoupling is always on. State: ``step``, ``exp_avg``, ``exp_avg_sq``
    (and ``max_exp_avg_sq`` with amsgrad).

    Raises:
        ValueError: negative lr, eps or weight_decay; a beta outside [0, 1).

    Source: Loshchilov & Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019);
    https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 *, maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        # A loaded Adam state dict must not switch an AdamW back to coupled weight decay.
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
