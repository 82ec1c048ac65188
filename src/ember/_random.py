"""Random number generation: ``Generator``, ``manual_seed``, ``seed``, ``initial_seed``,
``get_rng_state``/``set_rng_state``.

A :class:`Generator` is PyTorch's CPU generator: a 32-bit Mersenne Twister (mt19937) seeded
with the low 32 bits of the seed by the reference ``init_genrand`` recurrence, plus the one
cached normal sample that PyTorch's Box-Muller keeps between calls. The twister itself is
NumPy's ``MT19937`` bit generator (the same algorithm), loaded with that state, so raw draws
are vectorised C. Distributions (``ember._distributions``) turn the raw 32- and 64-bit draws
into PyTorch's numbers; ``get_state`` is PyTorch's 5056-byte state layout, so a state moves
between ember and PyTorch in either direction.

Sources: Matsumoto & Nishimura, "Mersenne Twister" (1998), ``init_genrand``;
https://pytorch.org/docs/stable/notes/randomness.html
"""
import time

import numpy as np

from ._backend.meta import MetaArray, meta_array
from ._creation import tensor
from ._device import check_device
from ._dtype import uint8
from ._ops.core import _type_name
from ._ops.inplace import write_result
from ._tensor import Tensor

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator",
           "get_rng_state", "set_rng_state", "poisson"]

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed, so initial_seed() reads the same
_N = 624  # words of mt19937 state
# PyTorch's state layout: initial seed (u64), left (i32), seeded (i32), next (u64), the 624
# words (u64 each), the legacy normal cache (3 doubles and an i32 flag, padded), then the float
# normal cache (f32) and its flag (bool), padded to 5056 bytes.
_STATE = np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
                   ("words", "<u8", (_N,)), ("normal_x", "<f8"), ("normal_y", "<f8"),
                   ("normal_rho", "<f8"), ("normal_is_valid", "<i4"), ("pad", "<i4"),
                   ("float_normal", "<f4"), ("float_normal_is_valid", "u1"), ("pad2", "u1", (3,))])


# NumPy's MT19937 seeds an int by the same reference recurrence, in C (its RandomState's way).
_C_SEEDING = hasattr(np.random.MT19937, "_legacy_seeding")


def _init_genrand(seed32):
    """The 624 state words of mt19937 seeded with the 32-bit ``seed32``."""
    words = [seed32]
    for j in range(1, _N):
        prev = words[-1]
        words.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFF_FFFF)
    return np.array(words, dtype=np.uint32)


class Generator:
    """A pseudo-random stream (``torch.Generator``): PyTorch's mt19937 CPU generator, so the
    same seed gives PyTorch's numbers. ``get_state``/``set_state`` exchange a uint8 tensor in
    PyTorch's layout.

    Raises:
        RuntimeError: a seed outside [-2**63, 2**64); a state tensor of the wrong size/dtype.
    """

    def __init__(self, device="cpu"):
        self.device = check_device(device)
        self._bits = np.random.MT19937()
        # NumPy's transforms over the same state, for code that has not moved to
        # ember._distributions (its numbers are not PyTorch's).
        self.numpy = np.random.Generator(self._bits)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Reseeds this generator with ``seed`` (an int; negatives wrap to 64 bits, RuntimeError
        outside the 64-bit range); the same seed gives PyTorch's CPU streams. Returns self."""
        seed = int(seed)
        if seed < -0x8000_0000_0000_0000 or seed > 0xFFFF_FFFF_FFFF_FFFF:
            raise RuntimeError(f"Overflow when unpacking long long: seed {seed} out of range")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        if _C_SEEDING:  # NumPy's C init_genrand (pos 624): ~100x faster than the loop below
            self._bits._legacy_seeding(self._seed & 0xFFFF_FFFF)
        else:
            self._bits.state = {"bit_generator": "MT19937",
                                "state": {"key": _init_genrand(self._seed & 0xFFFF_FFFF), "pos": _N}}
        self.next_double_normal = None  # the second Box-Muller sample, kept for the next draw
        self.next_float_normal = None
        return self

    def seed(self):
        """Reseeds from the operating system's entropy and the clock; returns the new seed."""
        s = int.from_bytes(np.random.SeedSequence().entropy.to_bytes(16, "little")[:8], "little")
        self.manual_seed(s ^ time.time_ns() & 0xFFFF_FFFF_FFFF_FFFF)
        return self._seed

    def initial_seed(self):
        """The seed last set (by :meth:`manual_seed` or :meth:`seed`), as a non-negative int."""
        return self._seed

    def random32(self, n):
        """``n`` raw 32-bit draws (uint64 array), in order."""
        return self._bits.random_raw(n)

    def random64(self, n):
        """``n`` 64-bit draws, each two 32-bit draws with the first in the high half (PyTorch's
        ``random64``)."""
        raw = self._bits.random_raw(2 * n)
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    def get_state(self):
        """The state as a uint8 tensor of 5056 bytes, laid out as PyTorch's."""
        raw = self._bits.state["state"]
        pos = int(raw["pos"])
        state = np.zeros((), _STATE)
        state["seed"], state["seeded"] = self._seed, 1
        state["left"], state["next"] = _N + 1 - pos, 0 if pos == _N else pos
        state["words"] = raw["key"]
        if self.next_double_normal is not None:
            state["normal_y"], state["normal_is_valid"] = self.next_double_normal, 1
        if self.next_float_normal is not None:
            state["float_normal"], state["float_normal_is_valid"] = self.next_float_normal, 1
        # on the CPU whatever the default device (as torch's, inside ``with device("meta")`` too)
        return tensor(np.frombuffer(state.tobytes(), np.uint8).copy(), dtype=uint8, device="cpu")

    def set_state(self, new_state):
        """Restores a state from :meth:`get_state` (or from ``torch.get_rng_state()``)."""
        data = np.asarray(new_state._data if hasattr(new_state, "_data") else new_state)
        if data.dtype != np.uint8 or data.size != _STATE.itemsize:
            raise RuntimeError(f"Expected either a THGeneratorState of size 5048 or a "
                               f"CPUGeneratorImplState of size 5056 but found the input RNG state "
                               f"size to be {data.size}")
        state = np.frombuffer(data.tobytes(), _STATE)[0]
        left = int(state["left"])
        pos = _N if left == 1 else int(state["next"])
        self._seed = int(state["seed"])
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": state["words"].astype(np.uint32), "pos": pos}}
        self.next_double_normal = float(state["normal_y"]) if state["normal_is_valid"] else None
        self.next_float_normal = float(state["float_normal"]) if state["float_normal_is_valid"] else None
        return self

    def clone_state(self):
        """A new Generator in this one's state: both then draw the same numbers."""
        g = Generator()
        g.set_state(self.get_state())
        return g


