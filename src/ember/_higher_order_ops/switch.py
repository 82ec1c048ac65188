"""``switch(index, branches, operands)``: multi-way branching (PyTorch 2.14's torch.switch)."""
from .._tensor import Tensor
from .utils import as_tuple_of_operands

__all__ = ["switch"]


def switch(index, branches, operands=()):
    """Return ``branches[i](*operands)`` with ``i = min(max(index, 0), len(branches) - 1)``.

    An index past either end picks the nearest branch (7 of 3 branches picks the last, -3 the
    first), as XLA's ``Case`` does, so a computed index never fails at run time.

    Args:
        index: a Python int or a one-element integer tensor.
        branches: a non-empty tuple or list of callables taking ``*operands``; each returns a
            (nested) tuple, list or dict of tensors, ints or None.
        operands: a tuple or list of inputs to the branch.

    Gradients flow through the chosen branch.

    Raises:
        RuntimeError: ``branches`` is empty or holds a non-callable; ``index`` is a tensor of
            more than one element or of a floating dtype.

    Source: PyTorch 2.14, ``torch._higher_order_ops.switch``.
    """
    if not isinstance(branches, (tuple, list)) or not branches or not all(callable(b) for b in branches):
        raise RuntimeError("Expected branches to be a non-empty tuple or list of callables.")
    if isinstance(index, Tensor):
        if index.numel() != 1 or index.dtype.is_floating_point or index.dtype.is_complex:
            raise RuntimeError(f"Expected index to be an int or a single-element integer tensor, but got "
                               f"a tensor of shape {tuple(index.shape)} and dtype {index.dtype}.")
        index = int(index.item())
    elif not isinstance(index, int):
        raise RuntimeError(f"Expected index to be an int or a single-element integer tensor, but got {index!r}.")
    index = min(max(index, 0), len(branches) - 1)
    return branches[index](*as_tuple_of_operands(operands, "switch"))
