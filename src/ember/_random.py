"""Random number generation: ``Generator``, ``manual_seed``, ``seed``, ``initial_seed``.

ember draws from NumPy's PCG64 bit generator. The streams are reproducible for a given seed
but are not PyTorch's Mersenne Twister streams: the same seed gives different numbers than
PyTorch does (tests copy weights across instead of relying on seeds).
"""
import json
import time

import numpy as np

from ._ops.core import write_into
from ._tensor import Tensor
from .autograd.grad_mode import no_grad

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator",
           "get_rng_state", "set_rng_state"]

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed, so initial_seed() reads the same


class Generator:
    """A pseudo-random stream (``torch.Generator``): ``manual_seed``, ``seed``,
    ``initial_seed``, ``get_state``/``set_state`` (state as a uint8 tensor)."""

    def __init__(self, device="cpu"):
        from ._device import check_device
        self.device = check_device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -0x8000_0000_0000_0000 or seed > 0xFFFF_FFFF_FFFF_FFFF:
            raise RuntimeError(f"Overflow when unpacking long long: seed {seed} out of range")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        s = int.from_bytes(np.random.SeedSequence().entropy.to_bytes(16, "little")[:8], "little")
        self.manual_seed(s ^ time.time_ns() & 0xFFFF_FFFF_FFFF_FFFF)
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from ._creation import tensor
        blob = json.dumps({"seed": self._seed, "state": self.rng.bit_generator.state}).encode()
        return tensor(list(blob), dtype=_uint8())

    def set_state(self, new_state):
        payload = json.loads(bytes(new_state.tolist()).decode())
        self._seed = payload["seed"]
        self.rng = np.random.Generator(np.random.PCG64())
        self.rng.bit_generator.state = payload["state"]
        return self

    def clone_state(self):
        g = Generator()
        g.set_state(self.get_state())
        return g


def _uint8():
    from ._dtype import uint8
    return uint8


default_generator = Generator()


def rng(generator=None):
    """The NumPy generator to draw from: ``generator``'s, or the default one's."""
    return (generator or default_generator).rng


def manual_seed(seed):
    """Seeds the default generator; returns it (``torch.manual_seed``)."""
    return default_generator.manual_seed(seed)


def seed():
    """Seeds the default generator non-deterministically and returns the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


# ---- random fills (in place) ----------------------------------------------------------------------
def _fill_random(self, array):
    with no_grad():
        write_into(self, Tensor._make(np.asarray(array, dtype=self._data.dtype)))
    return self


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fills ``self`` with draws from the uniform distribution on [a, b)."""
    return _fill_random(self, rng(generator).uniform(a, b, self.shape))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fills ``self`` with draws from N(mean, std**2)."""
    return _fill_random(self, mean + std * rng(generator).standard_normal(self.shape))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fills ``self`` with 1 with probability ``p`` (a number or broadcasting tensor), else 0."""
    probs = p._data if isinstance(p, Tensor) else p
    return _fill_random(self, rng(generator).random(self.shape) < probs)


def random_(self, from_=0, to=None, *, generator=None):
    """Fills ``self`` with integers drawn uniformly from [from_, to) ([0, from_) with one bound)."""
    if to is None:
        from_, to = 0, from_ if from_ else 2 ** 24
    return _fill_random(self, rng(generator).integers(from_, to, self.shape))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fills ``self`` with draws from the exponential distribution of rate ``lambd``."""
    return _fill_random(self, rng(generator).exponential(1.0 / lambd, self.shape))