default_generator = Generator()


def generator_or_default(generator=None):
    """``generator``, or the default generator."""
    return generator or default_generator


def rng(generator=None):
    """A NumPy generator on ``generator``'s (or the default one's) state; see
    :attr:`Generator.numpy`."""
    return (generator or default_generator).numpy


def manual_seed(seed):
    """Seeds the default generator; returns it (``torch.manual_seed``)."""
    return default_generator.manual_seed(seed)


def seed():
    """Seeds the default generator non-deterministically and returns the seed."""
    return default_generator.seed()


def initial_seed():
    """The seed of the default generator
    (https://pytorch.org/docs/stable/generated/torch.initial_seed.html)."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor
    (https://pytorch.org/docs/stable/generated/torch.get_rng_state.html)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default generator's state from ``get_rng_state``
    (https://pytorch.org/docs/stable/generated/torch.set_rng_state.html)."""
    default_generator.set_state(new_state)


# ---- random fills (in place) ----------------------------------------------------------------------
def _fill_random(self, draw):
    # The draws do not depend on the old values: recorded, self's gradient stops here (zero),
    # and a leaf that requires grad refuses, as torch's in-place fills. A meta tensor holds no
    # values: nothing is drawn (torch's generator does not move while a model is initialised
    # under ``with device("meta")``, nor is a meta model's worth of numbers made).
    if type(self._data) is MetaArray:
        return write_result(self, Tensor._make(meta_array(self._data.shape, self._data.dtype)))
    return write_result(self, Tensor._make(np.asarray(draw(), dtype=self._data.dtype)))


def _complex_parts(self, draw):
    """For a complex ``self``, its real and imaginary parts
    drawn as (real, imag) pairs, as torch fills ``view_as_real(self)``."""
    parts = draw(tuple(self.shape) + (2,))
    return parts[..., 0] + 1j * parts[..., 1]


def _only(self, kernel, inexact=True):
    """NotImplementedError, as torch's, for a fill defined on floating (and, when ``inexact``,
    complex) dtypes only."""
    if not (self.dtype.is_inexact if inexact else self.dtype.is_floating_point):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(self.dtype)}\'')


def _continuous(self, name, type_name):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {type_name(self.dtype)}")


