"""PyTorch's CPU sampling transforms over the raw draws of an ember :class:`Generator`.

With the same seed these give PyTorch's numbers (``torch.manual_seed(s)`` then ``rand``,
``randn``, ``randint``, ``randperm``, ``normal``, ``bernoulli``, ``exponential_``,
``multinomial``, dropout masks), because they consume the mt19937 stream in PyTorch's order
and apply its transforms (worked out by experiment against torch 2.13, from its public
documentation and the reference algorithms; see docs/random.md for what differs):

* uniform: float32, float16, bfloat16 take 24 random bits of one 32-bit draw, x = bits·2⁻²⁴;
  float64 takes 53 bits of a 64-bit draw (two 32-bit draws, the first in the high half).
  ``x · (high − low) + low`` is rounded once: to the dtype from float64, or for float64 from
  extended precision, as PyTorch's kernels (compiled with fused multiply-adds) round it.
* normal, fewer than 16 elements: Box-Muller in float64 on two 53-bit uniforms u1, u2:
  r = √(−2 log1p(−u2)), θ = 2π u1; r cos θ is returned and r sin θ is kept in the generator
  for the next normal draw.
* normal, 16 or more elements: all uniforms first, then per block of 16: u1 = 1 − x[j],
  u2 = x[j + 8], r = √(−2 log u1), θ = 2π u2, x[j] = r cos θ, x[j + 8] = r sin θ, in the
  tensor's dtype; a last partial block is redone on 16 fresh uniforms over the last 16 slots.
* randint: (32-bit draw mod range) + low, or a 64-bit draw when range ≥ 2³².
* randperm: Fisher-Yates from the front, swapping i with i + (draw mod (n − i)).
* bernoulli: uniform < p, with a 24-bit uniform for float32/float16/bfloat16 probability
  tensors and a 53-bit one for float64 tensors and Python-number probabilities.
* exponential: −log1p(−u) / λ on a 53-bit uniform; cauchy median + σ tan(π(u − ½)) and
  geometric ceil(log u / log1p(−p)) on one too; log-normal exp of one-by-one normals.
* poisson: per element in order, a product of 53-bit uniforms below rate 10, Hörmann's PTRS
  rejection from 10.
* standard gamma: per element in order, Marsaglia & Tsang's rejection on one-by-one normals
  and 53-bit uniforms (shapes below 1 boosted by a uniform's power first), with the constant
  1/3 rounded to float32 as PyTorch's kernel has it; the result is at least the dtype's
  smallest normal number. Dirichlet: a standard gamma per entry, normalised per row.
* multinomial: with replacement, per row a cumulative sum normalised by its total and one
  53-bit uniform per sample located by binary search; without replacement (or one sample),
  the top-k of p / q with q ~ Exp(1) (the Gumbel/exponential trick).

Every function returns a NumPy array; the callers wrap it as a tensor.
"""
import math

import numpy as np

from . import _dtype
from ._random import generator_or_default

__all__ = ["uniform", "normal", "randint", "randperm", "bernoulli", "bernoulli_scalar", "exponential",
           "cauchy", "log_normal", "geometric", "poisson", "standard_gamma", "dirichlet", "multinomial",
           "dropout_mask", "random_seed"]

_MASK24, _MASK53 = np.uint64((1 << 24) - 1), np.uint64((1 << 53) - 1)
_U32 = np.uint64(1 << 32)


# Large draws are made a pass of this many at a time, so that the temporaries of a pass stay
# a few MiB (a model's initialisation fills hundreds of MiB); a multiple of 16 for normal's
# blocks. The stream is the same as in one pass.
_CHUNK = 1 << 20


def _uniform24(gen, n):
    bits = gen.random32(n).astype(np.uint32)  # (uint32 converts to float fast; uint64 does not)
    bits &= np.uint32((1 << 24) - 1)
    out = bits.astype(np.float64)
    out *= 2.0 ** -24
    return out


