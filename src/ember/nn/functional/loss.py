"""Loss functions (https://pytorch.org/docs/stable/nn.functional.html#loss-functions).

Each takes PyTorch's ``reduction`` ('mean' | 'sum' | 'none') and the legacy
``size_average``/``reduce`` flags (:mod:`ember.nn._reduction`). ``cross_entropy``,
``nll_loss`` and ``binary_cross_entropy`` are fused entries in :mod:`ember._ops.loss`; the
others are written in ember ops. Argument checks raise PyTorch's exception classes with
its messages.
"""
import math
import warnings

from ... import _dtype
from ..._creation import arange, full as _full
from ..._ops.pointwise_binary import minimum, where
from ..._ops.shape import broadcast_shapes, broadcast_tensors
from ..._ops.loss import BinaryCrossEntropy, CrossEntropy, MseLoss, NllLoss
from ..._ops.core import _type_name, apply, named
from ..._tensor import Tensor
from ...autograd.grad_mode import STATE, no_grad
from .._reduction import check_reduction, legacy_reduction, reduce_loss
from ..._ops.refusals import float_only
from ..._ops.unimplemented import first_order
from .activation import logsigmoid, softplus
from .distance import pairwise_distance

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
    "multilabel_margin_loss", "gaussian_nll_loss", "poisson_nll_loss",
]


def _broadcast_pair(input, target):
    """``input`` and ``target`` broadcast together, warning when their shapes differ."""
    if tuple(target.shape) == tuple(input.shape):
        return input, target
    warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                  f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
                  "Please ensure they have the same size.", stacklevel=3)
    return broadcast_tensors(input, target)


