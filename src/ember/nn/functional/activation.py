"""Activation functions (https://pytorch.org/docs/stable/nn.functional.html#non-linear-activation-functions).

Most are written in ember ops; those whose PyTorch derivative makes a choice at a kink
(relu, hardtanh, leaky_relu, elu, ...) or that need a stable form (softplus, logsigmoid,
gelu) are fused entries in :mod:`ember._ops.nn`. ``inplace=True`` writes the result into
the input, as PyTorch's in-place variants do.
"""
import warnings

import numpy as np

from ... import _distributions, _dtype
from ..._creation import as_tensor, check_narrow, real_if_fits
from ..._ops.pointwise_float import integer_number
from ..._ops.pointwise_unary import Relu, SoftplusForward, sigmoid, tanh
from ..._ops.softmax import log_softmax as _log_softmax, softmax as _softmax
from ..._ops.nn import (Elu, Gelu, HardsigmoidForward, HardswishForward, HardtanhForward, LeakyRelu,
                        LogSigmoidForward, MishForward, ThresholdForward)
from ..._ops.core import _type_name, apply, named, recording
from ..._ops.prelu import prelu
from ..._ops.shrink import SoftshrinkForward, hardshrink
from ..._tensor import Tensor, _wrap_dim
from ..._ops.refusals import FLOAT_MAX, check_attribute, check_rrelu_bounds, float_only
from ._common import SELU_ALPHA, SELU_SCALE, in_place, unary

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "elu",
    "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "softplus", "softsign",
    "sigmoid", "tanh", "hardtanh", "hardtanh_", "hardswish", "hardsigmoid", "logsigmoid",
    "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_", "softmax", "log_softmax",
    "softmin", "glu", "gumbel_softmax",
]


def relu(input, inplace=False):
    """``max(input, 0)``; the gradient at 0 is 0. RuntimeError for bool inputs.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.relu.html"""
    if input.dtype is _dtype.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return unary(Relu, input, inplace)