def _uniform53(gen, n):
    bits = gen.random64(n)
    bits &= _MASK53
    out = bits.view(np.int64).astype(np.float64)  # below 2**53: the same numbers, a faster conversion
    out *= 2.0 ** -53
    return out


def _unit_uniform(gen, n, dtype):
    """``n`` uniforms on [0, 1) as PyTorch draws them for a tensor of ``dtype`` (float64)."""
    return _uniform53(gen, n) if dtype is _dtype.float64 else _uniform24(gen, n)


def _finish(values, shape, dtype):
    """float64 ``values`` rounded to ``dtype`` the way PyTorch's kernels round (via float32 for
    the 16-bit types) and shaped."""
    if dtype in (_dtype.float16, _dtype.bfloat16):
        values = values.astype(np.float32, copy=False)
    return values.astype(dtype.np, copy=False).reshape(shape)


def uniform(shape, low, high, dtype, generator=None):
    """Samples on [low, high) (``torch.rand``, ``Tensor.uniform_``); ``low``/``high`` are first
    rounded to ``dtype``, as PyTorch does."""
    gen = generator_or_default(generator)
    n = math.prod(shape)
    low, high = (float(np.array(v, dtype.np)) for v in (low, high))
    out = np.empty(n, np.float64 if dtype is _dtype.float64 else np.float32)
    for start in range(0, n, _CHUNK):
        u = _unit_uniform(gen, min(_CHUNK, n - start), dtype)
        out[start:start + u.size] = _fma(u, high - low, low) if dtype is _dtype.float64 else u * (high - low) + low
    return _finish(out, shape, dtype)


def _normal_one_by_one(gen, n):
    """``n`` standard normals (float64), each from the generator's kept sample or a new
    Box-Muller pair, as PyTorch's scalar normal draws them."""
    out = np.empty(n)
    for i in range(n):
        if gen.next_double_normal is not None:
            value, gen.next_double_normal = gen.next_double_normal, None
        else:
            u1, u2 = _uniform53(gen, 2)
            radius, theta = math.sqrt(-2.0 * math.log1p(-u2)), 2.0 * math.pi * u1
            gen.next_double_normal = radius * math.sin(theta)
            value = radius * math.cos(theta)
        out[i] = value
    return out


def normal_one_by_one(shape, dtype, generator=None):
    """Standard normals drawn one at a time whatever their number: torch's draws into a tensor
    that is not contiguous (``randn_like`` of a transposed tensor), whose kernel is serial."""
    return _finish(_normal_one_by_one(generator_or_default(generator), math.prod(shape)), shape, dtype)


def normal(shape, mean, std, dtype, generator=None):
    """Samples of N(mean, std²) (``torch.randn``, ``torch.normal``, ``Tensor.normal_``)."""
    gen = generator_or_default(generator)
    n = math.prod(shape)
    if n < 16:
        return _finish(_fma(_normal_one_by_one(gen, n), std, mean), shape, dtype)
    compute = np.float64 if dtype is _dtype.float64 else np.float32
    x = np.empty(n, compute)
    whole = n - n % 16  # the draws in complete blocks of 16
    for start in range(0, n, _CHUNK):
        part = x[start:start + _CHUNK]
        part[...] = _unit_uniform(gen, part.size, dtype).astype(dtype.np)
        _box_muller_16(part[:max(0, min(part.size, whole - start))])
    if n % 16:
        tail = _unit_uniform(gen, 16, dtype).astype(dtype.np).astype(compute)
        _box_muller_16(tail)
        x[n - 16:] = tail
    if std != 1.0 or mean != 0.0:
        if compute is np.float64:
            x = _fma(x, std, mean)
        else:
            x *= compute(std)
            x += compute(mean)
    return x.astype(dtype.np, copy=False).reshape(shape)


def _fma(x, scale, shift):
    """``x * scale + shift`` for a float64 array, rounded once as a fused multiply-add rounds
    it, which is how PyTorch's CPU kernels compute their affine maps: in extended precision
    (the product of an integer-valued or short scale is exact there; otherwise it can differ
    from a true fused multiply-add by one ulp in rare ties; where NumPy's longdouble is double,
    by the second rounding)."""
    return (x.astype(np.longdouble) * scale + shift).astype(np.float64)


