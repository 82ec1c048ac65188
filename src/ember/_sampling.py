"""Random sampling factories: new tensors of random draws from the CPU generator, PyTorch's
numbers for a seed (https://pytorch.org/docs/stable/torch.html#random-sampling). Each accepts
``generator``, ``dtype``, ``device`` and ``requires_grad`` where PyTorch does; the in-place
fills (``uniform_``, ``normal_``...) are in ``_random``."""
import contextlib
import math

import numpy as np

from . import _distributions, _dtype
from . import _memory_format
from ._creation import _finish, _in_format, _size, _sizes
from ._device import check_device
from ._meta import placed
from ._ops.core import _type_name, apply
from ._ops.parser import parsed
from ._ops.random import Multinomial, StandardNormal, StandardUniform
from ._ops.refusals import refuse_unsigned
from ._tensor import Tensor

__all__ = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "rand_like", "randn_like", "randint_like"]


def _float_dtype(dtype, name):
    dtype = dtype or _dtype.get_default_dtype()
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_type_name(dtype)}'")
    return dtype


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """Uniform samples on [0, 1)."""
    check_device(device)
    dtype = _float_dtype(dtype, "check_uniform_bounds")
    size = _size(_sizes(sizes, size, "rand"), call="rand")
    if generator is None and not requires_grad:  # an op: ember.compile records the draw in its graph
        return apply(StandardUniform, shape=size, dtype=dtype)
    return _finish(_distributions.uniform(size, 0.0, 1.0, dtype, generator), requires_grad)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """Standard normal samples; complex dtypes draw the real and imaginary parts with variance
    1/2 each (so E|z|^2 = 1), in torch's order: (real, imag) pairs."""
    check_device(device)
    size = _size(_sizes(sizes, size, "randn"), call="randn")
    if dtype is not None and dtype.is_complex:
        parts = _distributions.normal(_size(size) + (2,), 0.0, 1 / math.sqrt(2), dtype.to_real(), generator)
        return _finish(parts.view(dtype.np)[..., 0], requires_grad)
    dtype = _float_dtype(dtype, "normal_kernel_cpu")
    if generator is None and not requires_grad:  # an op: ember.compile records the draw in its graph
        return apply(StandardNormal, shape=_size(size), dtype=dtype)
    return _finish(_distributions.normal(_size(size), 0.0, 1.0, dtype, generator), requires_grad)


