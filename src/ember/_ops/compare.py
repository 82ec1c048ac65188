"""Comparisons, logic and bit operations: each public function, then its op entry.

Their results are bool (or integer, for bit operations) and carry no gradient, so each entry
is one row made by :func:`predicate`: a name, a kernel and the dtype rule. The PyTorch
page of each is ``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
import builtins
import numbers
import operator
import sys

import numpy as np

from .args import tensor_args, tensor_input, with_out
from .. import _dtype
from .._tensor import Tensor
from .._backend import is_floating as _is_floating, kernel as _kernel, namespace
from .core import _NAMES, Op, apply, elementwise_rule
from .parser import parsed


def predicate(name, kernel, *, promote="promote", rule=None, complex_error=None):
    """A new op entry ``name`` without a gradient: ``kernel`` on the (promoted) arrays, with a
    bool result of the broadcast shape unless another shape ``rule`` is given; ``complex_error``
    as :class:`~.core.Op`'s."""
    module = sys._getframe(1).f_globals["__name__"]  # the family file defining it, as namedtuple's
    return type(name, (Op,), {"promote": promote, "differentiable": False,
                              "forward": staticmethod(kernel),
                              "infer": classmethod(rule or _truth_rule), "__module__": module,
                              "complex_error": complex_error, "pointwise": rule in (None, elementwise_rule)})


def _truth_rule(op, *inputs, **attrs):
    return elementwise_rule(op, *inputs)[0], _dtype.bool


def _integral_only(kernel, kernel_name):
    """``kernel`` refusing floating-point and complex operands, as PyTorch's bitwise kernels do."""
    def checked(*arrays):
        for a in arrays:
            kind = a.dtype if hasattr(a, "dtype") else np.result_type(a)  # (a Python number)
            if _is_floating(kind) or kind.kind == "c":
                raise NotImplementedError(
                    f"\"{kernel_name}\" not implemented for '{_NAMES[kind.name]}'")
        return kernel(*arrays)
    return checked


# ---- comparisons (broadcasting, after type promotion) -------------------------------------------
_OPERANDS = (Tensor, numbers.Number, np.bool_, np.ndarray)  # (a str, None, a list: torch's TypeError)
_COMMON = {Tensor, int, float, bool}  # (checked first: an ABC's isinstance costs a few hundred ns)


def _comparable(name, input, other):
    """TypeError unless ``input`` is a Tensor and ``other`` a Tensor or a number (the parser
    wrapping each comparison words it as torch's)."""
    tensor_input(name, input, other)
    if type(other) not in _COMMON and not isinstance(other, _OPERANDS):
        raise TypeError(f"{name}(): 'other' must be a Tensor or a number, not {type(other).__name__}")


def operator_form(comparison):
    """``Tensor.__eq__`` and the other comparison operators: NotImplemented for an operand torch's
    comparisons refuse, so that Python answers ``x == 'a'`` with False and ``x < 'a'`` with its
    TypeError, as for torch's tensors; a NumPy array too but for ``==`` (``x != nd`` is then
    Python's identity test, True; ``x < nd`` its TypeError)."""
    operands = _OPERANDS if comparison.__name__ == "eq" else _OPERANDS[:-1]

    def compare(self, other):
        if type(other) in _COMMON or isinstance(other, operands):
            return comparison(self, other)
        return NotImplemented
    compare.__name__ = compare.__qualname__ = comparison.__name__
    compare.__doc__ = comparison.__doc__
    return compare


@parsed
def eq(input, other, *, out=None):
    """``input == other`` elementwise, as bool; TypeError when ``input`` is a number."""
    _comparable("eq", input, other)
    return with_out(apply(Eq, input, other), out)


Eq = predicate("Eq", operator.eq)


@parsed
def ne(input, other, *, out=None):
    """``input != other`` elementwise, as bool; TypeError when ``input`` is a number."""
    _comparable("ne", input, other)
    return with_out(apply(Ne, input, other), out)