def _box_muller_16(x):
    """In place: each block of 16 uniforms becomes 16 normals (cosines in the first eight)."""
    blocks = x.reshape(-1, 2, 8)
    one, two_pi = x.dtype.type(1.0), x.dtype.type(2.0 * math.pi)
    radius = np.sqrt(x.dtype.type(-2.0) * np.log(one - blocks[:, 0]))
    theta = two_pi * blocks[:, 1]
    blocks[:, 0], blocks[:, 1] = radius * np.cos(theta), radius * np.sin(theta)


def randint(low, high, shape, generator=None):
    """int64 samples on [low, high) (``torch.randint``, ``Tensor.random_(low, high)``)."""
    gen = generator_or_default(generator)
    n, span = math.prod(shape), int(high) - int(low)
    draws = gen.random64(n) if span >= 1 << 32 else gen.random32(n)
    return ((draws % np.uint64(span)).astype(np.int64) + int(low)).reshape(shape)


def randperm(n, generator=None):
    """A random permutation of 0..n−1 as int64 (``torch.randperm``)."""
    gen = generator_or_default(generator)
    order = list(range(n))
    if n > 1:
        spans = np.arange(n, 1, -1, dtype=np.uint64)
        draws = gen.random32(n - 1) if n < (1 << 32) // 20 else gen.random64(n - 1)
        for i, z in enumerate((draws % spans).tolist()):
            order[i], order[i + z] = order[i + z], order[i]
    return np.array(order, dtype=np.int64)


def bernoulli(probs, dtype, generator=None):
    """0/1 samples of ``dtype`` shaped like the array ``probs``, each 1 with its probability."""
    gen = generator_or_default(generator)
    u = _uniform53(gen, probs.size) if probs.dtype == np.float64 else _uniform24(gen, probs.size)
    return (u < probs.reshape(-1)).astype(dtype.np).reshape(probs.shape)


def bernoulli_scalar(shape, p, dtype, generator=None):
    """0/1 samples of ``dtype`` in ``shape``, each 1 with the probability ``p`` (a number)."""
    gen = generator_or_default(generator)
    return (_uniform53(gen, math.prod(shape)) < p).astype(dtype.np).reshape(shape)


def exponential(shape, lambd, dtype, generator=None):
    """Samples of Exp(λ) (``Tensor.exponential_``)."""
    gen = generator_or_default(generator)
    return _finish(-np.log1p(-_uniform53(gen, math.prod(shape))) / lambd, shape, dtype)


def cauchy(shape, median, sigma, dtype, generator=None):
    """Samples of Cauchy(median, sigma): median + sigma · tan(π (u − ½)) (``Tensor.cauchy_``)."""
    u = _uniform53(generator_or_default(generator), math.prod(shape))
    return _finish(median + sigma * np.tan(np.pi * (u - 0.5)), shape, dtype)


def log_normal(shape, mean, std, dtype, generator=None):
    """Samples of exp(N(mean, std²)), each normal drawn one by one (``Tensor.log_normal_``)."""
    gen = generator_or_default(generator)
    return _finish(np.exp(_normal_one_by_one(gen, math.prod(shape)) * std + mean), shape, dtype)


def geometric(shape, p, dtype, generator=None):
    """Samples of the number of Bernoulli(p) trials up to the first success, ceil(log u /
    log(1 − p)) (``Tensor.geometric_``)."""
    u = _uniform53(generator_or_default(generator), math.prod(shape))
    return np.ceil(np.log(u) / math.log1p(-p)).astype(dtype.np).reshape(shape)