@parsed
def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False, out=None):
    """Integers uniform on [low, high); int64 unless ``dtype`` is given
    (https://pytorch.org/docs/stable/generated/torch.randint.html). ``size`` is a sequence:
    TypeError in torch's words otherwise."""
    check_device(device)
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    arr = _distributions.randint(low, high, _size((size,), call="randint", position=2, sequence=True), generator)
    return _finish(arr.astype((dtype or _dtype.int64).np), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """A random permutation of 0..n-1, int64 by default
    (https://pytorch.org/docs/stable/generated/torch.randperm.html)."""
    check_device(device)
    refuse_unsigned("randperm", dtype)
    arr = _distributions.randperm(int(n), generator).astype((dtype or _dtype.int64).np)
    return _finish(arr, requires_grad)


@parsed
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, out=None, device=None, requires_grad=False):
    """Normal samples with ``mean`` and ``std``: broadcasting tensors, a tensor and a number, or
    two numbers and a ``size`` (a sequence) (https://pytorch.org/docs/stable/generated/torch.normal.html).
    TypeError in torch's words for a call none of its signatures takes (two numbers without a
    size, a size with a tensor, an int as the size); RuntimeError for a negative ``std``."""
    tensors = isinstance(mean, Tensor) or isinstance(std, Tensor)
    if tensors == (size is not None):
        raise TypeError("normal(): no signature takes these arguments")  # (the parser words it)
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    if not isinstance(std, Tensor) and not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if np.any(np.asarray(s) < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    shape = _size((size,), call="normal", position=3, sequence=True) if size is not None else \
        np.broadcast_shapes(np.shape(m), np.shape(s))
    ref = mean if isinstance(mean, Tensor) else std if isinstance(std, Tensor) else None
    dt = dtype or (ref.dtype if ref is not None else _dtype.get_default_dtype())
    # PyTorch draws N(mean, std) directly for two numbers, N(0, std) + mean for a tensor mean
    # and a number std, and N(0, 1) · std + mean otherwise.
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        scalar_std = not isinstance(std, Tensor)
        draws = _distributions.normal(tuple(shape), 0.0, s if scalar_std else 1.0, dt, generator)
        arr = (draws if scalar_std else draws * s.astype(dt.np)) + np.asarray(m).astype(dt.np)
    else:
        arr = _distributions.normal(tuple(shape), m, s, dt, generator)
    return _finish(np.asarray(arr).astype(dt.np), requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples, 1 with probability ``input`` (or ``p``), in ``input``'s dtype."""
    if p is not None:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        return _finish(_distributions.bernoulli_scalar(tuple(input.shape), p, input.dtype, generator))
    probs = input._data
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return _finish(_distributions.bernoulli(probs, input.dtype, generator))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the rows of ``input`` (non-negative weights, (C) or (N, C)) as int64.

    RuntimeError for negative or non-finite weights, an all-zero row, or more samples than
    categories without replacement."""
    w = input._data
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_type_name(input.dtype)}")
    if w.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {w.ndim}")
    if not replacement and num_samples > w.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if generator is None:  # an op: ember.compile records the draw in its graph
        return apply(Multinomial, input, num_samples=num_samples, replacement=replacement)
    return _finish(Multinomial.forward(w, num_samples, replacement, generator))


def rand_like(input, *, dtype=None, generator=None, device=None, requires_grad=False,
              memory_format=_memory_format.preserve_format):
    """``rand`` with ``input``'s shape and (unless given) dtype, laid out as ``memory_format``;
    with ``preserve_format`` the values are drawn in ``input``'s memory order, as torch fills
    ``empty_like(input)`` (https://pytorch.org/docs/stable/generated/torch.rand_like.html)."""
    order = _memory_format.fill_order(input._data) \
        if memory_format is _memory_format.preserve_format and isinstance(input._data, np.ndarray) else None
    if order is None:
        out = rand(input.shape, generator=generator, dtype=dtype or input.dtype, requires_grad=requires_grad)
        return _in_format(out, input, memory_format, "rand_like")
    draw = lambda size: rand(size, generator=generator, dtype=dtype or input.dtype)
    return _memory_format.made_in_order(draw, input.shape, order).requires_grad_(requires_grad)


def randn_like(input, *, dtype=None, generator=None, device=None, requires_grad=False,
               memory_format=_memory_format.preserve_format):
    """``randn`` with ``input``'s shape and (unless given) dtype, laid out as ``memory_format``;
    with ``preserve_format`` a non-contiguous layout of ``input`` is kept and filled in memory
    order one draw at a time, as torch's serial kernel fills it (other numbers than ``randn``'s
    blocks of 16) (https://pytorch.org/docs/stable/generated/torch.randn_like.html)."""
    order = _memory_format.fill_order(input._data) \
        if memory_format is _memory_format.preserve_format and isinstance(input._data, np.ndarray) else None
    dtype = dtype or input.dtype
    if order is None or dtype.is_complex:
        out = randn(input.shape, generator=generator, dtype=dtype, requires_grad=requires_grad)
        return _in_format(out, input, memory_format, "randn_like")
    dtype = _float_dtype(dtype, "normal_kernel_cpu")
    draw = lambda size: _finish(_distributions.normal_one_by_one(size, dtype, generator))
    return _memory_format.made_in_order(draw, input.shape, order).requires_grad_(requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, generator=None, device=None, requires_grad=False,
                 memory_format=_memory_format.preserve_format):
    """``randint`` with ``input``'s shape and (unless given) dtype, laid out as ``memory_format``
    (values drawn in row-major order) (https://pytorch.org/docs/stable/generated/torch.randint_like.html)."""
    low, high = (0, low) if high is None else (low, high)
    out = randint(low, high, input.shape, generator=generator, dtype=dtype or input.dtype)
    return _in_format(out, input, memory_format, "randint_like")


@contextlib.contextmanager
def _unmoved(generator):
    """Within: draws from ``generator`` (None: the default one) are taken back afterwards."""
    generator = _distributions.generator_or_default(generator)
    state = generator.get_state()
    try:
        yield
    finally:
        generator.set_state(state)


# Draws placed on the meta device when asked (see ``_meta.placed``), the generator unmoved.
rand, randn, randint, randperm, normal = (placed(f, unmoved=_unmoved) for f in (rand, randn, randint, randperm, normal))
rand_like, randn_like, randint_like = (placed(f, like=True, unmoved=_unmoved)
                                       for f in (rand_like, randn_like, randint_like))
