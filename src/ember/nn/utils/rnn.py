"""Variable-length sequences for the recurrent layers: :class:`PackedSequence` and the
functions that pack, pad and unpad (https://pytorch.org/docs/stable/nn.html#utilities,
``torch.nn.utils.rnn``).

Shapes: L the longest length, B the number of sequences, ``*`` any trailing dims. A packed
sequence stores the rows of all sequences time step by time step, each step listing the
sequences still running, longest first: ``data`` (sum of lengths, *) and ``batch_sizes`` (L,)
with ``batch_sizes[t]`` the number of sequences longer than t. Packing and padding are ops
(:mod:`ember._ops.rnn`), so gradients flow through them.
"""
from collections import namedtuple

from ... import _dtype
from ..._creation import arange, as_tensor
from ..._ops.join import stack
from ..._ops.sort import sort
from ..._ops.core import apply
from ..._ops.rnn import PackPadded, PadPacked
from ..._tensor import Tensor
from .. import functional as F

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                   "unsorted_indices"])):
    """A batch of variable-length sequences in packed form; the recurrent layers accept it as
    input and return their output in it. Make one with :func:`pack_padded_sequence` or
    :func:`pack_sequence`, not by hand.

    Fields: ``data`` (sum of lengths, *); ``batch_sizes`` (L,) int64 on the CPU;
    ``sorted_indices`` (B,) int64, the order in which the sequences were packed (longest
    first), and ``unsorted_indices`` its inverse, both None when the input was already sorted.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.PackedSequence.html
    """
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            # PyTorch also accepts PackedSequence((data, batch_sizes), sorted_indices=...).
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data`` converted as by ``Tensor.to``; the index tensors follow ``data``'s device,
        ``batch_sizes`` stays on the CPU. Returns ``self`` when ``data`` is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cuda(self, *args, **kwargs):
        """Raises, as ``Tensor.cuda`` does: ember has no CUDA device."""
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        """This sequence with its tensors on the CPU (itself, as they are)."""
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        """This sequence with ``data`` cast to float64 (the index tensors unchanged)."""
        return self.to(dtype=_dtype.float64)

    def float(self):
        """This sequence with ``data`` cast to float32."""
        return self.to(dtype=_dtype.float32)

    def half(self):
        """This sequence with ``data`` cast to float16."""
        return self.to(dtype=_dtype.float16)

    def long(self):
        """This sequence with ``data`` cast to int64."""
        return self.to(dtype=_dtype.int64)

    def int(self):
        """This sequence with ``data`` cast to int32."""
        return self.to(dtype=_dtype.int32)

    def short(self):
        """This sequence with ``data`` cast to int16."""
        return self.to(dtype=_dtype.int16)

    def char(self):
        """This sequence with ``data`` cast to int8."""
        return self.to(dtype=_dtype.int8)

    def byte(self):
        """This sequence with ``data`` cast to uint8."""
        return self.to(dtype=_dtype.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        """Whether ``data`` is in pinned memory (never, on ember's CPU)."""
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None for None): ``out[permutation[i]] = i``."""
    if permutation is None:
        return None
    positions = arange(permutation.shape[0], device=permutation.device)
    return positions.new_empty(positions.shape).scatter_(0, permutation, positions)


def _lengths(lengths):
    """``lengths`` (a 1-D tensor or a sequence of numbers) as a new int64 tensor."""
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.ndim}D cpu Long tensor")
        return lengths.to(_dtype.int64, copy=True)
    return as_tensor(lengths, dtype=_dtype.float64).to(_dtype.int64).reshape(-1)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch of sequences.

    Args:
        input: (L, B, *) padded sequences, or (B, L, *) when ``batch_first``.
        lengths: (B,) the length of each sequence (list or CPU tensor).
        batch_first: the layout of ``input``.
        enforce_sorted: if True, ``lengths`` must be in decreasing order (as ONNX export
            needs); if False the sequences are sorted here and ``sorted_indices`` records it.

    Returns a :class:`PackedSequence`. Raises RuntimeError when ``lengths`` is unsorted with
    ``enforce_sorted``, has a length <= 0 or longer than L, or does not have B entries.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pack_padded_sequence.html

    Example::

        >>> import ember
        >>> from ember.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
        >>> padded = ember.tensor([[1, 2, 3], [4, 5, 0]])
        >>> packed = pack_padded_sequence(padded, [3, 2], batch_first=True)
        >>> packed.data.tolist(), packed.batch_sizes.tolist()
        ([1, 4, 2, 5, 3], [2, 2, 1])
        >>> pad_packed_sequence(packed, batch_first=True)[1].tolist()
        [3, 2]
    """
    lengths = _lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = sort(lengths, descending=True).indices
        lengths = lengths[order]
        sorted_indices = order.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    batch = input.shape[1]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if bool((lengths[1:] > lengths[:-1]).any()):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                           "is True. You can pass `enforce_sorted=False` to pack_padded_sequence "
                           "and/or pack_sequence to sidestep this requirement if you do not need "
                           "ONNX exportability.")
    if batch and int(lengths[-1]) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in "
                           "'lengths' that is <= 0")
    steps = int(lengths[0]) if batch else 0
    if steps > input.shape[0]:
        raise RuntimeError(f"Expected all lengths to be at most the padded length {input.shape[0]}, "
                           f"but got a length of {steps}")
    batch_sizes = (lengths.unsqueeze(0) > arange(steps).unsqueeze(1)).sum(1)
    data = apply(PackPadded, input, batch_sizes=tuple(batch_sizes.tolist()))
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a packed batch back into a tensor: the inverse of :func:`pack_padded_sequence`.

    Args:
        sequence: a :class:`PackedSequence`.
        batch_first: return (B, L, *) instead of (L, B, *).
        padding_value: the value of the padded positions.
        total_length: pad to this length instead of the longest (ValueError if shorter).

    Returns ``(padded, lengths)``: the padded tensor, in the sequences' original order, and
    (B,) int64 lengths. Source:
    https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pad_packed_sequence.html
    """
    batch_sizes = sequence.batch_sizes.to(_dtype.int64)
    length = len(batch_sizes)
    if total_length is not None:
        if total_length < length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {length}")
        length = total_length
    batch = int(batch_sizes[0])
    padded = apply(PadPacked, sequence.data, batch_sizes=tuple(batch_sizes.tolist()),
                   batch=batch, total_length=length, padding_value=padding_value)
    lengths = (batch_sizes.unsqueeze(1) > arange(batch).unsqueeze(0)).sum(0)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of different lengths, padding each to the longest.

    Args:
        sequences: tensors (L_i, *) with the same trailing dims (or a tensor, read as its
            rows).
        batch_first: return (B, L, *) instead of (L, B, *).
        padding_value: the value of the padded positions.
        padding_side: "right" pads after each sequence, "left" before.

    Raises RuntimeError for an empty list or an unknown ``padding_side``. Source:
    https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pad_sequence.html
    """
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            # F.pad lists (before, after) pairs from the last dim: the first dim's pair is last.
            pair = [0, missing] if padding_side == "right" else [missing, 0]
            s = F.pad(s, [0, 0] * (s.ndim - 1) + pair, value=padding_value)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences (L_i, *) of a padded batch, each cut to its length; the inverse
    of :func:`pad_sequence`. Unlike PyTorch's, it leaves ``padded_sequences`` untransposed.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.unpad_sequence.html
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lengths = _lengths(lengths).tolist()
    if len(lengths) != padded_sequences.shape[0]:
        raise ValueError(f"zip() argument 2 is {'shorter' if len(lengths) < padded_sequences.shape[0] else 'longer'} "
                         "than argument 1")
    return [padded_sequences[i, :n] for i, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences (L_i, *); with ``enforce_sorted`` they must come longest
    first. Equivalent to ``pack_padded_sequence(pad_sequence(sequences), lengths)``. Source:
    https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pack_sequence.html
    """
    lengths = as_tensor([v.shape[0] for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences (L_i, *) in a :class:`PackedSequence`, in their original order;
    the inverse of :func:`pack_sequence`. Source:
    https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.unpack_sequence.html
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
