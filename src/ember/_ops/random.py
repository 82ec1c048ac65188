"""Ops that draw random numbers from the default generator. As ops they are recorded by the
compiler like any other, and a replayed graph draws afresh each call, in eager's order."""
import numpy as np

from .. import _distributions
from .core import Op

__all__ = ["DropoutMask"]


class DropoutMask(Op):
    """A tensor of ``shape`` and ``dtype``: 0 with probability ``p``, else ``1 / (1 - p)``
    (Srivastava et al., 2014). No inputs; never differentiated."""
    promote = None
    differentiable = False
    save_inputs = False
    infer = classmethod(lambda op, shape, p, dtype: (tuple(shape), dtype))

    @staticmethod
    def forward(shape, p, dtype):
        if p == 1:
            return np.zeros(shape, dtype.np)
        return _distributions.dropout_mask(shape, p, dtype)  # torch's numbers for the same seed
