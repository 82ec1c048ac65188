"""What the user's frames do with traced ints and floats that no method of theirs sees
(:mod:`.traced_ints`), read from the frames' code and locals when they are called or return
(``side_effects``' hook): a float operator with a traced int on its right (``0.5 * k``), a
NumPy or ``math`` function reading a traced float, a read of ``type()``/``__class__``. Each is
a use: the argument is specialised."""
import dis
import math
from types import ModuleType

import numpy as np

from .._tensor import Tensor
from ..nn.modules.module import Module

from .traced_ints import TRACING, ConstFloat, FloatInt, TracedFloat, TracedInt

__all__ = ["note_frame", "note_float_operands", "operator_operands", "loaded_values", "note_type_reads", "note_math_calls", "note_numpy_calls"]


def note_frame(frame, called, returned):
    """The notes of a user frame ``called`` (:func:`note_type_reads`) or ``returned`` (:func:`note_float_operands`,
    :func:`note_numpy_calls`) while arguments are traced; reading the frame never breaks the user's code."""
    try:
        if called:
            note_type_reads(frame.f_code)
        elif returned:
            note_float_operands(frame)
            note_numpy_calls(frame)  # (a traced float: np.sqrt(lr))
    except Exception:
        pass


def note_numpy_calls(frame):
    """Notes a use of each traced float held by a local of the user's ``frame`` (returning)
    whose code loads a NumPy function (``np.sqrt``, a ufunc imported by name): NumPy reads a
    float subclass's value without its methods, and its result (``x * np.sqrt(lr)``) would be a
    constant of the graph."""
    floats = [v for v in frame.f_locals.values() if type(v) is TracedFloat and v.uses[0].active]
    if floats and any(callable(v) and (isinstance(v, np.ufunc) or (getattr(v, "__module__", None) or "").startswith(
            "numpy")) for v in loaded_values(frame)):
        for f in floats:
            for seen in f.uses:
                seen.append(("NumPy", f"{frame.f_code.co_filename}:{frame.f_lineno}: (a NumPy function)"))


def loaded_values(frame):
    """The values of the names and attribute chains ``frame``'s code loads (``np.sqrt``)."""
    instructions = _INSTRUCTIONS.get(frame.f_code)
    if instructions is None:
        instructions = _INSTRUCTIONS[frame.f_code] = list(dis.get_instructions(frame.f_code))
    for i, ins in enumerate(instructions):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF"):
            j = i + 1
            while j < len(instructions) and instructions[j].opname in ("LOAD_ATTR", "LOAD_METHOD"):
                j += 1
            value = _simple_value(instructions[i:j], frame)
            if value is not _UNKNOWN:
                yield value


_INSTRUCTIONS = {}  # code object -> its instructions


def note_math_calls(frame):
    """Notes a use of each traced float held by a local of the user's ``frame`` (or by a list,
    tuple, set or dict a local holds: ``statistics.fmean([lr, 1.0])`` sums ``data`` with
    ``math.fsum``), which calls a function of ``math`` or ``cmath``: it reads a float subclass's
    value without its methods."""
    held = [v for v in frame.f_locals.values() if isinstance(v, (list, tuple, set, dict))]
    items = [w for v in held for w in (v.values() if isinstance(v, dict) else v)] if held else []
    for value in (*frame.f_locals.values(), *items):
        if type(value) is TracedFloat and value.uses[0].active:
            for seen in value.uses:
                seen.append(("math", f"{frame.f_code.co_filename}:{frame.f_lineno}: (a math function)"))


# names whose reading sees a traced int's class, not int's (``type(k) is int``, ``k.__class__``):
# no method of the int runs, so a code reading one notes a use of every traced int
_TYPE_READS = {"type", "__class__"}


def note_type_reads(code):
    """Notes a use of each traced int being recorded where user code ``code`` (a frame's, on
    its call) calls the built-in ``type`` or reads ``.__class__``: ``type(k) is int`` would be
    False while recorded (a tensor's ``.type()`` is no such read)."""
    if _TYPE_READS.isdisjoint(code.co_names) or not _reads_type(code):
        return
    where = f"{code.co_filename}:{code.co_firstlineno}: {code.co_name} reads type() or __class__"
    for uses in TRACING:
        for seen in uses.values():
            if seen.active:
                seen.append(("type", where))


def _reads_type(code):
    found = _TYPE_READERS.get(code)
    if found is None:
        found = _TYPE_READERS[code] = any(
            i.argval == "type" and i.opname in ("LOAD_GLOBAL", "LOAD_NAME")
            or i.argval == "__class__" and i.opname in ("LOAD_ATTR", "LOAD_METHOD") for i in dis.get_instructions(code))
    return found


