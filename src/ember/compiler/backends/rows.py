"""The C kernels that work row by row over the last dim: softmax and log-softmax, layer norm's
mean and variance, and cross entropy with its gradient (``log_softmax`` + ``nll_loss`` of
:mod:`ember.nn.functional` in one pass). Each row's maximum (NaN when the row holds one, as
eager) and sum of ``exp(x - max)`` come from one helper, so that ``log(sum) + max`` never
overflows (the log-sum-exp trick).
"""
import numpy as np

from ..symbolic import Expr, at_least_1
from .kernels import CTYPES
from .python import label
from .plan import _numel
from .toolchain import simd_reduction

__all__ = ["softmax_kernel", "norm_stats_kernel", "cross_entropy_kernel"]


def _row_stats(t, sfx, n, finite_shift=False, keep=None):
    """Max (NaN if the row has one) and sum of exp(x - max) of row ``x``, both loops vectorised
    (the sum in another order than a left fold; the max of a row holding -0.0 and 0.0 may be
    either). With ``finite_shift`` an infinite max shifts by 0 instead (logsumexp: a row of
    -inf sums to 0, a row with +inf to inf). With ``keep`` (a C array, written in the same
    iteration as ``x`` is read: it may be ``x``) each exponential is stored there for a
    later pass to scale, instead of being computed again: one inlined vector exp fewer for
    the compiler (a quarter of the cross-entropy gradient's gcc time) and at run time."""
    return [f"        {t} m = -INFINITY; int nan = 0;",
            "        " + simd_reduction("max", "m") + " reduction(|:nan)",
            f"        for (long j = 0; j < {n}; j++) {{ m = x[j] > m ? x[j] : m; nan |= x[j] != x[j]; }}",
            "        if (nan) m = NAN;",
            *(["        else if (m == INFINITY || m == -INFINITY) m = 0;"] if finite_shift else []),
            f"        {t} s = 0;",
            "        " + simd_reduction("+", "s"),
            f"        for (long j = 0; j < {n}; j++) s += em_exp{sfx}(x[j] - m);" if keep is None else
            f"        for (long j = 0; j < {n}; j++) {{ {t} e = em_exp{sfx}(x[j] - m); {keep}[j] = e; s += e; }}"]


def softmax_kernel(src, node, fname, log):
    """Softmax (or with ``log`` log-softmax) of ``node``'s input over its last dim, row by row."""
    plan = src.plan
    xl, out = plan.loc[node.args[0]], plan.loc[node]
    t = CTYPES[out.dtype]
    sfx = "f" if out.dtype == np.float32 else ""
    n = out.shape[-1] if out.shape else 1
    rows = _numel(out.shape[:-1])
    # (x - m) - log(s) as eager: x - (m + log(s)) lost log(s) beside a large m (1e20: 0, not -log n)
    finish = (f"        {t} ls = em_log{sfx}(s);\n        for (long j = 0; j < {n}; j++) y[j] = (x[j] - m) - ls;" if log else
              f"        {t} inv = 1 / s;\n        for (long j = 0; j < {n}; j++) y[j] *= inv;")
    return [f"/* {'log_' if log else ''}softmax over the last dim of {list(out.shape)}: {node.target.name}({node.name}) */",
            f"static void {fname}(void** restrict p) {{",
            f"    for (long r = 0; r < {rows}; r++) {{",
            f"        const {t}* restrict x = {src.pointer(xl)} + {xl.offset} + r*{n};",
            f"        {t}* restrict y = {src.pointer(out)} + r*{n};",
            *_row_stats(t, sfx, n, keep=None if log else "y"), finish, "    }", "}"]


