"""Positions of random streams, compared before and after a recording (:mod:`.side_effects`):
Python's and NumPy's global ones, and a user's own (``random.Random(0)``,
``np.random.default_rng(0)``, a ``RandomState``), held in a global, a closure cell, a module's
attribute or an argument object. A draw moves its stream: the call is a graph break (the
statement runs eagerly on every call, as torch's dynamo breaks there), not a replay giving back
the recording's numbers. NumPy's draws are Cython calls, which a profile function does not see."""
import random

import numpy as np

__all__ = ["STREAMS", "position", "numpy_stream"]

STREAMS = (random.Random, np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def position(stream):
    """Where ``stream`` (one of :data:`STREAMS`) is, hashable and comparable with ``==``."""
    if isinstance(stream, random.Random):
        return "random.Random", stream.getstate()
    if isinstance(stream, np.random.RandomState):
        return numpy_stream(stream)
    bits = stream.bit_generator if isinstance(stream, np.random.Generator) else stream
    return type(bits).__name__, repr(bits.state)  # (a dict of ints, or of arrays for MT19937)


def numpy_stream(stream=np.random):
    """The position of a ``RandomState`` (the legacy global ``numpy.random`` by default)."""
    name, key, pos, has_gauss, cached = stream.get_state()
    return name, key.tobytes(), pos, has_gauss, cached
