"""Every primitive op, defined once. ``OPS`` maps an op's name to its entry."""
from . import core, inplace, linalg, nn, pointwise, reduce, shape  # noqa: F401  (importing registers the entries)
from . import norm, pool  # noqa: F401
from . import conv  # noqa: F401
from . import attention  # noqa: F401
from . import embedding  # noqa: F401
from . import rnn  # noqa: F401
from . import optim  # noqa: F401
from .core import OPS, Op, apply

__all__ = ["OPS", "Op", "apply"]
