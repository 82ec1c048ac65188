"""Weight initialisation (https://pytorch.org/docs/stable/nn.init.html).

Every function fills its tensor in place without recording gradients and returns it. Fans
follow PyTorch: for a (out, in, *kernel) weight, ``fan_in = in * prod(kernel)`` and
``fan_out = out * prod(kernel)``. Random draws come from ember's generator (``generator`` or
the default one), so values differ from PyTorch's for the same seed; distributions agree.
"""
import math
import warnings

import numpy as np

from .._creation import as_tensor, empty_like, eye
from .._ops.pointwise_binary import where
from .. import _backend, _distributions
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
           "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity``: 1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + negative_slope^2)) for leaky_relu (slope ``param``,
    default 0.01), 3/4 for selu. ValueError for another name or a non-numeric slope."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fill(tensor, values):
    """Copies ``values`` (drawn and computed on the host: the CPU generator's numbers, as
    PyTorch's for a seed) into ``tensor``, on its device."""
    source = as_tensor(values, dtype=tensor.dtype)
    source._data = _backend.from_host(source._data, tensor._data)
    with no_grad():
        tensor.copy_(source)
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills with N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills with N(mean, std^2) truncated to ``[a, b]`` (absolute bounds, not in units of
    std), by rejection as PyTorch 2.13 draws it, so that a seed gives torch's numbers: when
    more than 0.3 of the normal's mass lies in ``[a, b]``, normal draws with those outside
    (in the tensor's dtype) redrawn until none is; otherwise uniform proposals on ``[a, b]``,
    each kept when ``log u <= -((x - mean) / std)^2 / 2 - log_peak`` for a fresh uniform ``u``
    (``log_peak`` the same at the mode), redrawn where refused. UserWarning when ``mean`` is
    more than 2 std outside ``[a, b]``.
    Source: https://pytorch.org/docs/stable/nn.init.html#torch.nn.init.trunc_normal_"""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution "
                      "of values may be incorrect.", stacklevel=2)
    if tensor.is_meta:  # no values to draw or test (a model initialised on the meta device)
        return tensor
    with no_grad():
        if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
            low, high = (float(np.array(bound, tensor.dtype.np)) for bound in (a, b))
            values = tensor.normal_(mean, std, generator=generator)
            while (outside := (values < low) | (values > high)).any():
                values = where(outside, empty_like(values).normal_(mean, std, generator=generator), values)
        else:
            log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

            def refused(proposal):  # in the tensor's dtype, operation by operation
                log_density = proposal.sub(mean).div(std).pow(2).mul(-0.5).sub(log_peak)
                return empty_like(proposal).uniform_(generator=generator).log_() > log_density

            values = tensor.uniform_(a, b, generator=generator)
            pending = refused(values)
            while pending.any():
                proposal = empty_like(values).uniform_(a, b, generator=generator)
                values = where(pending, proposal, values)
                pending = where(pending, refused(proposal), pending)
        return values if values is tensor else tensor.copy_(values)


def constant_(tensor, val):
    """Fills with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fills with 1 (https://pytorch.org/docs/stable/nn.init.html#torch.nn.init.ones_)."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fills with 0 (https://pytorch.org/docs/stable/nn.init.html#torch.nn.init.zeros_)."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills a 2-D tensor with the identity (ones on the main diagonal); ValueError otherwise."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor, groups=1):
    """Fills a 3-, 4- or 5-D convolution weight (out, in, *kernel) so that the convolution
    is the identity on as many channels as possible, per group. ValueError for another rank
    or for ``out`` not divisible by ``groups``."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    n = min(out_per_group, sizes[1])
    values = np.zeros(sizes)
    group, channel = np.meshgrid(np.arange(groups), np.arange(n), indexing="ij")
    centre = tuple(k // 2 for k in sizes[2:])
    values[(group * out_per_group + channel, channel) + centre] = 1
    return _fill(tensor, values)


def _calculate_fan_in_and_fan_out(tensor):
    """``(fan_in, fan_out)`` of a weight of at least 2 dimensions; ValueError otherwise."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot & Bengio (2010): U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot & Bengio (2010): N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He et al. (2015): U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``, the gain of
    ``nonlinearity`` (with negative slope ``a`` for leaky_relu) and ``fan`` chosen by
    ``mode`` ("fan_in" keeps forward variance, "fan_out" backward). A zero-element tensor is
    left as it is, with a warning."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def _default_weight_and_bias_(weight, bias):
    """PyTorch's default initialisation of ``nn.Linear`` and ``nn.Conv*``:
    ``kaiming_uniform_(weight, a=sqrt(5))``, which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and
    the bias (if not None) from the same range; a zero fan-in gives a zero bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He et al. (2015): N(0, std^2) with ``std = gain / sqrt(fan)``; arguments as for
    :func:`kaiming_uniform_`."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Saxe et al. (2013): the tensor, viewed as (rows, numel // rows), gets orthonormal rows
    or columns (whichever are fewer) from the QR decomposition of a normal sample, with
    signs fixed so the distribution is uniform (Haar), times ``gain``. ValueError below 2-D."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    sample = tensor.new_empty((rows, cols)).normal_(generator=generator).numpy().astype(np.float64)
    if rows < cols:
        sample = sample.T
    q, r = np.linalg.qr(sample)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tuple(tensor.shape)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Martens (2010): a 2-D tensor drawn from N(0, std^2) with a fraction ``sparsity`` of
    each column set to zero. ValueError for other ranks."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    values = tensor.new_empty((rows, cols)).normal_(0.0, std, generator=generator).numpy()
    for column in range(cols):  # torch's draws: one permutation of the rows per column
        values[_distributions.randperm(rows, generator)[:num_zeros], column] = 0.0
    return _fill(tensor, values)


def _deprecated(initialiser, module="nn.init"):
    """``initialiser`` under its old name (without the trailing underscore), which torch still
    accepts with a FutureWarning: programs written before PyTorch 0.4 call ``xavier_uniform``."""
    old = initialiser.__name__[:-1]

    def deprecated(*args, **kwargs):
        warnings.warn(f"`{module}.{old}` is now deprecated in favor of `{module}.{initialiser.__name__}`.",
                      FutureWarning, stacklevel=2)
        return initialiser(*args, **kwargs)
    deprecated.__name__ = deprecated.__qualname__ = old
    deprecated.__doc__ = f"Deprecated spelling of :func:`{initialiser.__name__}` (FutureWarning)."
    return deprecated


uniform, normal, constant, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal, orthogonal, sparse, dirac = (
    map(_deprecated, (uniform_, normal_, constant_, xavier_uniform_, xavier_normal_, kaiming_uniform_, kaiming_normal_,
                      orthogonal_, sparse_, dirac_)))