Ne = predicate("Ne", operator.ne)
not_equal = parsed(ne.__wrapped__, "not_equal")


@parsed
def lt(input, other, *, out=None):
    """``input < other`` elementwise, as bool; TypeError when ``input`` is a number."""
    _comparable("lt", input, other)
    return with_out(apply(Lt, input, other), out)


Lt = predicate("Lt", operator.lt, complex_error=(NotImplementedError, "\"lt_cpu\" not implemented for '{T}'"))
less = parsed(lt.__wrapped__, "less")


@parsed
def le(input, other, *, out=None):
    """``input <= other`` elementwise, as bool; TypeError when ``input`` is a number."""
    _comparable("le", input, other)
    return with_out(apply(Le, input, other), out)


Le = predicate("Le", operator.le, complex_error=(NotImplementedError, "\"le_cpu\" not implemented for '{T}'"))
less_equal = parsed(le.__wrapped__, "less_equal")


@parsed
def gt(input, other, *, out=None):
    """``input > other`` elementwise, as bool; TypeError when ``input`` is a number."""
    _comparable("gt", input, other)
    return with_out(apply(Gt, input, other), out)


Gt = predicate("Gt", operator.gt, complex_error=(NotImplementedError, "\"gt_cpu\" not implemented for '{T}'"))
greater = parsed(gt.__wrapped__, "greater")


@parsed
def ge(input, other, *, out=None):
    """``input >= other`` elementwise, as bool; TypeError when ``input`` is a number."""
    _comparable("ge", input, other)
    return with_out(apply(Ge, input, other), out)


