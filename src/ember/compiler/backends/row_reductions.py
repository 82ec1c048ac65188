"""C kernels for the reductions a training step takes over the last dim and the scans it takes
along any dim, that ran from Python (NumPy) inside compiled graphs before: ``logsumexp``
(language models' losses, mixture likelihoods) and ``argmax`` (accuracy, greedy decoding) row by
row over a contiguous input; ``cumsum`` (masks, positions) and ``cumprod`` (survival and
stick-breaking products, decays) along ``dim`` of a strided one, with eager's rules:

* logsumexp: ``log(sum(exp(x - m))) + m`` with ``m`` the row's maximum, taken as 0 when it is
  +-inf (a row of -inf gives -inf, one holding +inf gives +inf) and NaN when the row holds a
  NaN (ember/_ops/softmax.py's ``Logsumexp.forward``, torch.logsumexp);
* argmax: the index of the first maximum, or of the first NaN (NumPy's and torch's rule);
* cumsum, cumprod: the running sum or product in the input's dtype, in order (NumPy's
  ``add.accumulate``/``multiply.accumulate``: bit-equal, NaN and inf carried on as IEEE says).

The rows' length is the input's last dim; the plan gives logsumexp and argmax only contiguous
inputs (plan._operands_fit), every kernel a fresh contiguous buffer for its result.
"""
import numpy as np

from .kernels import CTYPES, ROW_REDUCTIONS
from .python import label
from .plan import _numel
from .rows import _row_stats

__all__ = ["row_reduction_kernel"]


def row_reduction_kernel(src, node, fname):
    """The C lines of ``node``'s kernel (a Logsumexp or Argmax over the last dim, a Cumsum or
    Cumprod along its dim)."""
    plan = src.plan
    x, out = plan.loc[node.args[0]], plan.loc[node]
    if node.target.name in ("Cumsum", "Cumprod"):
        return _scan(src, node, fname, x, out)
    t = CTYPES[x.dtype]
    sfx = "f" if x.dtype == np.float32 else ""
    n = x.shape[-1] if x.shape else 1
    rows = _numel(x.shape) // max(n, 1)
    kind = ROW_REDUCTIONS[node.target.name]
    body = {"logsumexp": _logsumexp, "argmax": _argmax}[kind](t, sfx, n)
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


def _scan(src, node, fname, x, out):
    """The running sum or product along ``dim``: an outer loop over every other dim, the scan
    inside (rows of a last-dim scan walk memory in order; other dims keep a row of running
    values instead, so that the innermost loop is over contiguous elements). The running
    values are doubles for float32, as eager's (torch's acc_type), kept for 256 of the inner
    elements at a time."""
    dim, t = node.kwargs["dim"] % len(x.shape), CTYPES[x.dtype]
    acc = "double" if t == "float" else t
    op = "+" if node.target.name == "Cumsum" else "*"
    kind = ROW_REDUCTIONS[node.target.name]
    n, inner = x.shape[dim], _numel(x.shape[dim + 1:])
    outer, step = _numel(x.shape[:dim]), x.strides[dim]
    where = "the last dim" if dim == len(x.shape) - 1 else f"dim {dim}"
    lines = [f"/* {kind} over {where} of {list(x.shape)}: {label(node)} */",
             f"static void {fname}(void** restrict p) {{",
             f"    {t}* restrict y = {src.pointer(out)};",
             f"    const {t}* restrict x = {src.pointer(x)};"]
    # x's address of (o, j, k): the outer index o over dims before dim, k over those after
    lead = _address(x.shape[:dim], x.strides[:dim], "o")
    tail = _address(x.shape[dim + 1:], x.strides[dim + 1:], "k")
    lines += [f"    for (long o = 0; o < {outer}; o++) {{",
              f"        {t}* restrict row = y + o*{n * inner};",
              f"        for (long k0 = 0; k0 < {inner}; k0 += 256) {{",
              f"            long k1 = k0 + 256 < {inner} ? k0 + 256 : {inner};",
              f"            {acc} run[256];",
              f"            for (long k = k0; k < k1; k++) row[k] = ({t})(run[k - k0] = x[{x.offset} + {lead} + {tail}]);",
              f"            for (long j = 1; j < {n}; j++)",
              "                for (long k = k0; k < k1; k++)",
              f"                    row[j*{inner} + k] = ({t})(run[k - k0] = run[k - k0] {op} x[{x.offset} + {lead} + j*{step} + {tail}]);",
              "        }", "    }", "}"]
    return lines


def _address(shape, strides, var):
    """The C offset of flat index ``var`` over ``shape`` read through ``strides`` (one product
    where the dims are one run of memory, so that a loop over ``var`` vectorises)."""
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if dims and all(s == s2 * n2 for (_, s), (n2, s2) in zip(dims, dims[1:])):
        return f"{var}*{dims[-1][1]}"
    terms, size = [], 1
    for n, s in reversed(list(zip(shape, strides))):
        if n != 1 and s != 0:
            terms.append(f"({var} / {size} % {n})*{s}" if size > 1 else f"({var} % {n})*{s}")
        size *= n
    return " + ".join(terms) or "0"
