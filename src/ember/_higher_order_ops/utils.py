"""What the control-flow operators share: flattening their (nested) operands and outputs, and
checking that two structures carry tensors of the same metadata."""
from ..compiler.capture import flatten, skeleton, unflatten

__all__ = ["flatten", "skeleton", "unflatten", "check_same_meta", "as_tuple_of_operands"]


def as_tuple_of_operands(operands, op):
    """``operands`` as a tuple; torch accepts a tuple or list of them."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"{op}: expected operands to be a tuple or list, got {type(operands).__name__}")
    return tuple(operands)


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
