"""What the control-flow operators share: flattening their (nested) operands and outputs,
checking that two structures carry tensors of the same metadata, and that a branch run eagerly
left its operands unwritten."""
from .._tensor import Tensor
from ..compiler.capture import flatten, skeleton, unflatten
from ..compiler.exc import UncapturedHigherOrderOpError

__all__ = ["flatten", "skeleton", "unflatten", "check_same_meta", "as_tuple_of_operands", "call_unmutated"]


def as_tuple_of_operands(operands, op):
    """``operands`` as a tuple; torch accepts a tuple or list of them."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"{op}: expected operands to be a tuple or list, got {type(operands).__name__}")
    return tuple(operands)


def call_unmutated(fn, operands, what):
    """``fn(*operands)``, raising UncapturedHigherOrderOpError if it wrote into one of the
    operands' tensors: torch refuses that eagerly too (its eager call traces the branch)."""
    tensors = [t for t in flatten(operands) if isinstance(t, Tensor)]
    versions = [t._versions[0] for t in tensors]
    out = fn(*operands)
    for i, (t, v) in enumerate(zip(tensors, versions)):
        if t._versions[0] != v:
            raise UncapturedHigherOrderOpError(f"{what} wrote into its input (operand tensor {i}): "
                                               f"control-flow operators do not support input mutation")
    return out


def check_same_meta(first, second, what, exc=RuntimeError):
    """Raise ``exc`` naming the first difference in structure, shape or dtype between two
    outputs (``what`` names them, e.g. ``"true_fn and false_fn"``)."""
    if skeleton(first) != skeleton(second):
        raise exc(f"{what} must return the same pytree structure, got {skeleton(first)!r} "
                  f"and {skeleton(second)!r}")
    for i, (a, b) in enumerate(zip(flatten(first), flatten(second))):
        if a.shape != b.shape:
            raise exc(f"{what} output {i} differ in shape: {tuple(a.shape)} vs {tuple(b.shape)}")
        if a.dtype is not b.dtype:
            raise exc(f"{what} output {i} differ in dtype: {a.dtype} vs {b.dtype}")
