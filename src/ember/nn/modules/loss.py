"""Loss layers (https://pytorch.org/docs/stable/nn.html#loss-functions).

Each module holds its settings and calls the function of the same name in
:mod:`ember.nn.functional`, where the formulas, shapes and errors are documented. All take
``reduction`` ('mean' | 'sum' | 'none'); the deprecated ``size_average``/``reduce`` flags,
when given, override it as in PyTorch. Class weights are registered as buffers (so they
follow ``.to()`` and appear in ``state_dict`` when set), as PyTorch's ``_WeightedLoss`` does.
"""
import warnings

from .. import functional as F
from .._reduction import legacy_reduction
from .module import Module

__all__ = ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "NLLLoss2d",
           "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "SoftMarginLoss", "MarginRankingLoss",
           "HingeEmbeddingLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
           "MultiLabelMarginLoss", "GaussianNLLLoss", "PoissonNLLLoss", "CTCLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, reduction)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean (or sum) absolute error ``|input - target|``. Shape: input (*), target (*)."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean (or sum) squared error ``(input - target)^2``. Shape: input (*), target (*)."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta``, absolute error above it. Shape: input (*), target (*)."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below ``delta``, ``delta``-scaled absolute error above it.
    Shape: input (*), target (*)."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits against class indices or class probabilities.

    Shape: input (N, C), (C) or (N, C, d1, ..., dK) logits; target (N), () or (N, d1, ..., dK)
    int64 class indices in [0, C) (or ``ignore_index``), or class probabilities of input's
    shape; output () or, with reduction 'none', target's batch shape. ``weight`` (C) rescales
    the classes; ``label_smoothing`` in [0, 1] mixes the target with the uniform distribution.

    Example::

        >>> import ember
        >>> loss = ember.nn.CrossEntropyLoss()
        >>> round(loss(ember.zeros(2, 4), ember.tensor([0, 3])).item(), 4)  # log(4)
        1.3863
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities at class indices. Shapes as
    :class:`CrossEntropyLoss` with class-index targets; input holds log-probabilities."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """Deprecated name of :class:`NLLLoss` (which takes (N, C, H, W) input itself): the same
    arguments and loss, after torch's FutureWarning."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and "
                      "see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities. Shape: input (*) in [0, 1], target (*) the same
    shape, ``weight`` broadcastable to it."""

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits, computed stably. Shape: input (*), target (*) the same
    shape; ``weight`` broadcastable to it; ``pos_weight`` broadcastable along the last (class)
    dimension, weighting the positive term."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """KL divergence of log-probabilities ``input`` from ``target`` (probabilities, or
    log-probabilities with ``log_target``); 'batchmean' is the divergence proper.
    Shape: input (*), target (*) the same shape."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y x))`` for targets y in {-1, 1}. Shape: input (*), target (*)."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -y (x1 - x2) + margin)``. Shape: input1 (N) or (), input2 and target the same."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` where y = 1, ``max(0, margin - x)`` where y = -1. Shape: input (*), target (*)."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` where y = 1, ``max(0, cos(x1, x2) - margin)`` where y = -1.
    Shape: input1 (N, D) or (D), input2 the same, target (N) or ()."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the p-norm distance ``d``.
    Shape: anchor, positive, negative (N, D) or (D)."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """:class:`TripletMarginLoss` with any ``distance_function(x1, x2)`` (default the
    pairwise 2-norm distance)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss averaged over the classes. Shape: input (N, C), target (N, C)
    of 0/1 labels, ``weight`` (C); output (N) with reduction 'none'."""

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss with exponent ``p`` (1 or 2) and ``margin``. Shape: input (N, C)
    or (C), target (N) or () class indices."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss between each target class and each other class. Shape: input
    (N, C) or (C), target of the same shape: class indices, ended by -1."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of ``target`` under N(input, var). Shape: input (N, *),
    target the same, var the same or with one dimension of size 1 (or the last one absent)."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of ``target`` under Poisson(input) (``input`` is the log-rate
    when ``log_input``). Shape: input (*), target (*)."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (:func:`ember.nn.functional.ctc_loss`).
    Shapes: log_probs (T, N, C) or (T, C); targets (N, S) or concatenated 1-d; input and
    target lengths N ints (a tuple/list or an integer tensor); result per ``reduction``."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