def _weighted(loss, weight, reduction, input):
    """PyTorch's elementwise ``weight`` of mse/l1: the mean divides by the weight total."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    if reduction in ("sum", "none"):
        return reduce_loss(loss, reduction)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """``(input - target)^2``, reduced (https://pytorch.org/docs/stable/generated/torch.nn.MSELoss.html).

    input and target broadcast (with a warning when their shapes differ); ``weight``, if
    given, has input's shape and makes the mean divide by its total. NotImplementedError
    for integer inputs.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if weight is None:
        check_reduction(reduction)
        float_only(_dtype.result_type(expanded_input, expanded_target), "mse_cpu")
        return apply(MseLoss, expanded_input, expanded_target, reduction=reduction)
    diff = expanded_input - expanded_target
    float_only(diff, "mse_cpu")
    return _weighted(diff * diff, weight, reduction, input)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """``|input - target|``, reduced; the gradient at a tie is 0. Same rules as ``mse_loss``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.l1_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    loss = (expanded_input - expanded_target).abs()
    return reduce_loss(loss, reduction) if weight is None else _weighted(loss, weight, reduction, input)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (d = input - target;
    Girshick, 2015, https://arxiv.org/abs/1504.08083); ``beta == 0`` is ``l1_loss``.
    RuntimeError for negative ``beta``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.smooth_l1_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = expanded_input - expanded_target
    size = diff.abs()
    if beta == 0:
        return named(reduce_loss(size, reduction), "SmoothL1LossBackward0")
    loss = reduce_loss(where(size < beta, diff * diff * (0.5 / beta), size - 0.5 * beta), reduction)
    return named(loss, "SmoothL1LossBackward0")


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)`` (d = input - target;
    Huber, 1964). ``weight`` (input's shape) scales elementwise; the mean stays a plain mean.
    RuntimeError for ``delta <= 0``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.huber_loss.html"""
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = expanded_input - expanded_target
    size = diff.abs()
    loss = where(size < delta, diff * diff * 0.5, (size - 0.5 * delta) * delta)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
        return reduce_loss(loss * weight, reduction)
    return named(reduce_loss(loss, reduction), "HuberLossBackward0")


def _class_targets(input, target, weight):
    """Checks a class-index ``target`` against ``input`` (N, C, d1, ...) or (C,) as PyTorch's
    ``nll_loss_nd`` does; returns them batched (unbatched inputs gain a batch of 1). A
    ``weight`` that requires grad is refused while recording (torch has no gradient for it
    with class indices)."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and target.ndim >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if STATE.enabled and weight is not None and weight.requires_grad:
        kernel = "nll_loss_forward" if input.ndim <= 2 else "nll_loss2d_forward"
        raise RuntimeError(f"The function '{kernel}' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    if target.dtype is _dtype.uint8:
        target = target.long()
    elif target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_type_name(target.dtype)}")
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 1:
            if target.ndim != 0:
                raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: "
                                   f"{list(target.shape)})")
            input, target = input.unsqueeze(0), target.unsqueeze(0)
    elif input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets "
                               f"of dimension: {target.ndim}")
        if tuple(target.shape) != tuple(input.shape[:1]) + tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    else:
        expected = list(input.shape[:1]) + list(input.shape[2:])
        if list(target.shape) != expected:
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    _check_weight(input, weight)
    return input, target


def _check_weight(input, weight):
    if weight is None:
        return
    classes = input.shape[1]
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(weight.dtype)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood ``-weight[t] * input[n, t]`` of log-probabilities ``input`` at
    class indices ``target`` (https://pytorch.org/docs/stable/generated/torch.nn.NLLLoss.html).

    Shapes: input (N, C), (C) or (N, C, d1, ..., dK); target (N), () or (N, d1, ..., dK) of
    int64 (or uint8) in [0, C) or equal to ``ignore_index``; weight (C) of input's dtype.
    'mean' divides by the total weight of the targets not ignored (nan if there are none).

    Raises ValueError for mismatched batch sizes ("Expected input batch_size (3) to match
    target batch_size (4)."), RuntimeError for other shape or dtype mismatches, IndexError
    for a class index out of range ("Target 7 is out of bounds.").
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    unbatched = input.ndim == 1
    input, target = _class_targets(input, target, weight)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for '{_type_name(input.dtype)}'")
    out = apply(NllLoss, input, target, weight, ignore_index=ignore_index, reduction=reduction)
    return out.squeeze(0) if unbatched and reduction == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    r"""Cross-entropy between the softmax of ``input`` over its class dimension and ``target``
    (``torch.nn.functional.cross_entropy``; the loss of
    https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html).

    For class indices, sample ``n`` (at each position ``d1, ..., dK``) costs
    ``-w[t] * log_softmax(input[n])[t]`` with ``t = target[n]`` and ``w = weight`` (ones if
    None). For class probabilities it costs ``-sum_c w[c] * target[n, c] *
    log_softmax(input[n])[c]``. ``label_smoothing`` ε replaces the target distribution by
    ``(1 - ε) target + ε / C`` (Szegedy et al., 2016, https://arxiv.org/abs/1512.00567).
    Log-softmax and the loss are computed in one fused, max-shifted pass, so the loss is
    finite for logits of any size.

    Args:
        input (Tensor): unnormalized logits, floating dtype.
        target (Tensor): class indices (int64, or uint8) in ``[0, C)`` or equal to
            ``ignore_index``; or class probabilities of ``input``'s shape (floating).
        weight (Tensor, optional): a rescaling weight per class, shape ``(C)``, ``input``'s
            dtype.
        size_average, reduce: deprecated; they map onto ``reduction`` as in PyTorch.
        ignore_index (int): class-index targets equal to it contribute nothing to the loss or
            the gradient, nor to the 'mean' divisor. Default: -100.
        reduction (str): 'none' | 'mean' | 'sum'. 'mean' divides by the total weight of the
            non-ignored targets (indices; nan if none are left) or by ``N * d1 * ... * dK``
            (probabilities). Default: 'mean'.
        label_smoothing (float): ε in ``[0, 1]``. Default: 0.0.

    Shape:
        - input: ``(N, C)``, ``(C)``, or ``(N, C, d1, ..., dK)`` with ``K >= 1``.
        - target: indices ``(N)``, ``()`` or ``(N, d1, ..., dK)``; probabilities as ``input``.
        - output: a scalar; with ``reduction='none'``, ``(N)``, ``()`` or ``(N, d1, ..., dK)``.

    Raises:
        ValueError: ``input`` and ``target`` batch sizes differ ("Expected input batch_size
            (2) to match target batch_size (3)."); an unknown ``reduction``.
        IndexError: a class index outside ``[0, C)`` that is not ``ignore_index`` ("Target 3
            is out of bounds.").
        RuntimeError: other shape mismatches (messages name both shapes); a target dtype that
            is neither int64/uint8 nor floating; integer probability targets; a ``weight``
            not of shape ``(C)`` or of another dtype; ``label_smoothing > 1``.
        NotImplementedError: integer logits.

    Example::

        >>> import ember
        >>> from ember.nn import functional as F
        >>> logits = ember.tensor([[2.0, 0.5, -1.0],
        ...                        [0.1, 0.2, 3.0]])       # (N=2, C=3)
        >>> target = ember.tensor([0, 2])                 # class indices, int64
        >>> F.cross_entropy(logits, target, reduction="none")
        tensor([0.2413, 0.1096])
        >>> F.cross_entropy(logits, target)               # their mean
        tensor(0.1755)
        >>> F.cross_entropy(logits, ember.tensor([0, -100]))   # the second is ignored
        tensor(0.2413)
        >>> F.cross_entropy(logits, ember.tensor([0, 3]))
        Traceback (most recent call last):
            ...
        IndexError: Target 3 is out of bounds.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    smoothing = float(label_smoothing) if label_smoothing > 0 else 0.0  # PyTorch ignores negative values
    unbatched = input.ndim == 1
    if tuple(input.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, "
                               f"got {_type_name(target.dtype)}")
        float_only(input, "log_softmax_lastdim_kernel_impl")
        common = _dtype.promote_types(input.dtype, target.dtype)
        input, target = input.to(common), target.to(common)
        if unbatched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        _check_weight(input, weight)
    else:
        input, target = _class_targets(input, target, weight)
        float_only(input, "log_softmax_lastdim_kernel_impl")
    out = apply(CrossEntropy, input, target, weight, ignore_index=ignore_index,
                label_smoothing=smoothing, reduction=reduction)
    return out.squeeze(0) if unbatched and reduction == "none" else out


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """``-weight * (t log(x) + (1 - t) log(1 - x))`` with each log clamped at -100, as in
    PyTorch (https://pytorch.org/docs/stable/generated/torch.nn.BCELoss.html).

    input: probabilities in [0, 1], any shape; target: same shape and dtype; weight
    broadcasts to it. Raises ValueError when the shapes differ, RuntimeError for inputs
    outside [0, 1] or a target of another dtype.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_type_name(target.dtype)} but expected {_type_name(input.dtype)}")
    check_reduction(reduction)  # (the kernel checks that the input is in [0, 1])
    if weight is not None:
        weight = weight.expand(broadcast_shapes(target.shape, weight.shape))
        loss = apply(BinaryCrossEntropy, input, target, weight)
    else:
        loss = apply(BinaryCrossEntropy, input, target)
    return named(reduce_loss(loss, reduction), "BinaryCrossEntropyBackward0")


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """``binary_cross_entropy(sigmoid(input), target, weight)`` computed stably from logits:
    ``(1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x)``, finite for logits of any size
    (https://pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html).

    input and target have the same shape; ``weight`` broadcasts to it; ``pos_weight``
    broadcasts along the last (class) dimension. ValueError when the shapes differ.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    check_reduction(reduction)
    log_sig = logsigmoid(input)
    if pos_weight is None:
        loss = (1 - target) * input - log_sig
    else:
        loss = (1 - target) * input - (target * (pos_weight - 1) + 1) * log_sig
    if weight is not None:
        loss = loss * weight
    return named(reduce_loss(loss, reduction), "BinaryCrossEntropyWithLogitsBackward0")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence ``target * (log(target) - input)`` for log-probabilities
    ``input`` (https://pytorch.org/docs/stable/generated/torch.nn.KLDivLoss.html); with
    ``log_target`` the target is given as log-probabilities too. Terms with ``target == 0``
    are 0. ``reduction='batchmean'`` divides the sum by ``input.size(0)`` (the KL
    divergence proper); 'mean' divides by the element count and warns, as PyTorch does.
    RuntimeError for integer inputs."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support "
                      "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                      "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                      "major release.", stacklevel=2)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not input.dtype.is_floating_point or not target.dtype.is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = where(positive, target, target.new_ones(()))
        loss = where(positive, target * safe.log(), target.new_zeros(())) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return reduce_loss(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))`` for targets in {-1, 1}.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.soft_margin_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return reduce_loss(softplus(-target * input), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``; RuntimeError unless the three inputs
    have the same number of dimensions.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.margin_ranking_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got "
                           f"sizes: input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return reduce_loss((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.hinge_embedding_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    zero = input.new_zeros(())
    loss = where(target != 1, (margin - input).clamp_min(0), zero) + where(target != -1, input, zero)
    return reduce_loss(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``; cos over the last dimension of (N, D) or (D) inputs.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.cosine_embedding_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    dim = input1.ndim - 1
    eps = 1e-12
    dot = (input1 * input2).sum(dim)
    cos = dot / (((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)).sqrt()
    zero = cos.new_zeros(())
    loss = where(target == 1, 1 - cos, zero) + where(target == -1, (cos - margin).clamp_min(0), zero)
    return reduce_loss(loss, reduction)


def _check_triplet_dims(anchor, positive, negative):
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same "
                           f"number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the :func:`pairwise_distance`
    (Balntas et al., 2016); ``swap`` uses ``min(d(a, n), d(p, n))``. Inputs (N, D) or (D);
    RuntimeError unless they have the same number of dimensions.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.triplet_margin_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_triplet_dims(anchor, positive, negative)
    distance = lambda x1, x2: pairwise_distance(x1, x2, p, eps)
    return triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=distance,
                                             margin=margin, swap=swap, reduction=reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """:func:`triplet_margin_loss` with any ``distance_function(x1, x2)`` (default
    :func:`pairwise_distance`). ValueError for ``margin <= 0`` or an unknown reduction.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.triplet_margin_with_distance_loss.html"""
    check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = distance_function or pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return reduce_loss((margin + d_pos - d_neg).clamp_min(0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-class binary cross-entropy of logits averaged over the C classes:
    ``-mean_c(y log sigmoid(x) + (1 - y) log sigmoid(-x))``. Shape: input (N, C) or (C),
    target the same (0 or 1), weight (C); output (N) with reduction 'none'.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.multilabel_soft_margin_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not valid")
    return reduce_loss(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``, scaled by
    ``weight[y]``. Shape: input (N, C) or (C), target (N) or () int64. ValueError for ``p``
    other than 1 or 2 or a weight that is not 1-D; RuntimeError for a weight that requires grad
    (grad mode on). Differentiable once: a second derivative raises torch's RuntimeError.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.multi_margin_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    check_reduction(reduction)
    if weight is not None and STATE.enabled and weight.requires_grad:
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    input = first_order(input, "multi_margin_loss_backward")
    unbatched = input.ndim == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.reshape(1)
    classes = input.shape[1]
    index = target.unsqueeze(1)
    # The hinge's gradient is zero at its kink, as in PyTorch: relu, not clamp.
    z = (margin - input.gather(1, index) + input).relu()
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[target].unsqueeze(1)
    others = arange(classes) != index
    loss = (z * others).sum(1) / classes
    return reduce_loss(loss.squeeze(0) if unbatched else loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum_{j in y, i not in y} max(0, 1 - (x[j] - x[i])) / C``, the target classes ``y``
    being the entries of ``target`` before its first -1. Shape: input (N, C) or (C), target
    int64 of the same shape.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.multilabel_margin_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    unbatched = input.ndim == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    listed = (target != -1).long().cumprod(1)  # 1 for the entries before the first -1
    # A class listed twice counts twice, as in PyTorch's loop over the target entries.
    times_listed = input.new_zeros(input.shape).scatter_add(1, target * listed, listed.to(input.dtype))
    pairs = times_listed.unsqueeze(2) * (times_listed == 0).unsqueeze(1)  # [n, j target, i not]
    z = (1 - input.unsqueeze(2) + input.unsqueeze(1)).relu()
    loss = (z * pairs).sum((1, 2)) / input.shape[1]
    return reduce_loss(loss.squeeze(0) if unbatched else loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """``0.5 (log(var) + (input - target)^2 / var)`` (+ ``0.5 log(2 pi)`` if ``full``), with
    ``var`` clamped at ``eps`` (value only, as in PyTorch). ``var`` has input's shape, or
    lacks its last dim, or differs in one dim of size 1; ValueError otherwise or if negative.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.gaussian_nll_loss.html"""
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _full(tuple(input.shape), float(var), dtype=input.dtype)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = ((input - target) ** 2 / var + var.log()) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """``exp(input) - target * input`` (``log_input``) or ``input - target * log(input + eps)``,
    plus Stirling's ``target log(target) - target + 0.5 log(2 pi target)`` for targets > 1
    if ``full``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.poisson_nll_loss.html"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = where(big, target, target.new_ones(()))
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        loss = loss + where(big, stirling, target.new_zeros(()))
    return reduce_loss(loss, reduction)