def norm_stats_kernel(src, node, fname):
    """Mean and biased variance over the trailing axes (two passes over each row), into one
    buffer: the means, then the variances (mean 0 and the mean square when not ``centered``)."""
    plan = src.plan
    x, out = plan.loc[node.args[0]], plan.loc[node]
    t = CTYPES[out.dtype]
    rows = _numel(out.shape[1:])
    n = _numel(x.shape[len(x.shape) - len(node.kwargs["axes"]):])  # an int, or an expression of size symbols
    count = f"(({t}){at_least_1(n)})" if isinstance(n, Expr) else max(n, 1)
    centered = node.kwargs.get("centered", True)
    return [f"/* mean and variance over the last {len(node.kwargs['axes'])} dims of {list(x.shape)}: {label(node)} */",
            f"static void {fname}(void** restrict p) {{",
            f"    {t}* restrict stats = {src.pointer(out)};",
            f"    for (long r = 0; r < {rows}; r++) {{",
            f"        const {t}* restrict x = {src.pointer(x)} + {x.offset} + r*{n};",
            f"        {t} mean = 0, var = 0;",
            *([f"        {simd_reduction('+', 'mean')}", f"        for (long j = 0; j < {n}; j++) mean += x[j];"]
              if centered else []),
            f"        mean /= {count};",
            f"        {simd_reduction('+', 'var')}",
            f"        for (long j = 0; j < {n}; j++) {{ {t} d = x[j] - mean; var += d * d; }}",
            "        stats[r] = mean;",
            f"        stats[{rows} + r] = var / {count};",
            "    }", "}"]


def cross_entropy_kernel(src, node, fname, backward):
    """Cross entropy of logits (rows, classes) against int64 targets (``ignore_index`` rows
    skipped, ``reduction`` mean or sum), or with ``backward`` its gradient with respect to the
    logits; the function returns 1 with ``em_bad_target`` set for a target out of range."""
    plan = src.plan
    x = plan.loc[node.args[3] if backward else node.args[0]]
    target, out = plan.loc[node.args[1]], plan.loc[node]
    t = CTYPES[out.dtype]
    sfx = "f" if out.dtype == np.float32 else ""
    rows, n = x.shape
    ignore = int(node.kwargs.get("ignore_index", -100))
    mean = node.kwargs.get("reduction", "mean") == "mean"
    head = [f"/* {'gradient of ' if backward else ''}cross entropy of {list(x.shape)} logits: {node.target.name}({node.name}) */",
            f"static int {fname}(void** restrict p) {{",
            f"    const int64_t* restrict target = {src.pointer(target)} + {target.offset};",
            "    long count = 0;",
            f"    for (long r = 0; r < {rows}; r++) {{",
            "        int64_t c = target[r];",
            f"        if (c == {ignore}) continue;",
            f"        if (c < 0 || c >= {n}) {{ em_bad_target = c; return 1; }}",
            "        count++;", "    }"]
    if isinstance(n, int) and n < _NARROW:
        return head + _narrow_rows(src, node, x, target, out, t, sfx, backward, ignore, mean)
    row = [f"    for (long r = 0; r < {rows}; r++) {{",
           f"        const {t}* restrict x = {src.pointer(x)} + {x.offset} + r*{n};",
           "        int64_t c = target[r];"]
    if not backward:
        return head + ["    double total = 0;", *row,
                       f"        if (c == {ignore}) continue;",
                       *_row_stats(t, sfx, n),
                       f"        total += (double)-((x[c] - m) - em_log{sfx}(s));", "    }",
                       f"    *{src.pointer(out)} = ({t})({'total / count' if mean else 'total'});",
                       "    return 0;", "}"]
    g = plan.loc[node.args[0]]
    scale = f"({src.pointer(g)}[{g.offset}]{' / count' if mean else ''})"
    return head + [f"    {t} scale = {scale};", *row,
                   f"        {t}* restrict y = {src.pointer(out)} + r*{n};",
                   f"        if (c == {ignore}) {{ for (long j = 0; j < {n}; j++) y[j] = 0; continue; }}",
                   *_row_stats(t, sfx, n, keep="y"),
                   f"        {t} k = scale / s;",
                   f"        for (long j = 0; j < {n}; j++) y[j] *= k;",
                   "        y[c] -= scale;", "    }", "    return 0;", "}"]