# torch names the C++ type in cauchy_'s message
_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fills ``self`` with draws from the uniform distribution on [a, b) (each part of a
    complex tensor); a real tensor gets PyTorch's numbers for the same seed.
    NotImplementedError for integer and bool tensors."""
    _only(self, "check_uniform_bounds")
    if not self.dtype.is_complex:
        return _fill_random(self, lambda: _distributions.uniform(tuple(self.shape), a, b, self.dtype, generator))
    return _fill_random(self, lambda: _complex_parts(self, lambda shape: rng(generator).uniform(a, b, shape)))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fills ``self`` with draws from N(mean, std**2); a complex tensor's parts each get
    variance std**2 / 2, so that E|z - mean|^2 = std**2. A real tensor gets PyTorch's numbers
    for the same seed. NotImplementedError for integer and bool tensors."""
    _only(self, "normal_kernel_cpu")
    if not self.dtype.is_complex:
        return _fill_random(self, lambda: _distributions.normal(tuple(self.shape), mean, std, self.dtype, generator))
    std = std * 0.5 ** 0.5
    return _fill_random(self, lambda: mean + std * _complex_parts(self, rng(generator).standard_normal))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fills ``self`` with 1 with probability ``p`` (a number or broadcasting tensor), else 0
    (PyTorch's numbers for the same seed)."""
    if isinstance(p, Tensor):
        probs = np.broadcast_to(p._data, tuple(self.shape))
        return _fill_random(self, lambda: _distributions.bernoulli(probs, self.dtype, generator))
    return _fill_random(self, lambda: _distributions.bernoulli_scalar(tuple(self.shape), p, self.dtype, generator))


def random_(self, from_=0, to=None, *, generator=None):
    """Fills ``self`` with integers drawn uniformly from [from_, to) ([0, from_) with one bound;
    with none, every integer the dtype holds exactly from 0: [0, 2**mantissa] for floating
    dtypes (2**24 for float32), [0, max] for integers), PyTorch's numbers for the same seed."""
    if to is None:
        from_, to = 0, from_ if from_ else _random_limit(self.dtype) + 1
    return _fill_random(self, lambda: _distributions.randint(from_, to, tuple(self.shape), generator))


def _random_limit(dtype):
    if dtype.is_floating_point:
        return 2 ** (np.finfo(np.float16).nmant + 1 if dtype.name == "float16" else
                     8 if dtype.name == "bfloat16" else np.finfo(dtype.np).nmant + 1)
    return 1 if dtype.name == "bool" else int(np.iinfo(dtype.np).max)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fills ``self`` with draws from the exponential distribution of rate ``lambd``;
    RuntimeError for a non-floating ``self``."""
    _continuous(self, "Exponential", _type_name)
    return _fill_random(self, lambda: _distributions.exponential(tuple(self.shape), lambd, self.dtype, generator))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills ``self`` with draws from the Cauchy distribution, density
    1 / (π σ (1 + ((x − median) / σ)²)); PyTorch's numbers for the same seed. RuntimeError
    for sigma <= 0 or a non-floating ``self``
    (https://pytorch.org/docs/stable/generated/torch.Tensor.cauchy_.html)."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    _continuous(self, "Cauchy", lambda dtype: _CPP_NAMES.get(dtype.name, dtype.name))
    return _fill_random(self, lambda: _distributions.cauchy(tuple(self.shape), median, sigma, self.dtype, generator))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills ``self`` with exp(N(mean, std²)) draws (``mean``, ``std`` of the underlying normal);
    PyTorch's numbers for the same seed. RuntimeError for std <= 0, NotImplementedError for a
    non-floating ``self`` (https://pytorch.org/docs/stable/generated/torch.Tensor.log_normal_.html)."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    _only(self, "log_normal_cpu", inexact=False)
    return _fill_random(self, lambda: _distributions.log_normal(tuple(self.shape), mean, std, self.dtype, generator))


def geometric_(self, p, *, generator=None):
    """Fills ``self`` with the number of Bernoulli(p) trials up to and including the first
    success (1, 2, ...); PyTorch's numbers for the same seed. RuntimeError unless 0 < p < 1;
    NotImplementedError for bool (https://pytorch.org/docs/stable/generated/torch.Tensor.geometric_.html)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    if self.dtype.name == "bool":
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    return _fill_random(self, lambda: _distributions.geometric(tuple(self.shape), p, self.dtype, generator))


def poisson(input, generator=None):
    """A tensor shaped like ``input`` (a floating tensor of non-negative rates) of Poisson
    samples, one per rate, in ``input``'s dtype; PyTorch's numbers for the same seed
    (https://pytorch.org/docs/stable/generated/torch.poisson.html). Not differentiable.

    Raises:
        NotImplementedError: ``input`` is not floating point.
        RuntimeError: a negative rate.
    """
    _only(input, "poisson_cpu", inexact=False)
    if input.numel() and float(input._data.min()) < 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Tensor._make(_distributions.poisson(input._data, generator).astype(input._data.dtype))


# Imported last: _distributions takes generator_or_default from this module.
from . import _distributions  # noqa: E402
