"""What the control-flow operators share: flattening their (nested) operands and outputs,
checking that two structures carry tensors of the same metadata, that a branch run eagerly
left its operands unwritten, which tensors a branch reads, and zero gradients for them."""
import threading
import weakref

from .._creation import zeros
from .._ops import core as _core
from .._random import get_rng_state, set_rng_state
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..compiler.capture import flatten, skeleton, unflatten
from ..compiler.exc import UncapturedHigherOrderOpError
from ..compiler.hop import refuse_step

__all__ = ["flatten", "skeleton", "unflatten", "check_same_meta", "as_tuple_of_operands", "call_unmutated",
           "reads_once", "function_key", "with_zero_grads"]


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
    steps = _Steps()
    _core.OBSERVERS.append(steps)
    try:
        out = fn(*operands)
    finally:
        _core.OBSERVERS.remove(steps)
    for i, (t, v) in enumerate(zip(tensors, versions)):
        if t._versions[0] != v:
            raise UncapturedHigherOrderOpError(f"{what} wrote into its input (operand tensor {i}): "
                                               f"control-flow operators do not support input mutation")
    return out


class _Steps(_core.Observer):
    """Refuses an optimizer's step inside a control-flow operator's function (:func:`.hop.refuse_step`)."""

    def __init__(self):
        self.thread = threading.get_ident()

    def op_enter(self, op, inputs, attrs):
        if threading.get_ident() == self.thread:
            refuse_step(op)


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


class _Reads(_core.Observer):
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


# (caller's key, operand metadata) -> what a function reads: operand positions, weak references
_READS = {}


def reads_once(key, fn, operands, what, check=None):
    """The tensors ``fn(*operands)`` reads (operands, parameters, closure tensors), found the
    first time per ``key`` and operand metadata: ``fn`` runs once without gradients on copies of
    the operands (the random stream restored), its output passed to ``check``. [] when it
    raises on these values (torch traces fake tensors: a branch not taken may fail on values).

    Raises:
        UncapturedHigherOrderOpError: ``fn`` writes into an operand (``what`` names it).
    """
    tensors = flatten(operands)
    key = (key, repr(skeleton(operands)), tuple((tuple(t.shape), t.dtype) for t in tensors))
    if key not in _READS:
        copies = [t.detach().clone() for t in tensors]
        reads, state = _Reads(), get_rng_state()
        _core.OBSERVERS.append(reads)
        try:
            with no_grad():
                out = call_unmutated(fn, unflatten(skeleton(operands), iter(copies)), what)
        except UncapturedHigherOrderOpError:
            raise
        except Exception:
            return []
        finally:
            _core.OBSERVERS.remove(reads)
            set_rng_state(state)
        if check is not None:
            check(out)
        position = {id(c): i for i, c in enumerate(copies)}
        if len(_READS) > 1024:
            _READS.clear()
        _READS[key] = [position[id(t)] if id(t) in position else weakref.ref(t) for t in reads.read.values()]
    return [tensors[r] if isinstance(r, int) else r() for r in _READS[key] if isinstance(r, int) or r() is not None]


def function_key(fn):
    """A function by its code and what it closes over (a lambda made anew per call is the
    same function)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return id(fn)
    return code, tuple(map(_cell_id, fn.__closure__ or ()))


def _cell_id(cell):
    try:
        return id(cell.cell_contents)
    except ValueError:  # an empty cell
        return None


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
    extras = list({id(t): t for t in extras if t.requires_grad}.values())
    if not extras:
        return out
    tensors = flatten(out)
    joined = _ZeroGrads.apply(len(tensors), *tensors, *extras)
    return unflatten(skeleton(out), iter(joined[:len(tensors)]))
