"""Constant tensors made inside a dynamic graph's function whose size follows the size symbols
(:mod:`.dynamic`'s fit): a ``full`` (zeros, ones, a mask) or a 1-d ``arange`` (positions),
rebuilt at each call's sizes."""
import numpy as np

from .symbolic import evaluate

__all__ = ["SizedConstant", "sized_constant"]


class SizedConstant:
    """A constant tensor made inside the function whose size follows the size symbols: ``full``
    (``np.full(shape, value)``: zeros, ones, masks) or a 1-d ``arange`` (positions)."""

    def __init__(self, kind, dtype, args):
        self.kind, self.dtype, self.args = kind, dtype, args

    def build(self, sizes):
        """The constant's array at the call's ``sizes`` (``{symbol: int}``): ``full`` or ``arange``
        of the recorded arguments evaluated there."""
        args = evaluate(self.args, sizes)
        if self.kind == "full":
            return np.full(args[0], args[1], self.dtype)
        return np.arange(*args, dtype=self.dtype)

    def __repr__(self):
        return f"{self.kind}{self.args!r}"


def sized_constant(values, same, where):
    """The :class:`SizedConstant` the arrays ``values`` (one per sample) are, or None."""
    first = values[0]
    if not all(isinstance(v, np.ndarray) and v.dtype == first.dtype and v.ndim == first.ndim and v.size
               for v in values):
        return None
    flat = [v.reshape(-1) for v in values]
    if all((f == f[0]).all() for f in flat):  # (a fill value of an int argument, full((3,), k): fitted too)
        return SizedConstant("full", first.dtype, (same([v.shape for v in values], where),
                                                   same([f[0].item() for f in flat], where)))
    if first.ndim != 1 or first.dtype.kind not in "iu" or any(len(v) < 2 for v in values):
        return None
    step = int(first[1] - first[0])
    if not step or any(not np.array_equal(v, v[0] + step * np.arange(len(v))) for v in values):
        return None
    start = same([int(v[0]) for v in values], where)
    stop = same([int(v[0]) + step * len(v) for v in values], where)
    return SizedConstant("arange", first.dtype, (start, stop, step))