def poisson(rates, generator=None):
    """Poisson samples (float64, shaped like the float array ``rates``), drawn in order:
    rate 0 gives 0; below 10, the count of uniforms whose running product stays above
    exp(−rate); from 10, Hörmann's transformed rejection with squeeze, PTRS (Hörmann,
    "The transformed rejection method for generating Poisson random variables", 1993),
    which is what PyTorch's CPU kernel uses."""
    gen = generator_or_default(generator)
    flat = rates.reshape(-1).astype(np.float64)
    out = np.empty(flat.size)
    for i, rate in enumerate(flat.tolist()):
        out[i] = 0 if rate == 0 else _poisson_small(gen, rate) if rate < 10 else _poisson_ptrs(gen, rate)
    return out.reshape(rates.shape)


def _poisson_small(gen, rate):
    count, product, limit = 0, 1.0, math.exp(-rate)
    while True:
        product *= float(_uniform53(gen, 1)[0])
        if product <= limit:
            return count
        count += 1


def _poisson_ptrs(gen, rate):
    slam, loglam = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        u, v = (float(x) for x in _uniform53(gen, 2))
        u -= 0.5
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + rate + 0.43)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b) <= -rate + k * loglam - math.lgamma(k + 1):
            return k


_THIRD = float(np.float32(1.0 / 3.0))  # PyTorch's kernel spells the 1/3 of d = a - 1/3 as a float


def standard_gamma(shapes, generator=None):
    """Gamma(shape, 1) samples (float64, shaped like the float array ``shapes``), drawn in
    order by Marsaglia & Tsang's method ("A simple method for generating gamma variables",
    2000): a shape ``a < 1`` draws Gamma(a + 1) times ``U^(1/a)``; a shape of 0 gives 0."""
    gen = generator_or_default(generator)
    flat = shapes.reshape(-1).astype(np.float64)
    out = np.empty(flat.size)
    for i, alpha in enumerate(flat.tolist()):
        out[i] = _gamma_one(gen, alpha)
    return out.reshape(shapes.shape)


def _gamma_one(gen, alpha):
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale = (1.0 - float(_uniform53(gen, 1)[0])) ** (1.0 / alpha)
        alpha += 1.0
    d = alpha - _THIRD
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        y = 0.0
        while y <= 0.0:
            x = float(_normal_one_by_one(gen, 1)[0])
            y = 1.0 + c * x
        v = y * y * y
        u = 1.0 - float(_uniform53(gen, 1)[0])
        if u < 1.0 - 0.0331 * x ** 4 or math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return scale * d * v


def dirichlet(concentration, generator=None):
    """Dirichlet samples (float64, shaped like ``concentration``, rows along the last dim)."""
    gammas = np.maximum(standard_gamma(concentration, generator), np.finfo(np.float64).tiny)
    return gammas / gammas.sum(-1, keepdims=True)


def multinomial(rows, num_samples, replacement, generator=None):
    """int64 category indices, (N, num_samples), drawn from the N rows of non-negative weights
    ``rows`` (their count of categories checked by the caller).

    Raises:
        RuntimeError: (torch's words) a negative or non-finite weight, or an all-zero row.
    """
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(-1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = generator_or_default(generator)
    if replacement and num_samples > 1:
        cumulative = np.cumsum(rows, axis=-1)
        cumulative = cumulative / cumulative[:, -1:]
        u = _uniform53(gen, rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
        return np.stack([np.searchsorted(c, r, side="left") for c, r in zip(cumulative, u)]).astype(np.int64)
    q = exponential(rows.shape, 1.0, _dtype.from_numpy_dtype(rows.dtype), gen)
    keys = rows / q
    return np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples].astype(np.int64)


def dropout_mask(shape, p, dtype, generator=None):
    """The factor dropout multiplies its input by: 0 with probability ``p``, else 1 / (1 − p),
    in ``dtype`` (PyTorch draws ``bernoulli_(1 − p)`` and divides by 1 − p in place)."""
    keep = bernoulli_scalar(shape, 1 - p, dtype, generator)
    keep /= dtype.np.type(1 - p)
    return keep


def random_seed(generator=None):
    """A non-negative int64 from one 64-bit draw (``torch.empty((), dtype=torch.int64).random_()``),
    used to seed derived generators such as a sampler's."""
    return int(generator_or_default(generator).random64(1)[0] % np.uint64(1 << 63))
