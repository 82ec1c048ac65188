"""Adam: adaptive moment estimation (``torch.optim.Adam``)."""
from .._ops.core import apply
from .._ops.optim import AdamUpdate
from .optimizer import Optimizer, _check_nonnegative, _step_tensor, _zeros

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Adam, optionally with AMSGrad and decoupled (AdamW) weight decay.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``), at
    step :math:`t = 1, 2, \dots`::

        θ ← θ (1 − γ λ)     if decoupled_weight_decay   else   g ← g + λ θ
        m ← m + (1 − β1)(g − m)                  first moment (exp_avg)
        v ← β2 v + (1 − β2) g²                   second moment (exp_avg_sq)
        v̂ ← max(v̂, v); use v̂ for v below        (amsgrad; max_exp_avg_sq)
        θ ← θ − γ / (1 − β1^t) · m / (√v / √(1 − β2^t) + ε)

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 1e-3.
        betas (tuple[float, float]): decay rates (β1, β2) of the moment estimates.
            Default: (0.9, 0.999).
        eps (float): ε added to the denominator for numerical stability. Default: 1e-8.
        weight_decay (float): weight decay λ (an L2 penalty unless decoupled). Default: 0.
        amsgrad (bool): use the AMSGrad variant. Default: False.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        decoupled_weight_decay (bool): decay the weights directly, as AdamW. Default: False.
        foreach, capturable, differentiable, fused: accepted for compatibility; ember has one
            implementation (``differentiable=True`` raises NotImplementedError).

    State (per parameter): ``step`` (a 0-d float tensor), ``exp_avg``, ``exp_avg_sq``, and
    ``max_exp_avg_sq`` with amsgrad.

    Each parameter's update has its shape and dtype; the state tensors are zeros of the
    parameter's shape and dtype when created, at the first :meth:`step` that sees a gradient
    (parameters whose ``.grad`` is None are skipped).

    Raises:
        ValueError: negative lr, eps or weight_decay ("Invalid learning rate: -1"); a beta
            outside [0, 1) ("Invalid beta parameter at index 1: 1.0").
        TypeError: ``params`` is a single tensor rather than an iterable of tensors or dicts.
        NotImplementedError: ``differentiable=True``.

    Example::

        >>> import ember
        >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
        >>> optimizer = ember.optim.Adam([w], lr=0.1)
        >>> optimizer.zero_grad()
        >>> (w ** 2).sum().backward()
        >>> optimizer.step()    # the first step moves each weight by lr against its gradient's sign
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
        >>> sorted(optimizer.state[w])
        ['exp_avg', 'exp_avg_sq', 'step']
        >>> ember.optim.Adam([w], lr=-1)
        Traceback (most recent call last):
            ...
        ValueError: Invalid learning rate: -1

    Source: Kingma & Ba, "Adam: A Method for Stochastic Optimization" (ICLR 2015); Reddi et al.,
    "On the Convergence of Adam and Beyond" (ICLR 2018);
    https://pytorch.org/docs/stable/generated/torch.optim.Adam.html
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_nonnegative(lr=lr, eps=eps)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        _check_nonnegative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    hyperparameters = ("lr", ("betas", 0), ("betas", 1), "eps", "weight_decay")

    def _init_state(self, param, group):
        state = {"step": _step_tensor(), "exp_avg": _zeros(param), "exp_avg_sq": _zeros(param)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _zeros(param)
        return state

    def _step_param(self, p, state, group):
        written = [p, state["exp_avg"], state["exp_avg_sq"], state["step"], state.get("max_exp_avg_sq")]
        apply(AdamUpdate, p, p.grad, *written[1:], *self._hyperparameters(group),
              decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"],
              inplace=True)
        for t in written:
            if t is not None:  # max_exp_avg_sq: amsgrad only
                t._versions[0] += 1
