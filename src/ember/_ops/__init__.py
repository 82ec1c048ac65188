"""Every op, defined once: the public function and its op entry, one family per file.

``OPS`` maps an op's name to its entry. The Tensor class (``ember._tensor``) imports the
families for its method table; the nn-only families (conv, norm, pool, ...) register when
first imported.
"""
import warnings

from .core import OPS, Op, apply

# NumPy reports overflow, division by zero and invalid operations in a kernel as a
# RuntimeWarning; in PyTorch inf and nan are values, not events. One filter on the module the
# warning comes from (ember's kernels) silences them at no cost per op, where an errstate
# around every kernel cost about 5% of a small MLP's step, and leaves NumPy's warnings in the
# user's own code alone.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember\.")

__all__ = ["OPS", "Op", "apply"]
