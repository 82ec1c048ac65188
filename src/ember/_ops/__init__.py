"""Every op, defined once: the public function and its op entry, one family per file.

``OPS`` maps an op's name to its entry. The Tensor class (``ember._tensor``) imports the
families for its method table; the nn-only families (conv, norm, pool, ...) register when
first imported.
"""
from .core import OPS, Op, apply

__all__ = ["OPS", "Op", "apply"]