def relu_(input):
    """In-place :func:`relu`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.relu_.html"""
    return relu(input, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(input, min_val, max_val)`` with zero gradient at and beyond the bounds.
    ValueError if ``min_val > max_val``; RuntimeError for a bool input, and for a uint8 input
    and a negative bound.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.hardtanh.html"""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dtype.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is _dtype.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if not input.dtype.is_inexact:  # the bounds convert checked to the integer dtype
        real_if_fits(min_val, input.dtype), real_if_fits(max_val, input.dtype)
    check_attribute(min_val, input.dtype)
    check_attribute(max_val, input.dtype)
    return unary(HardtanhForward, input, inplace, min_val=min_val, max_val=max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.hardtanh_.html"""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``: ``hardtanh(input, 0, 6)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.relu6.html"""
    return hardtanh(input, 0.0, 6.0, inplace)


def _check_as_float(input, *values):
    """RuntimeError for a finite attribute beyond float32's range but for a float64 input: torch
    converts it checked to float, the float32 (and 16-bit) kernels' opmath. (``real_if_fits``
    records no comparison of a compiled function's traced float: its guard tells a number beyond
    float32's range apart, so inf keeps torch's graph.)"""
    if input.dtype is not _dtype.float64:
        for value in values:
            real_if_fits(value, _dtype.float32)


def _check_at_float(input, *values):
    """``values`` as :func:`check_attribute` takes them at float32 (the op computes there), or at
    float64 for a float64 input: its RuntimeError for a finite attribute beyond float32's range but
    for a float64 input, for a complex one with an imaginary part, its OverflowError for an int
    beyond C's; plain comparisons, which guard a compiled function's traced float, unlike
    :func:`_check_as_float`'s."""
    at = _dtype.float64 if input.dtype is _dtype.float64 else _dtype.float32
    return [check_attribute(value, at) for value in values]


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, else ``negative_slope * input`` (gradient at 0: the slope).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.leaky_relu.html"""
    float_only(input, "leaky_relu_cpu")
    _check_as_float(input, negative_slope)
    return unary(LeakyRelu, input, inplace, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.leaky_relu_.html"""
    return leaky_relu(input, negative_slope, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (Xu et al., 2015, https://arxiv.org/abs/1505.00853): a slope drawn
    uniformly from [lower, upper] per element in training, their mean otherwise.
    RuntimeError for a bound not finite or ``lower > upper``, as torch's.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.rrelu.html"""
    check_rrelu_bounds(lower, upper)
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    float_only(input, "rrelu_with_noise_cpu")
    _check_as_float(input, lower, upper)
    # torch's draws: one 53-bit uniform per element <= 0, in order (1 elsewhere), mapped to
    # [lower, upper) in float64 with the bounds rounded to the input's dtype, two roundings
    negative = (input._data <= 0).reshape(-1)
    lower, upper = (float(input._data.dtype.type(bound)) for bound in (lower, upper))
    slopes = np.ones(negative.shape, input._data.dtype)
    unit = _distributions.uniform((int(negative.sum()),), 0.0, 1.0, _dtype.float64)
    slopes[negative] = unit * (upper - lower) + lower
    slope = Tensor._make(slopes.reshape(input._data.shape))
    return in_place(input, lambda x: x * slope) if inplace else input * slope


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.rrelu_.html"""
    return rrelu(input, lower, upper, training, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """``input`` where positive, else ``alpha * (exp(input) - 1)`` (Clevert et al., 2015,
    https://arxiv.org/abs/1511.07289).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.elu.html"""
    float_only(input, "elu_cpu")
    _check_as_float(input, alpha)
    return unary(Elu, input, inplace, alpha=alpha)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.elu_.html"""
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """``scale * elu(input, alpha)`` with the self-normalizing constants of Klambauer et al.,
    2017 (https://arxiv.org/abs/1706.02515).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.selu.html"""
    float_only(input, "elu_cpu")
    return unary(Elu, input, inplace, alpha=SELU_ALPHA, scale=SELU_SCALE)


def selu_(input):
    """In-place :func:`selu`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.selu.html"""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (Barron, 2017,
    https://arxiv.org/abs/1704.07483).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.celu.html"""
    float_only(input, "elu_cpu")
    alpha = check_attribute(alpha, _dtype.float64)  # (torch's ``1. / alpha.to<double>()`` first)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    input_scale = 1.0 / alpha
    _check_at_float(input, alpha, input_scale)
    return named(unary(Elu, input, inplace, alpha=alpha, input_scale=input_scale), "CeluBackward0")


def celu_(input, alpha=1.0):
    """In-place :func:`celu`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.celu.html"""
    return celu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """``input * Phi(input)``, Phi the standard normal CDF; ``approximate="tanh"`` uses
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` (https://arxiv.org/abs/1606.08415).
    RuntimeError for another ``approximate``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.gelu.html"""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    float_only(input, "GeluKernelImpl")
    return apply(Gelu, input, approximate=approximate)


def silu(input, inplace=False):
    """``input * sigmoid(input)`` (a.k.a. swish; https://arxiv.org/abs/1702.03118), for
    floating and complex inputs; NotImplementedError for integer and bool ones, RuntimeError
    for a complex input whose gradient is recorded (torch has no complex derivative for it).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.silu.html"""
    if not input.dtype.is_complex:
        float_only(input, "silu_cpu")
    elif recording(input):
        raise RuntimeError("silu does not support automatic differentiation for outputs with complex dtype.")
    if inplace:
        return in_place(input, silu)
    if input.dtype in (_dtype.float16, _dtype.bfloat16):  # torch's float32 opmath, forward and backward
        return named(silu(input.float()).to(input.dtype), "SiluBackward0")
    return named(input * input.sigmoid(), "SiluBackward0")


def mish(input, inplace=False):
    """``input * tanh(softplus(input))`` (Misra, 2019, https://arxiv.org/abs/1908.08681).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.mish.html"""
    float_only(input, "mish_cpu")
    return unary(MishForward, input, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where ``beta * input >
    threshold`` (never overflows). RuntimeError for a finite ``beta`` or ``threshold`` beyond
    float32's range, but for a float64 input.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.softplus.html"""
    float_only(input, "softplus_cpu")
    beta, threshold = _check_at_float(input, beta, threshold)
    return apply(SoftplusForward, input, beta=beta, threshold=threshold)


def softsign(input):
    """``input / (1 + |input|)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.softsign.html"""
    return input / (input.abs() + 1)


def hardsigmoid(input, inplace=False):
    """``relu6(input + 3) / 6``; gradient 1/6 strictly between -3 and 3, else 0.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.hardsigmoid.html"""
    float_only(input, "hardsigmoid_cpu")
    return unary(HardsigmoidForward, input, inplace)


def hardswish(input, inplace=False):
    """``input * relu6(input + 3) / 6`` (Howard et al., 2019, https://arxiv.org/abs/1905.02244).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.hardswish.html"""
    float_only(input, "hardswish_cpu")
    return unary(HardswishForward, input, inplace)


def logsigmoid(input):
    """``log(sigmoid(input))``, finite for any finite input.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.logsigmoid.html"""
    float_only(input, "log_sigmoid_cpu")
    return apply(LogSigmoidForward, input)


def tanhshrink(input):
    """``input - tanh(input)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.tanhshrink.html"""
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0.
    RuntimeError for ``lambd`` outside ``[0, the dtype's largest]`` (nan too).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.softshrink.html"""
    float_only(input, "softshrink_check")
    lambd = check_attribute(lambd, _dtype.float64)  # (converted to double first: 1j, 10**400 refused)
    top = FLOAT_MAX[input.dtype.name]
    if not 0 <= lambd <= top:  # (nan and inf too)
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {_type_name(input.dtype)}, "
                           f"but found {float(lambd):g}")
    return apply(SoftshrinkForward, input, lambd=lambd)


def _threshold(input, threshold, value, inplace=False):
    """``input`` where ``input > threshold``, else ``value``. RuntimeError where torch converts
    a number checked: ``value`` beyond the input's float range, ``threshold`` beyond float32's
    (for float32, float16 and bfloat16 inputs, which compare in float32), either beyond an integer
    input's type (then truncated, as torch's); NotImplementedError for bool."""
    if input.dtype is _dtype.bool:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if input.dtype in (_dtype.float32, _dtype.float16, _dtype.bfloat16):
        real_if_fits(value, input.dtype)  # (float32's range)
        check_narrow(value, input.dtype)  # (float16's, bfloat16's)
        real_if_fits(threshold, _dtype.float32)
    elif not input.dtype.is_inexact:  # (both converted checked to the integer type: -2.5 is -2)
        threshold, value = integer_number(threshold, input.dtype), integer_number(value, input.dtype)
    return unary(ThresholdForward, input, inplace, threshold=threshold, value=value)


threshold = _threshold


def threshold_(input, threshold, value):
    """In-place :func:`threshold`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.threshold_.html"""
    return _threshold(input, threshold, value, inplace=True)


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(name, input, dim, dtype, stacklevel, kernel):
    if dtype is None:
        float_only(input, kernel)
    if dim is None:
        dim = _softmax_dim(name, input.ndim, stacklevel)
    return dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim`` (computed in ``dtype`` if given); never
    overflows. NotImplementedError for integer inputs without a floating ``dtype``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.softmax.html"""
    dim = _softmax_input("softmax", input, dim, dtype, _stacklevel, "softmax_lastdim_kernel_impl")
    return _softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x_i - log(sum_j exp(x_j))`` along ``dim``; finite for logits of any size.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.log_softmax.html"""
    dim = _softmax_input("log_softmax", input, dim, dtype, _stacklevel, "log_softmax_lastdim_kernel_impl")
    return _log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.softmin.html"""
    dim = _softmax_input("softmin", input, dim, dtype, _stacklevel, "softmax_lastdim_kernel_impl")
    return _softmax(-input, dim, dtype)


def glu(input, dim=-1):
    """Gated linear unit ``a * sigmoid(b)``, ``a`` and ``b`` the halves of ``input`` along
    ``dim`` (Dauphin et al., 2016, https://arxiv.org/abs/1612.08083). RuntimeError for a
    0-dim input or an odd size.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.glu.html"""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    a, b = input.chunk(2, d)
    return named(a * b.sigmoid(), "GluBackward0")



def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax distribution (Jang et al., 2016,
    https://arxiv.org/abs/1611.01144): ``softmax((logits + g) / tau)`` with Gumbel noise g;
    ``hard`` returns the one-hot argmax with the soft sample's gradient (straight-through).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.gumbel_softmax.html"""
    noise = -as_tensor(_distributions.exponential(tuple(logits.shape), 1.0, logits.dtype)).log()
    soft = ((logits + noise) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot_sample = soft.new_zeros(soft.shape).scatter(dim, index, 1.0)
    return one_hot_sample - soft.detach() + soft