_TYPE_READERS = {}  # code object -> whether it reads type or __class__


def note_float_operands(frame):
    """Notes a use of each traced int held by a local of the user's ``frame`` (returning) that
    its code puts on the right of a float in an operator (``0.5 * k``, ``2.5 < k``,
    ``acc += k``, ``self.decay * (k + 1)``): the float's method reads the int's digits without
    calling the int's (see the module's docstring). So for an int Python made of a traced float
    (:class:`~.traced_ints.FloatInt`: ``0.5 * r``, ``0.5 * round(lr)``, ``2.5 < math.floor(lr)``).
    The left operand is read from the bytecode (a constant, a name, a name's attribute: its value
    now; a longer expression counts when it holds a float constant, a name holding a float, a
    true division or a power)."""
    traced = {name: value for name, value in frame.f_locals.items() if type(value) in _TRACED}
    code = frame.f_code
    for left, right, line, op in operator_operands(code):
        if left and left[0].opname == "LOAD_CONST" and isinstance(left[0].argval, ConstFloat) or op.argrepr in _TRACING_SIGNS \
                and type(_simple_value(left, frame)) in (TracedFloat, ConstFloat):
            continue  # (its operator noted it: float_constants.py; a traced float's, traced_ints.TracedFloat)
        names = [i.argval for i in right if i.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE")]
        hits = [traced[n] for n in names if n in traced and (type(traced[n]) is not TracedFloat or _to_int(right))]
        if type(_simple_value(right, frame)) in (TracedInt, FloatInt):  # (self.k, cfg.k)
            hits.append(_simple_value(right, frame))
        if hits and _holds_float(left, frame) and _span_kind(left, frame) not in ("tensor", "int") \
                and _span_kind(right, frame) != "float":  # (a float on the right: its own method runs; an int of
            # floats on the left, ``round(lr) // round(lr * 0.5 + 1)``: its own method)
            for seen in {id(u): u for hit in hits for u in (hit.uses if type(hit) is not TracedInt else (hit.uses,))}.values():
                if seen.active:
                    seen.append(("a float's operator", f"{code.co_filename}:{line}: (a float operand before the int)"))


_TRACED = (TracedInt, FloatInt, TracedFloat)
_TRACING_SIGNS = ("+", "-", "*", "+=", "-=", "*=")  # (a traced float's operators that trace a traced int)


def _span_kind(span, frame):
    """What the instructions ``span`` compute, followed on a stack of kinds: ``"tensor"``,
    ``"float"``, ``"int"`` or ``"?"``. Names holding tensors or numbers, number constants,
    ``math``'s constants, calls of ``round``/``abs`` or ``math``'s functions on numbers, and
    arithmetic: a tensor among the operands gives a tensor (``x * (k * 0.5)``, ``y -
    math.floor(lr) * 2``; ``x.shape[0] * 0.5`` and ``int(x) * 0.5`` are no such span), a true
    division or a float operand a float (``(k - 4) / 6``, ``1.0 + math.cos(lr)``), ints an int;
    a tensor's item (``x[0]``, ``x.max(0)[0]``, ``x.topk(2).values``: ``"tensors"`` of a method
    giving a tuple of tensors) or its ``.T`` a tensor."""
    stack = []
    for i in span:
        if i.opname in _NAMES or i.opname == "LOAD_CONST":
            if i.opname == "LOAD_GLOBAL" and i.arg & 1:  # (3.11: NULL + the callable)
                stack.append(None)
            stack.append(_kind(i.argval if i.opname == "LOAD_CONST" else _named(i.argval, frame)))
        elif i.opname in ("PUSH_NULL", "LOAD_ATTR", "LOAD_METHOD") and (i.opname == "PUSH_NULL" or stack):
            if i.opname == "PUSH_NULL":
                stack.append(None)
                continue
            owner, found = stack.pop(), getattr(math, i.argval, None)
            stack += [None] * (i.opname == "LOAD_METHOD") + [
                ("call", i.argval) if owner == "math" and callable(found) else _kind(found) if owner == "math"
                else _tensor_attribute(owner, i.argval, i.opname == "LOAD_METHOD")]
        elif i.opname == "BUILD_SLICE" and len(stack) >= i.arg:
            del stack[len(stack) - i.arg:]
            stack.append("?")
        elif i.opname == "BINARY_SUBSCR" and len(stack) >= 2:  # (``x[0]``, ``x.max(0)[0]``: a tensor)
            del stack[-1]
            stack.append("tensor" if stack.pop() in _TENSORS else "?")
        elif i.opname == "CALL" and len(stack) >= i.arg + 2:
            args, called = stack[len(stack) - i.arg:], stack[-i.arg - 1]
            del stack[-i.arg - 2:]
            stack.append(_called_kind(called, args))
        elif i.opname in ("BINARY_OP", "UNARY_NEGATIVE", "UNARY_POSITIVE") and len(stack) >= 1 + (i.opname == "BINARY_OP"):
            operands = {stack.pop() for _ in range(1 + (i.opname == "BINARY_OP"))}
            stack.append("tensor" if not operands.isdisjoint(_TENSORS) else "?" if not operands <= {"int", "float"} or i.argrepr in (
                "**", "**=") else "float" if "float" in operands or i.argrepr in ("/", "/=") else "int")
        elif i.opname not in ("PRECALL", "NOP"):  # (a NOP: a global's rewritten load, float_constants.py)
            return "?"
    return stack[0] if len(stack) == 1 and type(stack[0]) is str else "?"


def _called_kind(called, args):
    """The kind (:func:`_span_kind`) a call of ``round``, ``abs`` or a ``math`` function on numbers
    gives, or a Tensor method of :data:`_TENSOR_METHODS` (``(x * 0.5).sum() + n``: a tensor's operator)."""
    if type(called) is tuple and called[0] == "method":
        return called[1]
    if type(called) is not tuple or not args or not set(args) <= {"int", "float"}:
        return "?"
    if called[1] == "abs":
        return args[0]
    if called[1] in ("round", "floor", "ceil", "trunc"):
        return "int" if len(args) == 1 else "?"
    return "float" if called[1] in _FLOAT_MATH else "?"


# math's functions giving a float of numbers (by name: patch_math's tracing versions stand for some)
_FLOAT_MATH = {name for name in ("sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos",
                                                "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "pow",
                                                "fabs", "hypot", "radians", "degrees", "copysign", "fmod")}


# Tensor methods giving a Tensor whatever their arguments (not ``item``, ``max(dim)``, ``size``...)
_TENSOR_METHODS = {"sum", "mean", "prod", "exp", "log", "sqrt", "abs", "neg", "square", "relu", "sigmoid", "tanh",
                   "sin", "cos", "float", "double", "clone", "detach", "contiguous", "reshape", "view", "flatten",
                   "squeeze", "unsqueeze", "t", "transpose", "permute", "norm", "pow", "add", "sub", "mul", "div",
                   "matmul", "amax", "amin", "logsumexp", "softmax", "log_softmax", "cumsum", "var", "std", "clamp"}


# Tensor methods giving a Tensor or a tuple of them (``x.max(0)``: values and indices; ``x.max()``:
# a tensor), kind ``"tensors"``: an operator on one is a tensor's (or a TypeError), an item of one a tensor
_TUPLE_METHODS = {"max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "aminmax", "cummax",
                  "cummin", "split", "chunk", "unbind", "tensor_split", "var_mean", "std_mean"}
# a tensor's attributes that are tensors, and those of a ``"tensors"`` result (``x.topk(2).values``)
_TENSOR_ATTRIBUTES = {"tensor": {"T", "mT", "H", "mH", "data", "real", "imag"}, "tensors": {"values", "indices"}}
_TENSORS = ("tensor", "tensors")


# ember's (and ``ember.nn.functional``'s) functions giving a tensor (``F.relu(x) * 0.5 + n``)
_TENSOR_FUNCTIONS = _TENSOR_METHODS | {
    "gelu", "silu", "softplus", "linear", "dropout", "layer_norm", "mm", "bmm", "cat", "stack", "where", "conv1d",
    "conv2d", "embedding", "cross_entropy", "mse_loss", "normalize", "einsum", "zeros", "ones", "zeros_like",
    "ones_like", "full", "arange", "randn", "rand", "tensor", "as_tensor"}


def _tensor_attribute(owner, name, method):
    """The kind (:func:`_span_kind`) of attribute ``name`` of a value of kind ``owner`` (a method
    when ``method``: ``("method", kind of its result)``): of ember's modules (``("module", m)``:
    ``torch.relu``, ``F.gelu``), of an object's own attributes and submodules (``("object", o)``:
    ``self.fc``, read from its dictionaries: no property runs), of a tensor."""
    if type(owner) is tuple and owner[0] in ("module", "object"):
        found = vars(owner[1]).get(name, _UNKNOWN)
        for table in ("_modules", "_parameters", "_buffers") if found is _UNKNOWN and owner[0] == "object" else ():
            found = (vars(owner[1]).get(table) or {}).get(name, found)
        if owner[0] == "module" and callable(found) and not isinstance(found, ModuleType):
            return ("method", "tensor") if name in _TENSOR_FUNCTIONS else ("method", "tensors") \
                if name in _TUPLE_METHODS else "?"
        return "?" if found is _UNKNOWN else _kind(found)
    if owner == "tensor" and name in _TENSOR_METHODS:
        return ("method", "tensor")
    if owner == "tensor" and name in _TUPLE_METHODS:
        return ("method", "tensors")
    return "tensor" if not method and owner in _TENSORS and name in _TENSOR_ATTRIBUTES[owner] else "?"


def _kind(value):
    if isinstance(value, Tensor):
        return "tensor"
    if isinstance(value, ModuleType) and value.__name__.split(".")[0] == "ember":
        return ("module", value)
    if isinstance(value, Module):  # (ember's own layers give tensors, or tuples of them)
        return ("method", "tensors") if type(value).__module__.startswith("ember.nn.") else ("object", value)
    if type(value) in (bool, int, float) or isinstance(value, (TracedInt, TracedFloat, FloatInt, ConstFloat)):
        return "float" if isinstance(value, float) else "int"
    return "math" if value is math else ("call", value.__name__) if value is round or value is abs else "?"


_NAMES = ("LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME")


def _to_int(span):
    """Whether the instructions ``span`` may make an int of a float (``round(lr)``, ``math.floor(lr)``,
    ``int(lr)``: its load rewritten to a constant, ``float_constants.TRACING_INT``)."""
    return any(i.argval in ("round", "floor", "ceil", "trunc", "int") if i.opname in (
        "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD") else i.opname == "LOAD_CONST" and getattr(
        i.argval, "makes_int", False) is True for i in span)


_FLOATS = (float, complex, np.floating, np.complexfloating)
_OPERANDS = {}  # code object -> [(left instructions, right instructions, line, operator instruction)]


def operator_operands(code):
    """The two operands' instructions of each binary operator and comparison in ``code`` whose
    operands are straight-line loads (found by walking back over the stack effects), with the
    line and the operator's instruction."""
    found = _OPERANDS.get(code)
    if found is None:
        found = _OPERANDS[code] = []
        instructions, line = list(dis.get_instructions(code)), None
        for i, ins in enumerate(instructions):
            line = ins.positions.lineno if ins.positions and ins.positions.lineno else line
            if ins.opname in ("BINARY_OP", "COMPARE_OP"):
                spans = _spans_before(instructions, i, 2)
                if spans is not None:
                    found.append((spans[0], spans[1], line, ins))
    return found


def _spans_before(instructions, end, count):
    """The ``count`` expressions whose values the instruction at ``end`` pops, as lists of
    instructions (first operand first), or None where a jump or a target lies inside them."""
    spans, depth, j, start = [], 0, end - 1, end
    while j >= 0 and len(spans) < count:
        ins = instructions[j]
        if "JUMP" in ins.opname or ins.opname.startswith("RETURN"):  # (a conditional expression)
            return None
        try:
            depth += dis.stack_effect(ins.opcode, ins.arg) if ins.opcode >= dis.HAVE_ARGUMENT \
                else dis.stack_effect(ins.opcode)
        except ValueError:
            return None
        if depth == 1:
            spans.insert(0, instructions[j:start])
            start, depth = j, 0
        elif depth > 1:
            return None
        j -= 1
    return spans if len(spans) == count else None


def _holds_float(span, frame):
    """Whether the left operand ``span`` (instructions) is, or holds, a float."""
    value = _simple_value(span, frame)
    if value is not _UNKNOWN:
        return isinstance(value, _FLOATS)
    for ins in span:
        if ins.opname == "LOAD_CONST" and isinstance(ins.argval, _FLOATS) or ins.argrepr in ("/", "/=", "**"):
            return True  # (a true division or a power of ints may be a float too)
        if ins.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME") and \
                isinstance(_named(ins.argval, frame), _FLOATS):
            return True
    return False


_UNKNOWN = object()


def _simple_value(span, frame):
    """The value of a constant, a name or a name's attribute chain (read from instance and
    class dictionaries only: no property runs), or :data:`_UNKNOWN`."""
    if not span or span[0].opname not in ("LOAD_CONST", "LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME"):
        return _UNKNOWN
    value = span[0].argval if span[0].opname == "LOAD_CONST" else _named(span[0].argval, frame)
    for ins in span[1:]:
        if ins.opname != "LOAD_ATTR" or value is _UNKNOWN:
            return _UNKNOWN
        found = [vars(o)[ins.argval] for o in (value, *type(value).__mro__) if ins.argval in getattr(o, "__dict__", {})]
        value = found[0] if found else _UNKNOWN
    return value


def _named(name, frame):
    for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
        if name in scope:
            return scope[name]
    return _UNKNOWN