_NARROW = 16  # classes below which cross entropy runs its exponentials over blocks of rows
_BLOCK = 1024  # elements of such a block (4 KiB of float32 on the stack)


def _narrow_rows(src, node, x, target, out, t, sfx, backward, ignore, mean):
    """Cross entropy (or its gradient) of rows narrower than two vectors (``_NARROW``: the
    digits MLP's 10 classes), by blocks of rows: each row's maximum (NaN when it holds one)
    and shifted logits, then one vector loop of exponentials over the whole block and one of
    logarithms over its rows, where each row's own vector loops would run one partial vector
    and a scalar tail per row (2.7 and 2.2 us for [32, 10] rows and their gradient, 0.6 and
    0.65 us so; AMD EPYC, AVX2, one thread). A row's sum of exponentials is a left fold."""
    plan = src.plan
    rows, n = x.shape
    block = max(1, _BLOCK // n) if isinstance(rows, Expr) else max(1, min(rows, _BLOCK // n))
    lines = [f"    for (long r0 = 0; r0 < {rows}; r0 += {block}) {{",
             f"        const long nb = {rows} - r0 < {block} ? {rows} - r0 : {block};",
             f"        const {t}* xb = {src.pointer(x)} + {x.offset} + r0*{n};",
             # the gradient may be written over the logits (each element after its read)
             f"        {t}* e = {src.pointer(out)} + r0*{n};" if backward else f"        {t} e[{block * n}], s[{block}];",
             f"        {t} m[{block}];",
             "        for (long r = 0; r < nb; r++) {",
             f"            {t} mr = -INFINITY; int nan = 0;",
             f"            for (long j = 0; j < {n}; j++) {{ mr = xb[r*{n} + j] > mr ? xb[r*{n} + j] : mr; nan |= xb[r*{n} + j] != xb[r*{n} + j]; }}",
             "            m[r] = nan ? NAN : mr;",
             f"            for (long j = 0; j < {n}; j++) e[r*{n} + j] = xb[r*{n} + j] - m[r];",
             "        }",
             "        #pragma omp simd",
             f"        for (long i = 0; i < nb*{n}; i++) e[i] = em_exp{sfx}(e[i]);"]
    if not backward:
        return ["    double total = 0;", *lines,
                "        for (long r = 0; r < nb; r++) {",
                f"            {t} sr = 0;",
                f"            for (long j = 0; j < {n}; j++) sr += e[r*{n} + j];",
                "            s[r] = sr;", "        }",
                "        #pragma omp simd",
                f"        for (long r = 0; r < nb; r++) s[r] = em_log{sfx}(s[r]);",
                "        for (long r = 0; r < nb; r++) {",
                "            int64_t c = target[r0 + r];",
                f"            if (c != {ignore}) total += (double)-((xb[r*{n} + c] - m[r]) - s[r]);", "        }", "    }",
                f"    *{src.pointer(out)} = ({t})({'total / count' if mean else 'total'});",
                "    return 0;", "}"]
    g = plan.loc[node.args[0]]
    return [f"    {t} scale = ({src.pointer(g)}[{g.offset}]{' / count' if mean else ''});", *lines,
            "        for (long r = 0; r < nb; r++) {",
            f"            {t}* y = e + r*{n};",
            "            int64_t c = target[r0 + r];",
            f"            if (c == {ignore}) {{ for (long j = 0; j < {n}; j++) y[j] = 0; continue; }}",
            f"            {t} sr = 0;",
            f"            for (long j = 0; j < {n}; j++) sr += y[j];",
            f"            {t} k = scale / sr;",
            f"            for (long j = 0; j < {n}; j++) y[j] *= k;",
            "            y[c] -= scale;", "        }", "    }", "    return 0;", "}"]
