"""C kernels for the reductions and scans a training step takes over the last dim, that ran
from Python (NumPy) inside compiled graphs before: ``logsumexp`` (language models' losses,
mixture likelihoods), ``argmax`` (accuracy, greedy decoding) and ``cumsum`` (masks, positions),
row by row over a contiguous input, with eager's rules:

* logsumexp: ``log(sum(exp(x - m))) + m`` with ``m`` the row's maximum, taken as 0 when it is
  +-inf (a row of -inf gives -inf, one holding +inf gives +inf) and NaN when the row holds a
  NaN (ember/_ops/softmax.py's ``Logsumexp.forward``, torch.logsumexp);
* argmax: the index of the first maximum, or of the first NaN (NumPy's and torch's rule);
* cumsum: the running sum in the input's dtype, in order (NumPy's ``add.accumulate``).

The rows' length is the input's last dim; the plan gives these kernels only contiguous inputs
(plan._operands_fit) and a fresh buffer for the result.
"""
import numpy as np

from .kernels import CTYPES, ROW_REDUCTIONS, label
from .plan import _numel
from .rows import _row_stats

__all__ = ["row_reduction_kernel"]


def row_reduction_kernel(src, node, fname):
    """The C lines of ``node``'s kernel (a Logsumexp, Argmax or Cumsum over the last dim)."""
    plan = src.plan
    x, out = plan.loc[node.args[0]], plan.loc[node]
    t = CTYPES[x.dtype]
    sfx = "f" if x.dtype == np.float32 else ""
    n = x.shape[-1] if x.shape else 1
    rows = _numel(x.shape) // max(n, 1)
    kind = ROW_REDUCTIONS[node.target.name]
    body = {"logsumexp": _logsumexp, "argmax": _argmax, "cumsum": _cumsum}[kind](t, sfx, n)
    return [f"/* {kind} over the last dim of {list(x.shape)}: {label(node)} */",
            f"static void {fname}(void** restrict p) {{",
            f"    {CTYPES[out.dtype]}* restrict y = {src.pointer(out)};",
            f"    for (long r = 0; r < {rows}; r++) {{",
            f"        const {t}* restrict x = {src.pointer(x)} + {x.offset} + r*{n};",
            *body, "    }", "}"]


def _logsumexp(t, sfx, n):
    return [*_row_stats(t, sfx, n, finite_shift=True), f"        y[r] = em_log{sfx}(s) + m;"]


def _argmax(t, sfx, n):
    return [f"        long k = 0; {t} m = x[0];",
            "        if (m == m) {",
            f"            for (long j = 1; j < {n}; j++) {{",
            "                if (x[j] != x[j]) { k = j; break; }",
            "                if (x[j] > m) { m = x[j]; k = j; }",
            "            }",
            "        }",
            "        y[r] = k;"]


def _cumsum(t, sfx, n):
    return [f"        {t} s = 0;",
            f"        for (long j = 0; j < {n}; j++) {{ s += x[j]; y[r*{n} + j] = s; }}"]
