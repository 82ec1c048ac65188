"""``cond(pred, true_fn, false_fn, operands)``: a data-dependent branch (torch.cond)."""
from .._tensor import Tensor
from .utils import as_tuple_of_operands

__all__ = ["cond"]


def cond(pred, true_fn, false_fn, operands=()):
    """Return ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    Args:
        pred: a Python bool, or a tensor of one element (of any shape) read as a bool.
        true_fn, false_fn: callables taking ``*operands`` and returning a (nested) tuple, list
            or dict of tensors with the same structure, shapes and dtypes as each other.
        operands: a tuple or list of inputs to the branch.

    Gradients flow through the taken branch. Eagerly only the taken branch runs, so its
    Python side effects happen once; the compiler (which traces both) checks that the
    branches agree.

    Raises:
        RuntimeError: ``pred`` is a tensor of more than one element, or not a bool/tensor;
            ``operands`` is not a tuple or list.

    Source: https://pytorch.org/docs/stable/generated/torch.cond.html
    """
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred!r}.")
    if not (callable(true_fn) and callable(false_fn)):
        raise RuntimeError("Expect both branches to be callable.")
    operands = as_tuple_of_operands(operands, "cond")
    return (true_fn if pred else false_fn)(*operands)
