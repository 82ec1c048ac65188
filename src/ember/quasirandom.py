"""``torch.quasirandom.SobolEngine``: Sobol' low-discrepancy sequences
(https://pytorch.org/docs/stable/generated/torch.quasirandom.SobolEngine.html).

The direction numbers are SciPy's (``scipy.stats.qmc.Sobol``: Joe and Kuo's, up to 21201
dimensions, 30 bits). Point ``i`` is the XOR of the direction numbers picked by the bits of
``i``'s Gray code ``i ^ (i >> 1)`` (Antonov and Saleev, 1979), scaled by 2**-30: torch's points,
point for point. Scrambling is Owen's linear matrix scrambling with a digital shift (Matousek,
"On the L2-discrepancy for anchored boxes", 1998), drawn as torch draws it: from a generator
seeded with ``seed`` (the default generator when ``seed`` is None), first the shift's bits as
``randint(2, (dimension, 30))``, then lower-triangular bit matrices ``randint(2, (dimension, 30,
30)).tril()`` with a unit diagonal, applied to each direction number's bits, most significant
first. ember's generator is torch's mt19937, so scrambled points are torch's too.
"""
import numpy as np
from scipy.stats import qmc

from ._dtype import get_default_dtype
from ._random import Generator
from ._sampling import randint
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
        # (dimension, 30) direction numbers; SciPy keeps them as ``_sv`` (no public accessor)
        self._directions = qmc.Sobol(dimension, scramble=False, bits=self.MAXBIT)._sv.astype(np.int64)
        self._shift = np.zeros(dimension, np.int64)
        if scramble:
            self._scramble()
        # torch computes the first point here, in the default float dtype of now, and converts
        # it to each draw's dtype (a float64 draw's first row holds these values)
        self._first_dtype = get_default_dtype().np
        self.num_generated = 0

    def _scramble(self):
        bits = self.MAXBIT
        generator = None if self.seed is None else Generator().manual_seed(self.seed)
        shift_bits = randint(2, (self.dimension, bits), generator=generator).numpy()
        self._shift = shift_bits @ (1 << np.arange(bits, dtype=np.int64))
        matrices = np.tril(randint(2, (self.dimension, bits, bits), generator=generator).numpy())
        matrices[:, np.arange(bits), np.arange(bits)] = 1
        place = 1 << np.arange(bits - 1, -1, -1, dtype=np.int64)  # bit k of a number, MSB first
        direction_bits = (self._directions[:, None, :] & place[None, :, None]) != 0  # (d, bit, column)
        scrambled = np.matmul(matrices, direction_bits.astype(np.int64)) & 1
        self._directions = np.einsum("dkj,k->dj", scrambled, place)

    def _points(self, start, n):
        """(n, dimension) int64: points ``start .. start + n - 1`` as 30-bit integers. The first
        from its Gray code; each next one flips the direction number of the lowest set bit of
        its index (a running XOR)."""
        points = np.empty((n, self.dimension), np.int64)
        if n:
            gray = start ^ (start >> 1)
            points[0] = self._shift
            for bit in range(gray.bit_length()):
                if gray >> bit & 1:
                    points[0] ^= self._directions[:, bit]
            index = np.arange(start + 1, start + n, dtype=np.int64)
            lowest = np.log2(index & -index).astype(np.int64)  # exact: powers of 2
            points[1:] = self._directions[:, lowest].T
            np.bitwise_xor.accumulate(points, axis=0, out=points)
        return points

    def draw(self, n=1, out=None, dtype=None):
        """The next ``n`` points, an (n, dimension) tensor of ``dtype`` (default: the default
        float dtype), written into ``out`` (resized) when given. NotImplementedError (torch's)
        for a dtype that is not floating point."""
        if dtype is None:
            dtype = get_default_dtype()
        if not dtype.is_floating_point:
            raise NotImplementedError(f'"_sobol_engine_draw" not implemented for \'{dtype.name.capitalize()}\'')
        points = self._points(self.num_generated, n) * 2.0 ** -self.MAXBIT
        if self.num_generated == 0 and n:
            points[0] = points[0].astype(self._first_dtype)
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
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skips ``n`` points; returns the engine."""
        self.num_generated += n
        return self

    def __repr__(self):
        fields = [f"dimension={self.dimension}"] + ["scramble=True"] * bool(self.scramble)
        if self.seed is not None:
            fields.append(f"seed={self.seed}")
        return f"SobolEngine({', '.join(fields)})"
