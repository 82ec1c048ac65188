"""``torch.random``: the default generator's seed and state, and ``fork_rng``
(https://pytorch.org/docs/stable/random.html). The functions are :mod:`ember._random`'s, also
found at the top level (``ember.manual_seed``)."""
import contextlib

from ._random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """A context in which the default generator can be reseeded or drawn from freely: its state
    is saved on entry and restored on exit (also when the block raises). ``devices`` and
    ``device_type`` name accelerators' generators, which ember has none of; ``enabled=False``
    makes it a no-op."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
