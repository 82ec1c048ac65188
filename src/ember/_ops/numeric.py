"""Elementwise ops on the representation of numbers: signs and exponents of floats
(``copysign``, ``ldexp``, ``nextafter``, ``signbit``, ``isposinf``, ``isneginf``), the step
``heaviside`` and the integer ``gcd`` and ``lcm``.

Each public function checks PyTorch's argument rules, then applies its entry. The PyTorch page
of each is ``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
import math

import numpy as np

from .. import _dtype
from .._backend import kernel, namespace
from .args import result_type, tensor_args, with_out
from .compare import predicate
from .core import _NAMES, Op, _type_name, apply, elementwise_rule, like_input
from .pointwise_binary import Where


# ---- signs and exponents ---------------------------------------------------------------------------
def copysign(input, other, *, out=None):
    """``|input|`` with the sign of ``other`` (a Tensor or a Python number), as a float tensor
    (integers promote to the default float). The gradient of ``input`` is ``g * out / input``
    (0 where ``input == 0``, PyTorch's choice); ``other`` gets a zero gradient."""
    tensor_args("copysign", input)
    return with_out(apply(Copysign, input, other), out)


class Copysign(Op):
    complex_error = (NotImplementedError, "\"copysign_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    promote = "float"
    save_output = True
    forward = staticmethod(kernel("copysign"))

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        ratio = apply(Where, x == 0, g.new_zeros(()), ctx.output / x)
        # other's gradient: zeros that depend on nothing (g * 0 would carry a nan of g back)
        return g * ratio, g.new_zeros(g.shape) if ctx.needs_input_grad[1] else None


def ldexp(input, other, *, out=None):
    """``input * 2 ** other`` as a float tensor (integers promote to the default float)."""
    tensor_args("ldexp", input, other)
    return with_out(apply(Ldexp, input, other), out)


class Ldexp(Op):
    """d/dx = 2 ** other (in ``other``'s dtype, so 0 for negative integer exponents, as in
    PyTorch); d/dother = out * ln 2."""
    infer = classmethod(elementwise_rule)
    promote = "float"
    save_output = True

    @staticmethod
    def forward(x, e):
        return x * namespace(x, e).exp2(e)

    @staticmethod
    def backward(ctx, g):
        return g * 2 ** ctx.input(1), g * ctx.output * math.log(2.0)


def nextafter(input, other, *, out=None):
    """The next float after ``input`` towards ``other`` (both floating-point tensors;
    NotImplementedError for integers). The gradient of ``input`` passes where
    ``input != other`` and ``other``'s is zero, as in PyTorch."""
    tensor_args("nextafter", input, other)
    dtype = _dtype.result_type(input, other)
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{_type_name(dtype)}'")
    return with_out(apply(Nextafter, input, other), out)


class Nextafter(Op):
    infer = classmethod(elementwise_rule)
    forward = staticmethod(kernel("nextafter"))

    @staticmethod
    def backward(ctx, g):
        return g * (ctx.input(0) != ctx.input(1)), g * 0


frexp_result = result_type("frexp", ["mantissa", "exponent"])


def frexp(input, *, out=None):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``: the mantissa in
    [0.5, 1) with the input's sign and dtype (0, inf and nan kept, exponent 0 there), the
    exponent int32. Derivative of the mantissa: ``grad / 2 ** exponent``. RuntimeError for
    integer, bool and complex input. Source: https://pytorch.org/docs/stable/generated/torch.frexp.html"""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    result = frexp_result(apply(Frexp, input), apply(FrexpExponent, input))
    if out is not None:
        for target, value in zip(out, result):
            with_out(value, target)
        return frexp_result(*out)
    return result


class Frexp(Op):
    infer = classmethod(like_input)
    promote = None

    @staticmethod
    def forward(x):
        return namespace(x).frexp(x)[0]

    @staticmethod
    def backward(ctx, g):
        return (g / 2.0 ** apply(FrexpExponent, ctx.input(0)).to(g.dtype),)


class FrexpExponent(Op):
    infer = classmethod(lambda op, x: (tuple(x.shape), _dtype.int32))
    promote = None
    differentiable = False

    @staticmethod
    def forward(x):
        return namespace(x).frexp(x)[1].astype(np.int32)


def signbit(input, *, out=None):
    """True where the sign bit is set (so at -0.0 and negative NaNs, never for unsigned)."""
    return with_out(apply(Signbit, input), out)


Signbit = predicate("Signbit", kernel("signbit"), promote=None,
                    complex_error=(NotImplementedError, "signbit is not implemented for complex tensors."))


def isposinf(input, *, out=None):
    """True where the element is +inf."""
    return with_out(apply(IsPosInf, input), out)


IsPosInf = predicate("IsPosInf", kernel("isposinf"), promote=None,
                     complex_error=(RuntimeError, "isposinf does not support complex inputs."))


def isneginf(input, *, out=None):
    """True where the element is -inf."""
    return with_out(apply(IsNegInf, input), out)


IsNegInf = predicate("IsNegInf", kernel("isneginf"), promote=None,
                     complex_error=(RuntimeError, "isneginf does not support complex inputs."))


# ---- steps and integers -----------------------------------------------------------------------------
def heaviside(input, values, *, out=None):
    """0 where ``input < 0``, ``values`` where ``input == 0``, 1 where ``input > 0``.
    Both must be tensors of one dtype (RuntimeError otherwise, as in PyTorch); it has no
    derivative (RuntimeError on backward)."""
    tensor_args("heaviside", input, values, names=("input", "values"))
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return with_out(apply(Heaviside, input, values), out)


class Heaviside(Op):
    complex_error = (RuntimeError, "heaviside is not yet implemented for complex tensors.")
    infer = classmethod(elementwise_rule)
    save_inputs = False

    @staticmethod
    def forward(x, values):
        xp = namespace(x, values)
        return xp.where(x > 0, 1, xp.where(x == 0, values, 0)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("the derivative for 'heaviside' is not implemented.")


def _integral(name):
    def kernel(a, b):
        if a.dtype.kind not in "iu":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_NAMES[a.dtype.name]}'")
        return getattr(np, name)(a, b)
    return kernel


def gcd(input, other, *, out=None):
    """Greatest common divisor (non-negative; ``gcd(0, 0) = 0``) of integer tensors;
    NotImplementedError for float and bool tensors."""
    tensor_args("gcd", input, other)
    return with_out(apply(Gcd, input, other), out)


Gcd = predicate("Gcd", _integral("gcd"), rule=elementwise_rule)


def lcm(input, other, *, out=None):
    """Least common multiple (non-negative; 0 when either is 0) of integer tensors;
    NotImplementedError for float and bool tensors."""
    tensor_args("lcm", input, other)
    return with_out(apply(Lcm, input, other), out)


Lcm = predicate("Lcm", _integral("lcm"), rule=elementwise_rule)
