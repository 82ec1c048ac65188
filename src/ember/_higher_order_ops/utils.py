"""What the control-flow operators share: flattening their (nested) operands and outputs,
checking that two structures carry tensors of the same metadata, that a branch run eagerly
left its operands unwritten, which tensors a branch reads, and zero gradients for them."""
import threading

from .._creation import zeros
from .._ops import core as _core
from .._tensor import Tensor
from ..autograd.function import Function
from ..compiler.capture import flatten, skeleton, unflatten
from ..compiler.exc import UncapturedHigherOrderOpError

__all__ = ["flatten", "skeleton", "unflatten", "check_same_meta", "as_tuple_of_operands", "call_unmutated",
           "call_reading", "with_zero_grads"]


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


class _Reads:
    """An observer of op dispatch (``ember._ops.core.OBSERVERS``) collecting the tensors its ops
    read that were made before it started: operands, closure tensors, module parameters."""

    def __init__(self):
        self.thread, self.made, self.read = threading.get_ident(), set(), {}

    def op_enter(self, op, inputs, attrs):
        if threading.get_ident() == self.thread:
            for x in inputs:
                if isinstance(x, Tensor) and id(x) not in self.made:
                    self.read.setdefault(id(x), x)

    def op_exit(self, op, inputs, attrs, output):
        for o in output if isinstance(output, tuple) else (output,):
            if isinstance(o, Tensor):
                self.made.add(id(o))

    def node_enter(self, node):
        pass

    def node_exit(self, node):
        pass


def call_reading(fn, operands, what):
    """:func:`call_unmutated`, and the tensors made outside ``fn`` that its ops read."""
    reads = _Reads()
    _core.OBSERVERS.append(reads)
    try:
        out = call_unmutated(fn, operands, what)
    finally:
        _core.OBSERVERS.remove(reads)
    return out, list(reads.read.values())


class _ZeroGrads(Function):
    """The identity on ``outs``, whose backward also gives zeros to ``extras``: tensors a branch
    not taken reads get a zero gradient, not None, as torch.cond's (its autograd node takes
    the operands and every tensor either branch reads)."""

    @staticmethod
    def forward(ctx, n, *tensors):
        ctx.extras = [(t.shape, t.dtype) for t in tensors[n:]]
        return tensors[:n]

    @staticmethod
    def backward(ctx, *grads):
        return (None, *grads, *[zeros(shape, dtype=dtype) for shape, dtype in ctx.extras])


def with_zero_grads(out, extras):
    """``out`` (a nested structure of tensors) joined to ``extras`` by :class:`_ZeroGrads`, when
    one of ``extras`` requires grad."""
    extras = [t for t in extras if t.requires_grad]
    if not extras:
        return out
    tensors = flatten(out)
    joined = _ZeroGrads.apply(len(tensors), *tensors, *extras)
    return unflatten(skeleton(out), iter(joined[:len(tensors)]))