Ge = predicate("Ge", operator.ge, complex_error=(NotImplementedError, "\"ge_cpu\" not implemented for '{T}'"))
greater_equal = parsed(ge.__wrapped__, "greater_equal")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise, as bool; TypeError unless both
    are tensors."""
    tensor_args("isclose", input, other)
    return apply(IsClose, input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


IsClose = predicate("IsClose", _kernel("isclose"))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when ``isclose`` holds everywhere (a Python bool)."""
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """True when both have the same shape and elements (a Python bool); TypeError for an operand no
    tensor (a NumPy array)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args("equal", input, other)
    return tuple(input.shape) == tuple(other.shape) and builtins.bool((input == other).all())


# ---- truth values of any dtype -------------------------------------------------------------------
def logical_not(input, *, out=None):
    """Elementwise NOT of truth values, as bool."""
    return with_out(apply(LogicalNot, input), out)


LogicalNot = predicate("LogicalNot", _kernel("logical_not"), promote=None)


def logical_and(input, other, *, out=None):
    """Elementwise AND of truth values, as bool; TypeError for a Python number."""
    tensor_args("logical_and", input, other)
    return with_out(apply(LogicalAnd, input, other), out)


LogicalAnd = predicate("LogicalAnd", _kernel("logical_and"), promote=None)


def logical_or(input, other, *, out=None):
    """Elementwise OR of truth values, as bool; TypeError for a Python number."""
    tensor_args("logical_or", input, other)
    return with_out(apply(LogicalOr, input, other), out)


LogicalOr = predicate("LogicalOr", _kernel("logical_or"), promote=None)


def logical_xor(input, other, *, out=None):
    """Elementwise XOR of truth values, as bool; TypeError for a Python number."""
    tensor_args("logical_xor", input, other)
    return with_out(apply(LogicalXor, input, other), out)


LogicalXor = predicate("LogicalXor", _kernel("logical_xor"), promote=None)


# ---- bits of integer and bool tensors (NotImplementedError for floating point) -------------------
def bitwise_not(input, *, out=None):
    """Bitwise NOT (logical NOT for bool)."""
    return with_out(apply(BitwiseNot, input), out)


BitwiseNot = predicate("BitwiseNot", _integral_only(_kernel("invert"), "bitwise_not_cpu"),
                         promote=None, rule=elementwise_rule,
                         complex_error=(NotImplementedError, "\"bitwise_not_cpu\" not implemented for '{T}'"))


def bitwise_and(input, other, *, out=None):
    """Bitwise AND."""
    return with_out(apply(BitwiseAnd, input, other), out)


BitwiseAnd = predicate("BitwiseAnd", _integral_only(_kernel("bitwise_and"), "bitwise_and_cpu"),
                         rule=elementwise_rule)


def bitwise_or(input, other, *, out=None):
    """Bitwise OR."""
    return with_out(apply(BitwiseOr, input, other), out)


BitwiseOr = predicate("BitwiseOr", _integral_only(_kernel("bitwise_or"), "bitwise_or_cpu"),
                        rule=elementwise_rule)


def bitwise_xor(input, other, *, out=None):
    """Bitwise XOR."""
    return with_out(apply(BitwiseXor, input, other), out)


BitwiseXor = predicate("BitwiseXor", _integral_only(_kernel("bitwise_xor"), "bitwise_xor_cpu"),
                         rule=elementwise_rule)


def bitwise_left_shift(input, other, *, out=None):
    """``input << other``: bits moved left, zeros shifted in; a shift below zero or of at
    least the bit width gives 0. NotImplementedError for floating-point or two bool operands."""
    return with_out(apply(BitwiseLeftShift, input, other), out)


def bitwise_right_shift(input, other, *, out=None):
    """``input >> other``: bits moved right, the sign shifted in; a shift below zero or of at
    least the bit width gives -1 for negative elements and 0 otherwise."""
    return with_out(apply(BitwiseRightShift, input, other), out)


def _shift(name, kernel_name):
    """The shift ``xp.<name>`` with PyTorch's result for shifts outside [0, bits), where C (and
    NumPy) leave the result undefined."""
    def shifted(a, b):
        xp = namespace(a, b)
        both = np.result_type(a, b)  # (a Python int shifted by a float tensor: Float)
        dtype = a.dtype if hasattr(a, "dtype") else both  # (a Python number: False >> int32 is int32)
        if both.kind not in "iu":
            raise NotImplementedError(
                f"\"{kernel_name}\" not implemented for '{_NAMES[both.name]}'")
        inside = (b >= 0) & (b < dtype.itemsize * 8)
        spilled = 0 if name == "left_shift" else xp.where(a < 0, -1, 0)
        return xp.where(inside, getattr(xp, name)(a, xp.where(inside, b, 0)), spilled).astype(dtype)
    return shifted


BitwiseLeftShift = predicate("BitwiseLeftShift", _shift("left_shift", "lshift_cpu"),
                             rule=elementwise_rule)
BitwiseRightShift = predicate("BitwiseRightShift", _shift("right_shift", "rshift_cpu"),
                              rule=elementwise_rule)


# ---- floating-point classes ----------------------------------------------------------------------
def isnan(input, *, out=None):
    """True where the element is NaN."""
    return with_out(apply(IsNan, input), out)


IsNan = predicate("IsNan", _kernel("isnan"), promote=None)


def isinf(input, *, out=None):
    """True where the element is +inf or -inf."""
    return with_out(apply(IsInf, input), out)


IsInf = predicate("IsInf", _kernel("isinf"), promote=None)


def isfinite(input, *, out=None):
    """True where the element is neither inf nor NaN."""
    return with_out(apply(IsFinite, input), out)


IsFinite = predicate("IsFinite", _kernel("isfinite"), promote=None)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an entry of ``elements`` is among ``test_elements`` (either may be a number),
    a bool tensor shaped like ``elements`` (https://pytorch.org/docs/stable/generated/torch.isin.html)."""
    return apply(IsIn, elements, test_elements, invert=invert)


def _first_shape_rule(op, elements, test_elements, **attrs):
    return tuple(getattr(elements, "shape", ())), _dtype.bool


def _isin(a, b, invert=False):
    xp = namespace(a, b)
    return xp.asarray(xp.isin(a, b, invert=invert))


IsIn = predicate("IsIn", _isin, rule=_first_shape_rule)
