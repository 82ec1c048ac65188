"""``ctc_loss``: the connectionist temporal classification loss
(https://pytorch.org/docs/stable/generated/torch.nn.functional.ctc_loss.html); the recursions
are the ``CtcLoss`` op's (:mod:`ember._ops.ctc`)."""
import operator

from ... import _dtype
from ..._creation import tensor, zeros_like
from ..._ops.core import _type_name, apply
from ..._ops.ctc import CtcLoss
from ..._ops.pointwise_binary import where
from ..._tensor import Tensor
from .._reduction import check_reduction

__all__ = ["ctc_loss"]

_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"


def _lengths(value, name):
    """A tuple of ints from a tuple/list of ints or an integer tensor (0-d or 1-d)."""
    if isinstance(value, Tensor):
        if value.dtype.is_floating_point or value.dtype.is_complex or value.ndim > 1:
            raise RuntimeError(f"{name} must be a 1-d tensor of integers, got {value.dtype} of shape "
                               f"{tuple(value.shape)}")
        return tuple(int(v) for v in value.reshape(-1).tolist())
    if isinstance(value, (tuple, list)):
        try:
            return tuple(operator.index(v) for v in value)  # ints, NumPy integers
        except TypeError:
            pass
    raise TypeError(f"ctc_loss(): argument '{name}' must be tuple of ints or Tensor, not {type(value).__name__}")


def _check(log_probs, targets, input_lengths, target_lengths, blank):
    T, n, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for lengths, name in ((input_lengths, "input_lengths"), (target_lengths, "target_lengths")):
        if len(lengths) != n:
            raise RuntimeError(f"{name} must be of size batch_size")
        low = min(lengths, default=0)
        if low < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {low}{_CHECKING}")
    if max(input_lengths, default=0) > T:
        raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value "
                           f"{max(input_lengths)}{_CHECKING}")
    if targets.ndim == 1:
        total = sum(target_lengths)
        if targets.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets'{_CHECKING}")
    elif targets.ndim == 2 and targets.shape[0] == n:
        longest = max(target_lengths, default=0)
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets'{_CHECKING}")
    else:
        raise RuntimeError(f"targets must be 1-d (concatenated) or ({n}, S) (padded), got shape "
                           f"{tuple(targets.shape)}")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The CTC loss: ``-log p(target | log_probs)`` summed over every alignment of the target
    to the input frames (Graves et al., ICML 2006).

    Shapes: ``log_probs`` (T, N, C) or unbatched (T, C), float32 or float64 log-probabilities
    (``log_softmax`` over C); ``targets`` (N, S) padded or 1-d (sum(target_lengths),)
    concatenated class indices (any numeric dtype, never ``blank``); ``input_lengths`` and
    ``target_lengths`` tuples/lists of N ints or integer tensors (0-d when unbatched).
    Result: (N,) with ``reduction='none'`` (0-d unbatched), else a scalar: 'sum', or 'mean'
    (each loss divided by its target length, at least 1, then averaged over the batch).

    A target no alignment fits (too long for its input) has loss +inf and a nan gradient;
    ``zero_infinity=True`` gives 0 and a zero gradient there. The gradient w.r.t.
    ``log_probs`` is PyTorch's (see :mod:`ember._ops.ctc`).

    Raises RuntimeError for a ``blank`` outside [0, C), lengths of another count than N,
    negative lengths, an input length above T, targets too short for their lengths, an
    empty ``log_probs`` or one of another rank; NotImplementedError for dtypes other than
    float32/float64; TypeError for lengths that are neither ints nor tensors; ValueError for
    an unknown ``reduction``.
    """
    check_reduction(reduction)
    tensors = isinstance(input_lengths, Tensor), isinstance(target_lengths, Tensor)
    if tensors[0] != tensors[1]:
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be tuples of ints or both "
                        "Tensors")
    input_lengths = _lengths(input_lengths, "input_lengths")
    target_lengths = _lengths(target_lengths, "target_lengths")
    batched = log_probs.ndim == 3
    if not batched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for "
                           f"argument #1 'log_probs'{_CHECKING}")
    if log_probs.dtype not in (_dtype.float32, _dtype.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{_type_name(log_probs.dtype)}'")
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    _check(log_probs, targets, input_lengths, target_lengths, blank)
    loss, _ = apply(CtcLoss, log_probs, targets, input_lengths=input_lengths, target_lengths=target_lengths,
                    blank=blank, zero_infinity=bool(zero_infinity))
    if zero_infinity:
        loss = where(loss == float("inf"), zeros_like(loss), loss)
    if reduction == "mean":
        return (loss / tensor([max(length, 1) for length in target_lengths], dtype=loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss.squeeze(0)
