"""Elementwise arithmetic of two (or three) tensors: each public function, then its op entry.

Binary ops broadcast and promote as PyTorch does; the engine sums each gradient back to its
input's shape. Derivatives follow PyTorch's ``tools/autograd/derivatives.yaml`` where it makes
a choice (ties of ``maximum`` split the gradient; ``clamp`` passes it where ``min <= x <= max``).
The floating-point functions of two tensors (``atan2``, ``hypot``, ``logaddexp``) are in ``pointwise_float``.
"""
import builtins
import math
import operator

import numpy as np

from .. import _backend, _dtype
from .._backend import kernel, namespace
from .._creation import check_narrow, full, real_if_fits
from .._tensor import Tensor
from .args import (invalid_combination, scalar_first, tensor_arg, tensor_args, tensor_input,
                   with_out)
from .core import Op, elementwise_rule, _type_name, apply, named
from .parser import _Signature, method_refusal, parsed, refusal


@parsed
def add(input, other, *args, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion; also ``input + other``
    (https://pytorch.org/docs/stable/generated/torch.add.html). RuntimeError naming the sizes
    when the shapes do not broadcast, or for a float ``alpha`` with an integer result. The
    deprecated ``add(alpha, other)`` works with torch's warning."""
    if args:
        alpha, (other,) = scalar_first("add", "alpha", (other,) + args, ("other",), alpha)
    if type(alpha) is not builtins.int or alpha != 1:
        _check_alpha(input, other, alpha)
    # (a float alpha keeps its op: 1.0 * b is b, and a compiled function's float argument stays a number)
    result = apply(Add, input, other) if not isinstance(alpha, builtins.float) and alpha == 1 else \
        apply(Add, input, other, alpha=alpha)
    return result if out is None else with_out(result, out)


class Add(Op):
    infer = classmethod(elementwise_rule)
    save_inputs = False

    @staticmethod
    def forward(a, b, alpha=1):
        if _complex(a, b):  # torch multiplies by a complex alpha: (1 + 0j) * (inf + 0j) is inf + nanj
            return a + complex(alpha) * b
        return a + b if alpha == 1 else a + _scaled(b, alpha)

    @staticmethod
    def backward(ctx, g):
        alpha = ctx.attrs.get("alpha", 1)
        return g, (g if alpha == 1 else g * alpha.conjugate())


def _complex(a, b):
    return getattr(a, "dtype", _NOT_COMPLEX).kind == "c" or getattr(b, "dtype", _NOT_COMPLEX).kind == "c"


_NOT_COMPLEX = np.dtype(float)


def _scaled(b, alpha):
    """``alpha * b``, with an int ``alpha`` wrapped to ``b``'s integer dtype as PyTorch casts it;
    a NumPy scalar ``alpha`` or a float subclass's counts as the Python number it holds (float32 stays float32)."""
    if isinstance(alpha, np.generic):
        alpha = alpha.item()
    elif isinstance(alpha, builtins.float):
        alpha = builtins.float.__float__(alpha)
    kind = getattr(b, "dtype", np.dtype(float)).kind
    if type(alpha) is builtins.int and kind in "iu":
        alpha = _backend.wrapped_integer(alpha, b.dtype)
    elif kind == "b":  # a bool result: alpha counts as True or False (torch: True + True * 2 is True)
        alpha = builtins.bool(alpha)
    return alpha * b


@parsed
def sub(input, other, *args, alpha=1, out=None):
    """``input - alpha * other``, also ``input - other``
    (https://pytorch.org/docs/stable/generated/torch.sub.html); RuntimeError when either
    operand is bool or the shapes do not broadcast. The deprecated ``sub(alpha, other)``
    works with torch's warning."""
    if args:
        alpha, (other,) = scalar_first("sub", "alpha", (other,) + args, ("other",), alpha)
    _check_sub(input, other)
    if type(alpha) is not builtins.int or alpha != 1:
        _check_alpha(input, other, alpha)
    # (a float alpha keeps its op: 1.0 * b is b, and a compiled function's float argument stays a number)
    result = apply(Sub, input, other) if not isinstance(alpha, builtins.float) and alpha == 1 else \
        apply(Sub, input, other, alpha=alpha)
    return result if out is None else with_out(result, out)


def _check_alpha(input, other, alpha):
    """PyTorch's checks of ``alpha`` against the result's dtype (alpha_check)."""
    dtype = _dtype.result_type(input, other)
    if isinstance(alpha, (builtins.bool, np.bool_)):
        if dtype is not _dtype.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, (builtins.float, np.floating)) and not dtype.is_inexact:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    elif isinstance(alpha, (builtins.complex, np.complexfloating)) and not dtype.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    real_if_fits(alpha, dtype)  # converted checked: int8 and 200, float32 and 1e39 raise
    check_narrow(alpha, dtype)


def _is_bool(x):
    return x.dtype is _dtype.bool if isinstance(x, Tensor) else isinstance(x, (builtins.bool, np.bool_))


def _check_sub(a, b):
    # Checked before promotion, which would turn a bool operand into an integer one.
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``; TypeError when ``input`` is a number."""
    if not isinstance(input, Tensor):
        raise TypeError(invalid_combination("rsub", (input, other), _RSUB_SIGNATURES))
    return sub(other, input, alpha=alpha)


_RSUB_SIGNATURES = (" * (Tensor input, Tensor other, *, Number alpha = 1)\n"
                    " * (Tensor input, Number other, Number alpha = 1)\n")


class Sub(Op):
    """``a - alpha * b``; the public functions reject bool operands before promotion."""
    infer = classmethod(elementwise_rule)
    save_inputs = False

    @staticmethod
    def forward(a, b, alpha=1):
        if _complex(a, b):  # a + (-alpha) * b, as torch computes it (see Add)
            return a + complex(-alpha) * b
        return a - b if alpha == 1 else a - _scaled(b, alpha)

    @staticmethod
    def backward(ctx, g):
        alpha = ctx.attrs.get("alpha", 1)
        return g, (-g if alpha == 1 else g * -alpha.conjugate())


@parsed
def mul(input, other, *, out=None):
    """``input * other``, broadcast and promoted (https://pytorch.org/docs/stable/generated/torch.mul.html)."""
    result = apply(Mul, input, other)
    return result if out is None else with_out(result, out)


multiply = mul


class Mul(Op):
    opmath = True
    infer = classmethod(elementwise_rule)
    grad_reads = ((1,), (0,))
    forward = staticmethod(operator.mul)

    @staticmethod
    def backward(ctx, g):
        # course:begin 02/mul-backward
        # hint: d(a*b)/da = b, d(a*b)/db = a: return (g * b, g * a), None where an input needs no gradient;
        # hint: ctx.input(i) is the i-th input; the engine sums broadcast gradients back to each input's shape
        need_a, need_b = ctx.needs_input_grad
        return (g * ctx.input(1) if need_a else None,
                g * ctx.input(0) if need_b else None)
        # course:end 02/mul-backward


def div(input, other, *, rounding_mode=None, out=None):
    """True division (float result, integers give the default float dtype), or rounded in the
    promoted dtype with ``rounding_mode`` "trunc" or "floor"
    (https://pytorch.org/docs/stable/generated/torch.div.html). RuntimeError for another
    rounding mode, or an integer division by zero when rounding."""
    if rounding_mode is None:
        result = apply(Div, input, other)
        return result if out is None else with_out(result, out)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    _refuse_bool(input, other, kernel_name=f"div_{rounding_mode}_cpu")
    if _is_int_zero_division(input, other):
        raise RuntimeError("ZeroDivisionError")
    return with_out(apply(DivRounded, input, other, rounding_mode=rounding_mode), out)


divide = true_divide = div


def floor_divide(input, other, *, out=None):
    """``div(input, other, rounding_mode="floor")`` (Python's ``//``)."""
    return div(input, other, rounding_mode="floor", out=out)


def _refuse_bool(input, *others, kernel_name):
    """NotImplementedError where ``input`` and ``others`` promote to bool, as PyTorch has no
    bool kernel for rounded division, remainders, powers and clamp (NumPy would compute in int8)."""
    if _dtype.result_type(input, *others) is _dtype.bool:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for 'Bool'")


def _is_int_zero_division(input, other):
    dt = _dtype.result_type(input, other)
    if dt.is_inexact:  # complex: the kernel's NotImplementedError comes first, as torch's
        return False
    if type(other) is builtins.int:  # wrapped to the integer dtype first: int32 // 2**40 divides by 0
        return _backend.wrapped_integer(other, dt.np) == 0
    d = other._data if isinstance(other, Tensor) else other
    return bool(namespace(d).any(namespace(d).asarray(d) == 0))


class Div(Op):
    opmath = True
    grad_reads = ((1,), (0, 1))
    infer = classmethod(elementwise_rule)
    promote = "float"
    forward = staticmethod(operator.truediv)

    @staticmethod
    def backward(ctx, g):
        # course:begin 02/div-backward
        # hint: d(a/b)/da = 1/b, d(a/b)/db = -a/b**2
        need_a, need_b = ctx.needs_input_grad
        b = ctx.input(1)
        # -g * ((a/b)/b) as torch groups it: no b*b to overflow, inf where torch's overflows
        return (g / b if need_a else None,
                -g * (ctx.input(0) / b / b) if need_b else None)
        # course:end 02/div-backward


class DivRounded(Op):
    """``div(a, b, rounding_mode="floor" | "trunc")`` in the promoted dtype; zero gradients (torch's ``grad * 0``)."""
    complex_error = (NotImplementedError, "\"div_floor_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    save_inputs = False
    opmath = True

    @staticmethod
    def forward(a, b, rounding_mode):
        xp = namespace(a, b)
        with np.errstate(all="ignore"):
            if rounding_mode == "floor":
                return a // b
            if _backend.is_floating(xp.result_type(a, b)):
                return xp.trunc(a / b)
            # Integer quotients stay exact: floor, then step towards zero for negative inexact ones.
            q, r = divmod(a, b)
            return q + ((r != 0) & ((xp.less(a, 0)) != xp.less(b, 0)))

    @staticmethod
    def backward(ctx, g):
        return g * 0, g * 0


def _div_rounded(a, b, mode):
    return apply(DivRounded, a, b, rounding_mode=mode)


def remainder(input, other, *, out=None):
    """Python's ``%``: ``input - floor(input / other) * other``, the sign of ``other``; RuntimeError
    for an integer division by zero
    (https://pytorch.org/docs/stable/generated/torch.remainder.html)."""
    _refuse_bool(input, other, kernel_name="remainder_cpu")
    if _is_int_zero_division(input, other):
        raise RuntimeError("ZeroDivisionError")
    return with_out(apply(Remainder, input, other), out)


class Remainder(Op):
    """Python's ``%``: the result takes the sign of the divisor; a zero, the dividend's (torch's
    fmod-based result: ``0 % -7`` is 0.0 and ``-2.5 % 0.5`` -0.0, NumPy's -0.0 and 0.0)."""
    complex_error = (NotImplementedError, "\"remainder_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    grad_reads = ((), (0, 1))  # (the dividend's gradient reads neither)

    @staticmethod
    def forward(a, b):
        r = a % b
        if not _backend.is_floating(r.dtype):
            return r
        xp, zero = namespace(r), r == 0
        if type(r) is not _backend.ndarray:  # (a NumPy scalar)
            return xp.where(zero, xp.copysign(r, a), r)
        if zero.any():
            xp.copysign(r, a, out=r, where=zero)
        return r

    @staticmethod
    def backward(ctx, g):
        return g, (-g * _div_rounded(ctx.input(0), ctx.input(1), "floor") if ctx.needs_input_grad[1] else None)


def fmod(input, other, *, out=None):
    """C's ``fmod``: ``input - trunc(input / other) * other``, the sign of ``input``; RuntimeError
    for an integer division by zero (https://pytorch.org/docs/stable/generated/torch.fmod.html);
    TypeError when ``input`` is a number."""
    tensor_input("fmod", input, other)
    _refuse_bool(input, other, kernel_name="fmod_cpu")
    if _is_int_zero_division(input, other):
        raise RuntimeError("ZeroDivisionError")
    return with_out(apply(Fmod, input, other), out)


class Fmod(Op):
    """C's ``fmod``: the result takes the sign of the dividend."""
    complex_error = (NotImplementedError, "\"fmod_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    grad_reads = ((), (0, 1))
    forward = staticmethod(kernel("fmod"))

    @staticmethod
    def backward(ctx, g):
        return g, (-g * _div_rounded(ctx.input(0), ctx.input(1), "trunc") if ctx.needs_input_grad[1] else None)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def pow(input, exponent, *, out=None):
    """``input ** exponent`` with broadcasting and promotion; ``input`` may be a number
    (https://pytorch.org/docs/stable/generated/torch.pow.html). RuntimeError for integers to
    negative integer powers."""
    if isinstance(exponent, Tensor):  # a bool tensor to a Python bool stays allowed, as in torch
        _refuse_bool(input, exponent, kernel_name="pow")
    if not isinstance(input, Tensor):
        if type(input) is np.ndarray:  # (``x ** nd`` takes one: an operator, numpy_operands.py)
            raise TypeError(refusal("pow", _POW_FORMS, (input, exponent), {}))
        dtype = _dtype.result_type(input, exponent) if isinstance(exponent, Tensor) else None
        if type(input) is builtins.int and dtype is not None and dtype.np.kind in "iu":
            input = full((), input, dtype=_dtype.int64).to(dtype)  # wraps, as PyTorch casts it
        elif isinstance(input, (builtins.float, np.floating)) and dtype is not None and dtype.is_floating_point and (
                type(input) is not builtins.float or _FLOAT32_MAX < abs(input) < math.inf):
            # unchecked, as PyTorch: ``1e39 ** x`` is inf (a compiled function's traced float: any value, one graph)
            input = full((), input, dtype=_dtype.float64).to(dtype)
        else:
            input = full((), input, dtype=dtype)
        return with_out(named(apply(Pow, input, exponent), "PowBackward2"), out)
    if type(exponent) is builtins.int and input.dtype.np.kind in "biu":
        if exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if input.dtype.np.kind != "b" and exponent > np.iinfo(input.dtype.np).max:
            # PyTorch casts the exponent to the tensor's dtype first
            raise RuntimeError(f"value cannot be converted to type {input.dtype.np.name}_t without overflow")
    _check_numbers(input, exponent, float32=False)
    return with_out(apply(Pow, input, exponent), out)


# torch's signatures of ``pow`` and ``float_power``
_POW_FORMS = [_Signature(f"{first}, *, Tensor out = None") for first in (
    "Tensor input, Tensor exponent", "Number self, Tensor exponent", "Tensor input, Number exponent")]


def float_power(input, exponent):
    """``pow`` computed in float64, or complex128 when either operand is complex
    (https://pytorch.org/docs/stable/generated/torch.float_power.html). TypeError for a NumPy array."""
    if type(input) is np.ndarray or type(exponent) is np.ndarray:
        raise TypeError(refusal("float_power", _POW_FORMS, (input, exponent), {}))
    input = tensor_arg(input)
    is_complex = input.dtype.is_complex or (exponent.dtype.is_complex if isinstance(exponent, Tensor)
                                            else isinstance(exponent, builtins.complex))
    dtype = _dtype.complex128 if is_complex else _dtype.float64
    return pow(input.to(dtype), exponent.to(dtype) if isinstance(exponent, Tensor) else exponent)


def _bfloat16_power(xp, a, b):
    """bfloat16 ``a ** b`` for the exponents torch's CPU kernel spells as products (3: ``a * a *
    a``, -2: ``1 / (a * a)``, each step rounded to bfloat16), where ``xp.power`` would round the
    float32 power once (PowKernel.cpp's ``pow_tensor_scalar_optimized_kernel``)."""
    square = a * a
    return square * a if b == 3 else 1 / square


def rsqrt_kernel(x):
    """``1 / sqrt(x)``; float16 and bfloat16 in float32, rounded once, as torch's (a 16-bit
    sqrt then a 16-bit division rounded twice: 30% of the results were 1 ulp off)."""
    xp = namespace(x)
    if x.dtype.itemsize == 2 and _backend.is_floating(x.dtype):
        return (1 / xp.sqrt(x.astype(np.float32))).astype(x.dtype)
    return 1 / xp.sqrt(x)


class Pow(Op):
    infer = classmethod(elementwise_rule)
    save_output = True

    @staticmethod
    def forward(a, b):
        xp = namespace(a, b)
        if a.dtype == np.bool_:  # bool ** a Python bool, the one bool power torch allows
            return xp.logical_or(a, not b)
        if getattr(b, "dtype", None) is not None and b.dtype.kind == "i" and (b < 0).any():
            # An integer tensor exponent below zero truncates as torch does: 1 stays 1, -1
            # alternates by parity, anything else becomes 0 (NumPy raises instead).
            small = xp.where(a == 1, 1, xp.where(a == -1, 1 - 2 * (b & 1), 0))
            with np.errstate(all="ignore"):
                return xp.where(b < 0, small, xp.power(a, xp.maximum(b, 0))).astype(b.dtype)
        # b = +-0.5: torch's sqrt and rsqrt (nan at -inf, -0.0 and -inf at -0.0, where C's pow
        # gives inf or 0, and 0 or inf), but for float16, which torch takes through C's pow
        root = type(b) is float and b in (0.5, -0.5) and _backend.is_floating(a.dtype) and a.dtype != np.float16
        with np.errstate(all="ignore"):
            if _backend.is_bfloat16(a.dtype) and type(b) in (int, float) and b in (3, -2):
                return _bfloat16_power(xp, a, b)
            if root:
                return xp.sqrt(a) if b > 0 else rsqrt_kernel(a)
            return xp.power(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)  # grouped as torch's formulas: nan and inf as torch's
        ga = gb = None
        if ctx.needs_input_grad[0]:
            if isinstance(b, (int, float, complex)):
                if type(b) is complex and isinstance(a, Tensor) and not a.dtype.is_complex:
                    # ctx conjugated b; a real a must be conjugated too, as a - 0j, for the
                    # power to be the conjugate of torch's on the branch cut (a < 0)
                    a = a.to(ctx.output.dtype).conj()
                # torch's constant zeros for a number 0 (a False exponent takes the formula)
                ga = g * (b * a ** (b - 1)) if b != 0 or type(b) is builtins.bool else g * 0
            else:
                ga = (g * (b * a ** (b - 1))).masked_fill(b == 0, 0)  # zero even where g is nan
        if ctx.needs_input_grad[1]:
            gb = g * (ctx.output * _log_of(a)).masked_fill((a == 0) & (b.real >= 0), 0)
        return ga, gb


def _log_of(a):
    return a.log() if isinstance(a, Tensor) else math.log(a) if a > 0 else float("nan")


@parsed
def maximum(input, other, *, out=None):
    """The elementwise larger of ``input`` and ``other`` (NaN propagates); ties split the
    gradient (https://pytorch.org/docs/stable/generated/torch.maximum.html). TypeError for a
    Python number (``clamp`` takes those)."""
    tensor_args("maximum", input, other)
    return with_out(apply(Maximum, input, other), out)


def minimum(input, other, *, out=None):
    """The elementwise smaller of ``input`` and ``other`` (NaN propagates); ties split the
    gradient (https://pytorch.org/docs/stable/generated/torch.minimum.html). TypeError for a
    Python number (``clamp`` takes those)."""
    tensor_args("minimum", input, other)
    return with_out(apply(Minimum, input, other), out)


def fmax(input, other):
    """``maximum`` that ignores NaN: the other value where one is NaN. The gradient goes
    whole to ``input`` where ``input >= other`` (ties too) or ``other`` is NaN, else to
    ``other``, as PyTorch's does (https://pytorch.org/docs/stable/generated/torch.fmax.html)."""
    tensor_args("fmax", input, other)
    return where((input >= other) | other.isnan(), input, other)


def fmin(input, other):
    """``minimum`` that ignores NaN: the other value where one is NaN; the gradient goes to
    ``input`` where ``input <= other`` or ``other`` is NaN, as in ``fmax``
    (https://pytorch.org/docs/stable/generated/torch.fmin.html)."""
    tensor_args("fmin", input, other)
    return where((input <= other) | other.isnan(), input, other)


class Maximum(Op):
    complex_error = (RuntimeError, "maximum not implemented for complex tensors.")
    infer = classmethod(elementwise_rule)
    forward = staticmethod(kernel("maximum"))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        return _minmax_grads(ctx, g, a < b, a > b, a == b)


class Minimum(Op):
    complex_error = (RuntimeError, "minimum not implemented for complex tensors.")
    infer = classmethod(elementwise_rule)
    forward = staticmethod(kernel("minimum"))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        return _minmax_grads(ctx, g, a > b, a < b, a == b)


def _minmax_grads(ctx, g, a_loses, b_loses, ties):
    """Ties split the gradient; a NaN (no comparison holds) passes it to both, as in PyTorch."""
    shared = apply(Where, ties, g * 0.5, g)
    zero = g.new_zeros(())
    return (apply(Where, a_loses, zero, shared) if ctx.needs_input_grad[0] else None,
            apply(Where, b_loses, zero, shared) if ctx.needs_input_grad[1] else None)


@parsed
def where(condition, input=None, other=None, *, out=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``; with one argument,
    ``nonzero(condition, as_tuple=True)`` (https://pytorch.org/docs/stable/generated/torch.where.html).
    TypeError in torch's words for what none of its signatures takes."""
    if input is None and other is None:
        return tensor_arg(condition).nonzero(as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError("where() takes a Tensor condition")  # (the parser words it)
    if condition.dtype is not _dtype.bool:
        if condition.dtype is _dtype.uint8:
            condition = condition.bool()
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {_type_name(condition.dtype)}")
    dt = _dtype.result_type(input, other)
    # a number converts to the result dtype as torch's checked conversion does (300 into uint8 raises)
    a = input.to(dt) if isinstance(input, Tensor) else real_if_fits(input, dt)
    b = other.to(dt) if isinstance(other, Tensor) else real_if_fits(other, dt)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = full((), a, dtype=dt)
    r = apply(Where, condition, a, b)
    return with_out(r if r.dtype is dt else r.to(dt), out)


def where_method(self, *args, **kwargs):
    """``Tensor.where(condition, other)``: ``where(condition, self, other)``; torch's TypeError, in
    its words, for a call neither of its signatures takes."""
    if len(args) == 2 and not kwargs:
        return where(args[0], self, args[1])
    message = method_refusal("where", args, kwargs)
    if message is not None:
        raise TypeError(message)
    values = dict(zip(("condition", "other"), args), **kwargs)
    return where(values["condition"], self, values["other"])


where_method.__name__ = where_method.__qualname__ = "where"


class Where(Op):
    """``where(condition, input, other)``; the condition gets no gradient."""
    promote = None
    pointwise = True
    grad_reads = ((), (0,), (0,))

    @classmethod
    def infer(cls, condition, input, other):
        """The broadcast shape, in the dtype of the values (the function has made them agree)."""
        values = input if isinstance(input, Tensor) else other
        return elementwise_rule(cls, condition, input, other)[0], values.dtype

    @staticmethod
    def forward(cond, a, b):
        return _backend.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        cond, zero = ctx.input(0), g.new_zeros(())
        return (None,
                apply(Where, cond, g, zero) if ctx.needs_input_grad[1] else None,
                apply(Where, cond, zero, g) if ctx.needs_input_grad[2] else None)


def _check_numbers(input, *numbers, float32=True):
    """RuntimeError where torch's kernel converts a number operand checked to the result's
    dtype: beyond float16's or bfloat16's largest finite (clamp's bounds, pow's exponent) or,
    with ``float32``, float32's or an integer dtype's (clamp; pow's exponent stays double)."""
    for number in numbers:
        if number is not None and not isinstance(number, Tensor):
            dtype = _dtype.result_type(input, number)
            check_narrow(number, dtype)
            if float32 and (dtype is _dtype.float32 or not dtype.is_inexact):
                real_if_fits(number, dtype)
