"""``torch.quasirandom.SobolEngine``: Sobol' low-discrepancy sequences
(https://pytorch.org/docs/stable/generated/torch.quasirandom.SobolEngine.html).

The points are SciPy's (``scipy.stats.qmc.Sobol``: Joe and Kuo's direction numbers for up to
21201 dimensions, 30 bits, Gray-code order), which are torch's point for point when not
scrambled. Scrambled sequences (Owen's linear matrix scrambling with a digital shift) are
SciPy's for the seed: the same distribution as torch's, other numbers.
"""
import warnings

import numpy as np
from scipy.stats import qmc

from ._dtype import get_default_dtype
from ._tensor import Tensor

__all__ = ["SobolEngine"]


class SobolEngine:
    """``SobolEngine(dimension, scramble=False, seed=None)``: draws points of the unit cube
    ``[0, 1)^dimension`` in Sobol' order. ``draw(n)`` gives an (n, dimension) tensor of the next
    n points (``dtype`` default: the default float dtype), ``draw_base2(m)`` the next 2**m,
    ``fast_forward(n)`` skips n, ``reset()`` starts over. ValueError for a dimension outside
    [1, 21201], or a ``draw_base2`` that leaves the count of points drawn off a power of 2."""
    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if not 1 <= dimension <= self.MAXDIM:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")
        self.dimension, self.scramble, self.seed = dimension, scramble, seed
        self._engine = qmc.Sobol(dimension, scramble=scramble, rng=seed, bits=self.MAXBIT)
        self.num_generated = 0

    def draw(self, n=1, out=None, dtype=None):
        """The next ``n`` points, an (n, dimension) tensor of ``dtype`` (default: the default
        float dtype), written into ``out`` (resized) when given. NotImplementedError (torch's)
        for a dtype that is not floating point."""
        if dtype is None:
            dtype = get_default_dtype()
        if not dtype.is_floating_point:
            raise NotImplementedError(f'"_sobol_engine_draw" not implemented for \'{dtype.name.capitalize()}\'')
        with warnings.catch_warnings():  # SciPy asks for powers of 2; torch lets draw() take any n
            warnings.simplefilter("ignore", UserWarning)
            points = self._engine.random(n)
        self.num_generated += n
        result = Tensor._make(np.ascontiguousarray(points, dtype=dtype.np))
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next ``2**m`` points (see :meth:`draw`); ValueError unless the count drawn then
        is a power of 2 (the balance of Sobol' points)."""
        n = 2 ** m
        total = self.num_generated + n
        if total & (total - 1):
            raise ValueError("The balance properties of Sobol' points require n to be a power of 2. "
                             f"{self.num_generated} points have been previously generated, then: "
                             f"n={self.num_generated}+2**{m}={total}. If you still want to do this, "
                             "please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Starts the sequence over; returns the engine."""
        self._engine.reset()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skips ``n`` points; returns the engine."""
        self._engine.fast_forward(n)
        self.num_generated += n
        return self

    def __repr__(self):
        fields = [f"dimension={self.dimension}"] + ["scramble=True"] * bool(self.scramble)
        if self.seed is not None:
            fields.append(f"seed={self.seed}")
        return f"SobolEngine({', '.join(fields)})"
