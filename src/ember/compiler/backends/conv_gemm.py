"""im2col + BLAS kernels for 2-D convolutions: ``Conv``, ``ConvTranspose`` (the input gradient)
and ``ConvWeight`` (the weight gradient), the variant :mod:`.conv`'s direct loops are timed
against.

Each sample's windows are copied into a (C_in*kh*kw, H_out*W_out) buffer (im2col: row
(c, i, j) is input channel c shifted by kernel offset (i, j), so each row is made of
contiguous slices of input rows), the samples of a block side by side in each row (a block:
enough samples for 256 positions, :func:`samples_per_product`; one where a sample has them), and
one BLAS product per group and block does the arithmetic:

* ``Conv``: y_n[g] = W[g] @ cols_n[g], the product written in NCHW order (straight into y for
  a block of one sample; a block of several has each sample's run of positions copied out,
  adding the bias); any fused loop runs on the block right after. Produced position-major and
  transposed instead, it ran 10-20% slower (512 channels on 4x4 planes, batch 8: 7.8 against
  6.9 ms; 64 -> 128 channels, stride 2 on 32x32: 3.9 against 3.3; AMD EPYC, one thread);
* ``ConvTranspose``: cols = W[g]^T @ gy_n[g], position-major with each window ordered as the
  weight (channel, i, j), then col2im adds every window back into a channels-last copy of the
  result (a run of channels per kernel offset, read kh*kw apart), transposed into NCHW with the
  bias. The weight is read in place: reordered into (i, j, channel) windows first, for
  contiguous runs, its copy cost more than the strided reads saved where the planes are small
  (512 channels on 4x4 planes, batch 8: 8.4 against 6.9 ms; AMD EPYC, one thread);
* ``ConvWeight``: gW[g] += gy_n[g] @ cols_n[g]^T over the blocks (a block of several samples
  copies their gradients side by side, as for ``ConvTranspose``), the product written straight
  into the gradient's (C_out, C_in/groups*kh*kw) layout: produced transposed and then
  transposed back, the 9.4 MB gradient of a 512-channel 3x3 layer took 11.9 ms instead of 7.1
  (strided reads; AMD EPYC, one thread). The windows are copied
  again rather than kept from the forward: reading a kept buffer (all samples, 4.7 MB for
  bench_compile's Conv2d row) from memory cost more than copying the windows into one sample's
  buffer that stays in cache (weight gradient 1.34 -> 1.07 ms, and the forward 1.51 -> 1.34 ms
  without the kept copies; AMD EPYC, one thread).

Operands with other strides (a broadcast gradient of ``out.sum()``) are copied into a
contiguous block first. The loops are shape-generic (session 31): one C function per kind and
dtype reads the sizes, strides and scratch from an ``em_im2col_args`` (:data:`ARGS`), in a
translation unit of its own whose text is the same in every graph (:func:`support`; its object
is cached by content: compiled once per machine, then linked), and each node's kernel is a few
lines that fill the struct and own the scratch (:func:`gemm_kernel`). Unrolled per shape, a
CIFAR ResNet-18 step's 18 such kernels had been 1.5 s of its 3.8 s of gcc. Only where the
channels are few (FEW_CHANNELS: LeNet's) are a node's window copies and col2im its own loops,
unrolled for its shape, which the struct points to (session 32). The sizes are the
node's, as constants, or in a graph with size symbols C expressions read at run time: the
batch N only counts the samples the loop visits (the buffers hold one block, the last block
of the batch may be short); symbolic image sizes (H, W and their floors) make the buffers'
sizes expressions, the buffers then grown with malloc to the largest size met. One library
serves every size.
"""
import math
import re

from ..symbolic import Expr, SymbolicSizeError
from . import winograd
from .conv import (ALIGNED, _column_loops, _columns, _finish, _gemm, _geometry, _Operand, _pointer, _row_loops,
                   conv_kernel)

__all__ = ["candidate", "applicable", "gemm_kernel", "conv_variants", "samples_per_product", "support", "ARGS"]


def candidate(node):
    """Whether the im2col + BLAS variant can compute ``node``: no empty dimension but the batch
    and the image sizes, which may be symbolic (a dynamic batch: the loop over samples reads it
    at run time; every buffer is one sample's; symbolic image sizes: the column ranges are
    computed, and the buffers they size allocated, at run time)."""
    arrays = [node, *node.args[:2]]
    return all(type(a.meta["shape"][1]) is int and a.meta["shape"][1] > 0 for a in arrays) and \
        all(isinstance(n, Expr) or n > 0 for a in arrays for n in a.meta["shape"][::2] + a.meta["shape"][3:])


def _buffers(t, fname, sizes):
    """(file-scope declarations, lines for the kernel's start) of the scratch buffers ``sizes``
    ({suffix: element count}): static arrays (on cache lines, :data:`.conv.ALIGNED`), or, for a
    count that is a size expression, a pointer grown (malloc) to the largest count met so far.
    Where malloc fails the kernel returns with ``em_bad_where`` -1 (its caller,
    :func:`conv_variants`, reports it)."""
    fixed = [f"{fname}_{b}[{n}]" for b, n in sizes.items() if not isinstance(n, Expr)]
    grown = [b for b, n in sizes.items() if isinstance(n, Expr)]
    decls = ([f"static {ALIGNED} {t} {', '.join(fixed)};"] if fixed else []) + \
        [f"static {t}* {fname}_{b}; static long {fname}_{b}_n;" for b in grown]
    start = [f"    if ({fname}_{b}_n < (long)({sizes[b]})) {{ free({fname}_{b}); {fname}_{b}_n = (long)({sizes[b]}); "
             f"{fname}_{b} = malloc(sizeof({t})*{fname}_{b}_n); "
             f"if (!{fname}_{b}) {{ {fname}_{b}_n = 0; em_bad_where = -1; return; }} }}" for b in grown]
    return decls, start


def _sizes(node):
    """(N, channels of the windowed array, its H, W, rows of cols per group K, positions P)."""
    (co, cig, kh, kw) = _geometry(node)[0]
    if node.target.name == "ConvTranspose":
        n, c, h, w = node.meta["shape"]
        p = math.prod(node.args[0].meta["shape"][2:])
    else:
        n, c, h, w = node.args[0].meta["shape"]
        gy = node if node.target.name == "Conv" else node.args[1]
        p = math.prod(gy.meta["shape"][2:])
    return n, c, h, w, cig * kh * kw, p


# The arguments of the shape-generic functions (one struct for every kind and dtype; the
# pointers are the dtype's arrays). x is the windowed array read by im2col (Conv, ConvWeight:
# the input), g the gradient read as (channels, positions) rows (ConvWeight: the output
# gradient; ConvTranspose: its input), copied into ``rows`` where ``copy`` (else read in place);
# the positions are the (oh, ow) plane of Conv's output or of that gradient. Scratch, sized by
# each node's wrapper: cols the windows of a block, stage Conv's product of a block of
# several samples before its copy into NCHW, and ConvTranspose's channels-last result before
# its transposition.
ARGS = """#ifndef EM_IM2COL_ARGS
#define EM_IM2COL_ARGS
typedef struct em_im2col_args {  /* an im2col + BLAS kernel's operands, sizes and scratch (backends/conv_gemm.py) */
    const void* x; long xs[4];         /* the windowed input, its element strides */
    const void* g; long gs[4], gc;     /* the gradient read as rows, its strides and channels */
    const void* wt; const void* bias; void* y;  /* the weight, the bias or 0, the result */
    long n, c, h, w, hin, win;         /* batch; the windowed array's channels and plane, the rows and columns inside it */
    long oh, ow, kh, kw, sh, sw, dh, dw, top, left;  /* positions; the kernel's size, strides, dilation, padding */
    long co, cig, groups, per, copy;   /* output channels, input channels per group, groups, samples per block */
    void *cols, *rows, *stage;         /* scratch (see conv_gemm.py) */
    /* the windows of a sample into cols (Conv, ConvWeight); ConvTranspose's col2im of a sample */
    void (*im2col)(const struct em_im2col_args* restrict a, const void* restrict x, void* restrict cols, long ld);
    void (*col2im)(const struct em_im2col_args* restrict a, const void* restrict cols, void* restrict stage);
} em_im2col_args;
#endif
"""
_CALL = re.compile(r"\bem_im2col_(?:conv|weight|transpose)_(float|double)\(")
_PARTS = ("cols", "col2im")  # the generic windows and col2im, compiled where a node points to them


def _functions(t):
    """{part: C} of the shape-generic im2col + BLAS functions of dtype ``t``: "" the drivers
    ``em_im2col_conv_<t>`` (one block of samples of a Conv, from ``n0``), ``em_im2col_weight_<t>``
    (ConvWeight) and ``em_im2col_transpose_<t>`` (ConvTranspose), which call a node's
    ``im2col`` and ``col2im``; "cols" and "col2im" the generic ones (a node with few channels
    has its own: :func:`_im2col`, :func:`_col2im`). With their helpers: the windows of a sample
    (im2col: row (c, i, j) of ``cols`` is channel c shifted by kernel offset (i, j), zeros
    where a window leaves the input, each run of a row copied with memcpy: GCC 12 at -O3
    -march=native gave wrong results for the same copy written as a loop, right at -O2), a
    block's gradient rows, and the transposition of a (rows, cols) array in blocks of rows that
    stay in L1 while every column reads them (adding the bias: adding 0 would make -0.0 0.0)."""
    f = f"em_im2col_{{}}_{t}"
    ranges = ["            const long off = j*a->dw - a->left, last = a->win - 1 - off;",
              "            const long lo0 = off >= 0 ? 0 : (-off + a->sw - 1)/a->sw, lo = lo0 < ow ? lo0 : ow;",
              "            const long hi0 = last >= 0 ? last/a->sw + 1 : 0, hi = hi0 < lo ? lo : hi0 > ow ? ow : hi0;"]
    sizes = ["    const long p = a->oh*a->ow, k = a->cig*a->kh*a->kw, ld = a->per*p, co = a->co, cog = co/a->groups;"]
    windows = [
        # Rows are short on small planes (4x4: 147k rows of 4 values in a 512-channel layer's
        # block): each range is computed once per kernel column, a short run is a plain loop,
        # never vectorised (a vector loop's set-up, or a call of memset or memcpy, cost such a
        # layer 12%), a long one memset or memcpy; and rows of 4, 8 and 16 have copies of the
        # loops with the width a constant (the body inlined into each case of the switch)
        "#if defined(__GNUC__) && !defined(__clang__)",
        "#define EM_IM2COL_SCALAR __attribute__((optimize(\"no-tree-vectorize\", \"no-tree-loop-distribute-patterns\")))",
        "#else",
        "#define EM_IM2COL_SCALAR",
        "#endif",
        # a row of n values (n a run-time size: small planes' rows of 10 or 28 in LeNet) as 32-
        # and 16-byte copies of a constant size (moves, no call), the last one overlapping the one
        # before: each row a call of memcpy cost LeNet's 14x14 Conv 50% against per-shape code
        f"static inline __attribute__((always_inline)) EM_IM2COL_SCALAR void {f.format('row')}({t}* restrict r, const {t}* restrict s, long n) {{",
        f"    enum {{ V = 32/sizeof({t}) }};",
        "    if (n >= V) {",
        "        long q = 0;",
        "        for (; q + V <= n; q += V) memcpy(r + q, s + q, 32);",
        "        if (q < n && n - q <= V/2) memcpy(r + n - V/2, s + n - V/2, 16);",
        "        else if (q < n) memcpy(r + n - V, s + n - V, 32);",
        "    } else if (n >= V/2) { memcpy(r, s, 16); memcpy(r + n - V/2, s + n - V/2, 16); }",
        "    else for (long q = 0; q < n; q++) r[q] = s[q];",
        "}",
        f"static __attribute__((noinline)) void {f.format('strided')}(const {t}* restrict pi, {t}* restrict r, long oh, long ow, long rs) {{",
        "    for (long y = 0; y < oh; y++) for (long q = 0; q < ow; q++) r[y*ow + q] = pi[y*rs + 2*q];",
        "}",
        f"static inline __attribute__((always_inline)) EM_IM2COL_SCALAR void {f.format('windows')}(",
        f"        const em_im2col_args* restrict a, const {t}* xs, {t}* restrict cols, long ld, const long ow) {{",
        "    const long kh = a->kh, kw = a->kw, oh = a->oh, sw = a->sw, unit = a->sw*a->xs[3] == 1;",
        # a small plane at stride 1 or 2: each channel copied into a zero-bordered plane of the
        # rows and columns its windows read (read in place where the windows need no border:
        # the copy cost LeNet's 14x14 forward 5%), then every window row one copy of ow values
        # (no tests, no ranges; 512 channels on 4x4 planes: 10% of the forward), at stride 2 by
        # a vectorised loop (:func:`_functions`' ``strided``)
        "    const long ph = (oh - 1)*a->sh + (kh - 1)*a->dh + 1, pw = (ow - 1)*sw + (kw - 1)*a->dw + 1;",
        "    if ((sw == 1 || sw == 2) && ph*pw <= 4096) {",
        f"        {t} pad[ph*pw];",
        "        const long n = a->win < pw - a->left ? a->win : pw - a->left;",
        "        const int inside = a->top == 0 && a->left == 0 && ph <= a->hin && pw <= a->win && a->xs[3] == 1;",
        "        const long pitch = inside ? a->xs[2] : pw;",
        "        for (long c = 0; c < a->c; c++) {",
        f"            const {t}* plane = xs + c*a->xs[1];",
        "            if (!inside) {",
        f"                memset(pad, 0, sizeof({t})*ph*pw);",
        "                for (long r = 0; r < ph; r++) {",
        "                    const long ih = r - a->top;",
        "                    if (ih < 0 || ih >= a->hin) continue;",
        f"                    const {t}* xr = plane + ih*a->xs[2];",
        f"                    {t}* restrict pr = pad + r*pw + a->left;",
        f"                    if (a->xs[3] == 1) {{ if (n > 0) memcpy(pr, xr, sizeof({t})*n); }} else for (long q = 0; q < n; q++) pr[q] = xr[q*a->xs[3]];",
        "                }",
        "                plane = pad;",
        "            }",
        "            for (long i = 0; i < kh; i++) for (long j = 0; j < kw; j++) {",
        f"                {t}* restrict r = cols + ((c*kh + i)*kw + j)*ld;",
        f"                const {t}* restrict pi = plane + i*a->dh*pitch + j*a->dw;",
        f"                if (sw == 2) {f.format('strided')}(pi, r, oh, ow, a->sh*pitch);",
        f"                else for (long y = 0; y < oh; y++) {f.format('row')}(r + y*ow, pi + y*a->sh*pitch, ow);",
        "            }",
        "        }",
        "        return;",
        "    }",
        "    long los[kw], his[kw], offs[kw];",
        "    for (long j = 0; j < kw; j++) {",
        *["    " + ln for ln in ranges],
        "        los[j] = lo, his[j] = hi, offs[j] = off;",
        "    }",
        "    for (long c = 0; c < a->c; c++) for (long i = 0; i < kh; i++) for (long j = 0; j < kw; j++) {",
        f"        const {t}* xp = xs + c*a->xs[1];",
        f"        {t}* restrict r = cols + ((c*kh + i)*kw + j)*ld;",
        "        const long lo = los[j], hi = his[j], off = offs[j];",
        "        for (long y = 0; y < oh; y++) {",
        f"            {t}* restrict ro = r + y*ow;",
        "            const long ih = y*a->sh - a->top + i*a->dh;",
        "            if (ih < 0 || ih >= a->hin) {",
        f"                if (ow >= 32) memset(ro, 0, sizeof({t})*ow); else for (long q = 0; q < ow; q++) ro[q] = 0;",
        "                continue;",
        "            }",
        f"            const {t}* xr = xp + ih*a->xs[2];",
        f"            if (unit && lo == 0 && hi == ow) {{ memcpy(ro, xr + off, sizeof({t})*ow); continue; }}  /* (a constant size: moves) */",
        "            for (long q = 0; q < lo; q++) ro[q] = 0;",
        f"            if (unit && hi - lo >= 32) memcpy(ro + lo, xr + lo + off, sizeof({t})*(hi - lo));",
        "            else if (unit) for (long q = lo; q < hi; q++) ro[q] = xr[q + off];",
        "            else if (a->xs[3] == 1) for (long q = lo; q < hi; q++) ro[q] = xr[q*sw + off];",
        "            else for (long q = lo; q < hi; q++) ro[q] = xr[(q*sw + off)*a->xs[3]];",
        "            for (long q = hi; q < ow; q++) ro[q] = 0;",
        "        }",
        "    }",
        "}",
        f"EM_IM2COL_SCALAR void {f.format('cols')}(const em_im2col_args* restrict a, const void* restrict xv, void* restrict cv, long ld) {{",
        f"    const {t}* xs = xv;",
        f"    {t}* restrict cols = cv;",
        "    switch (a->ow) {",
        *[f"    case {w}: {f.format('windows')}(a, xs, cols, ld, {w}); break;" for w in (4, 8, 16)],
        f"    default: {f.format('windows')}(a, xs, cols, ld, a->ow);",
        "    }",
        "}", ""]
    drivers = [
        f"static const {t}* {f.format('rows')}(const em_im2col_args* restrict a, long n0, long ns, long* ld) {{",
        f"    const {t}* g = a->g;",
        "    if (!a->copy) { *ld = a->gs[1]; return g + n0*a->gs[0]; }",
        f"    {t}* restrict rows = a->rows;",
        "    const long oh = a->oh, ow = a->ow, p = oh*ow;",
        "    *ld = a->per*p;",
        "    for (long s = 0; s < ns; s++) for (long c = 0; c < a->gc; c++) {",
        f"        const {t}* gp = g + (n0 + s)*a->gs[0] + c*a->gs[1];",
        f"        {t}* restrict rp = rows + c*a->per*p + s*p;",
        f"        if (a->gs[3] == 1 && (oh == 1 || a->gs[2] == ow)) {{ memcpy(rp, gp, sizeof({t})*p); continue; }}",
        "        for (long y = 0; y < oh; y++) for (long x = 0; x < ow; x++) rp[y*ow + x] = gp[y*a->gs[2] + x*a->gs[3]];",
        "    }",
        "    return rows;",
        "}",
        # strips of 8 rows, each column's 8 values one store (a loop over a sample's 16 positions
        # with run-time bounds cost a 512-channel 4x4 layer 12%), then the rows left
        f"static void {f.format('flip')}(const {t}* restrict a, {t}* restrict y, long rows, long cols, const {t}* restrict b) {{",
        "    long q0 = 0;",
        "    for (; q0 + 8 <= rows; q0 += 8) for (long c = 0; c < cols; c++) {",
        f"        const {t}* restrict ac = a + q0*cols + c;",
        f"        {t}* restrict yc = y + c*rows + q0;",
        "        if (b) for (int e = 0; e < 8; e++) yc[e] = ac[e*cols] + b[c];",
        "        else for (int e = 0; e < 8; e++) yc[e] = ac[e*cols];  /* (adding 0 would make -0.0 0.0) */",
        "    }",
        "    for (long c = 0; c < cols; c++) for (long q = q0; q < rows; q++) y[c*rows + q] = a[q*cols + c] + (b ? b[c] : 0);",
        "}",
        # a block's product (channel-major, its samples side by side) copied out sample by sample,
        # adding the bias; the sample's positions a constant for the small planes' runs
        f"static inline __attribute__((always_inline)) void {f.format('runs')}(const {t}* restrict yt, {t}* restrict y,",
        f"        long ns, long co, long ld, const {t}* restrict b, const long p) {{",
        "    for (long s = 0; s < ns; s++) for (long c = 0; c < co; c++) {",
        f"        const {t}* restrict r = yt + c*ld + s*p;",
        f"        {t}* restrict o = y + (s*co + c)*p;",
        "        if (b) for (long q = 0; q < p; q++) o[q] = r[q] + b[c];",
        "        else for (long q = 0; q < p; q++) o[q] = r[q];  /* (adding 0 would make -0.0 0.0) */",
        "    }",
        "}",
        f"static void {f.format('place')}(const {t}* restrict yt, {t}* restrict y, long ns, long co, long ld, const {t}* restrict b, long p) {{",
        "    switch (p) {",
        *[f"    case {q}: {f.format('runs')}(yt, y, ns, co, ld, b, {q}); break;" for q in (4, 16, 64)],
        f"    default: {f.format('runs')}(yt, y, ns, co, ld, b, p);",
        "    }",
        "}",
        # Conv: the product in NCHW order, straight into y for a block of one sample, else into
        # stage and copied out (see the module's docstring)
        f"void {f.format('conv')}(const em_im2col_args* restrict a, long n0) {{",
        *sizes,
        "    const long ns = n0 + a->per < a->n ? a->per : a->n - n0, ldc = a->per == 1 ? p : ld;",
        f"    const {t}* x = a->x;",
        f"    const {t}* restrict b = a->bias;",
        f"    {t}* restrict cols = a->cols;",
        f"    {t}* y = ({t}*)a->y + n0*co*p;",
        f"    {t}* yt = a->per == 1 ? y : ({t}*)a->stage;",
        "    em_blas_threads(cog*k*ld);",
        "    for (long s = 0; s < ns; s++) a->im2col(a, x + (n0 + s)*a->xs[0], cols + s*p, ld);",
        "    for (long g = 0; g < a->groups; g++)",
        "        " + _gemm(t, "N", "N", "ns*p", "cog", "k", "cols + g*k*ld", "ld", f"({t}*)a->wt + g*cog*k", "k", 0,
                           "yt + g*cog*ldc", "ldc"),
        f"    if (a->per > 1) {f.format('place')}(yt, y, ns, co, ld, b, p);",
        "    else if (b) for (long c = 0; c < co; c++) for (long q = 0; q < p; q++) y[c*p + q] += b[c];",
        "}",
        f"void {f.format('weight')}(const em_im2col_args* restrict a) {{",
        *sizes,
        f"    const {t}* x = a->x;",
        f"    {t}* restrict cols = a->cols;",
        f"    {t}* restrict y = a->y;",
        "    em_blas_threads(cog*k*ld);",
        f"    if (a->n == 0) memset(y, 0, sizeof({t})*co*k);  /* no sample: a zero gradient */",
        "    for (long n0 = 0; n0 < a->n; n0 += a->per) {",
        "        const long ns = n0 + a->per < a->n ? a->per : a->n - n0;",
        "        long ldg;",
        "        for (long s = 0; s < ns; s++) a->im2col(a, x + (n0 + s)*a->xs[0], cols + s*p, ld);",
        f"        const {t}* gy = {f.format('rows')}(a, n0, ns, &ldg);",
        "        for (long g = 0; g < a->groups; g++)",
        "            " + _gemm(t, "T", "N", "k", "cog", "ns*p", "cols + g*k*ld", "ld", "gy + g*cog*ldg", "ldg",
                               "n0 ? 1 : 0", "y + g*cog*k", "k"),  # (straight into the gradient's layout)
        "    }",
        "}",
        f"void {f.format('transpose')}(const em_im2col_args* restrict a) {{",
        "    const long p = a->oh*a->ow, k = a->cig*a->kh*a->kw, ld = a->per*p;",
        "    const long c = a->c, h = a->h, w = a->w, groups = a->groups;",
        "    const long cxg = a->gc/groups, width = groups*k;",
        f"    const {t}* restrict wt = a->wt;",
        f"    {t}* restrict cols = a->cols;",
        f"    {t}* restrict ycl = a->stage;",
        "    em_blas_threads(cxg*k*ld);",
        "    for (long n0 = 0; n0 < a->n; n0 += a->per) {",
        "        const long ns = n0 + a->per < a->n ? a->per : a->n - n0;",
        "        long ldg;",
        f"        const {t}* gy = {f.format('rows')}(a, n0, ns, &ldg);",
        "        for (long g = 0; g < groups; g++)",
        "            " + _gemm(t, "N", "T", "k", "ns*p", "cxg", "wt + g*cxg*k", "k", "gy + g*cxg*ldg", "ldg", 0,
                               "cols + g*k", "width"),
        "        for (long sn = 0; sn < ns; sn++) {",
        "            a->col2im(a, cols + sn*p*width, ycl);",
        f"            {f.format('flip')}(ycl, ({t}*)a->y + (n0 + sn)*c*h*w, h*w, c, a->bias);",
        "        }",
        "    }",
        "}", ""]
    col2im = [  # ConvTranspose's col2im of one sample (see the module's docstring)
        f"void {f.format('col2im')}(const em_im2col_args* restrict a, const void* restrict cv, void* restrict yv) {{",
        "    const long c = a->c, h = a->h, w = a->w, groups = a->groups, cig = a->cig, kh = a->kh, kw = a->kw, ow = a->ow;",
        "    const long window = kh*kw, k = cig*window, width = groups*k;",
        f"    const {t}* restrict cols = cv;",
        f"    {t}* restrict ycl = yv;",
        "    long los[kw], his[kw], offs[kw];",
        "    for (long j = 0; j < kw; j++) {",
        *ranges,
        "        los[j] = lo, his[j] = hi, offs[j] = off;",
        "    }",
        f"    memset(ycl, 0, sizeof({t})*h*w*c);",
        "    for (long y = 0; y < a->oh; y++) for (long i = 0; i < kh; i++) {",
        "        const long ih = y*a->sh - a->top + i*a->dh;",
        "        if (ih < 0 || ih >= h) continue;",
        f"        {t}* restrict orow = ycl + ih*w*c;",
        f"        const {t}* restrict crow = cols + y*ow*width;",
        "        for (long j = 0; j < kw; j++) for (long q = los[j]; q < his[j]; q++) {",
        f"            {t}* restrict o = orow + (q*a->sw + offs[j])*c;",
        f"            const {t}* restrict s = crow + q*width + i*kw + j;  /* (the weight's order: channels kh*kw apart) */",
        "            for (long g = 0; g < groups; g++) {",
        "                #pragma GCC ivdep",
        "                for (long ci = 0; ci < cig; ci++) o[g*cig + ci] += s[g*k + ci*window];",
        "            }",
        "        }",
        "    }",
        "}", ""]
    return {"": "\n".join(drivers), "cols": "\n".join(windows), "col2im": "\n".join(col2im)}


def support(program):
    """(declarations, units) of the shape-generic functions the im2col + BLAS kernels in
    ``program`` (C text) call: :data:`ARGS` and their prototypes, for every unit; and one
    translation unit per dtype called, the same text in every graph that calls the same parts
    (the generic windows and col2im where a node points to them, :data:`_PARTS`: a graph whose
    nodes all have their own, LeNet's, compiles neither; the unit's object, cached by its
    content, compiles once and every later graph links it)."""
    used = sorted(set(_CALL.findall(program)))
    if not used:
        return "", []
    declarations = [ARGS] + [f"void em_im2col_conv_{t}(const em_im2col_args* restrict a, long n0);\n"
                             f"void em_im2col_weight_{t}(const em_im2col_args* restrict a);\n"
                             f"void em_im2col_transpose_{t}(const em_im2col_args* restrict a);\n"
                             f"void em_im2col_cols_{t}(const em_im2col_args* restrict a, const void* restrict x, "
                             "void* restrict cols, long ld);\n"
                             f"void em_im2col_col2im_{t}(const em_im2col_args* restrict a, const void* restrict cols, "
                             "void* restrict stage);\n" for t in used]
    units = []
    for t in used:
        parts = _functions(t)
        units.append(ARGS + parts[""] + "".join(parts[n] for n in _PARTS if f"em_im2col_{n}_{t}" in program))
    return "".join(declarations), units


def _copied(src, node, p, per):
    """Whether a gradient operand is copied into ``rows`` (see :data:`ARGS`) rather than read
    in place: unless the block is one sample (``per`` 1) whose channels' positions are
    contiguous."""
    a = _Operand(src, node)
    h, w = node.meta["shape"][2:]
    try:
        expected, flat = 1, bool(a.strides[1] >= p)
    except SymbolicSizeError:  # symbolic sizes: in place where the strides are the positions'
        expected, flat = 1, bool(a.strides[1] == p)
    for size, stride in reversed([(h, a.strides[2]), (w, a.strides[3])]):
        flat &= bool(size == 1) or bool(stride == expected)
        expected *= size
    return not (flat and per == 1)


# Samples per product: one sample's positions make a narrow product where the image is small
# (a CIFAR ResNet-18's 512-channel layers: 4x4 = 16 columns, the weight, 9.4 MB, packed and read
# again for every sample), so a block of samples makes at least this many positions, within
# the batch and with its windows' buffer at most BLOCK_BYTES. OpenBLAS (AMD EPYC, one thread) on
# [512x4608] @ [4608xP]: 15 GMAC/s position-major at P = 16, 37 at 128, 45 at 256.
BLOCK_POSITIONS = 256
BLOCK_BYTES = 8 << 20


def samples_per_product(node, itemsize):
    """How many samples one block of :func:`gemm_kernel` multiplies at once (see
    BLOCK_POSITIONS): 1 where a sample has that many positions or a size is symbolic but the
    batch (whose last block may be short)."""
    n, _, _, _, k, p = _sizes(node)
    if isinstance(p, Expr) or p >= BLOCK_POSITIONS:
        return 1
    per = -(-BLOCK_POSITIONS // p)
    per = per if isinstance(n, Expr) else min(per, n)
    return max(1, min(per, BLOCK_BYTES // (itemsize * _geometry(node)[4] * k * p)))


# Few channels make little work per kernel offset, where the generic loops' run-time counts
# cost most: arrays of fewer channels than this have their windows copied (:func:`_im2col`),
# and groups of fewer a ConvTranspose's col2im (:func:`_col2im`), by loops unrolled for the
# node's shape. Generic, LeNet's step took 2.7 instead of 1.9 ms (the loop over a group's
# channels at a run-time count, 6, cost its second layer's input gradient 2.8x the unrolled
# adds; rows of 10 values at a run-time width its forward 10%).
FEW_CHANNELS = 16


def _im2col(node, fname, t, ld, strides):
    """C lines of ``static void fname_im2col(const void* x, void* cols)``, the windows of one
    sample (the generic loops', see :data:`ARGS`) with the node's sizes as constants (each
    kernel column's range of positions one copy per row), for an input of few channels
    (FEW_CHANNELS), sizes and element ``strides`` that are numbers, unit column strides; else []."""
    (_, _, kh, kw), (sh, sw), ((top, bottom), (left, right)), (dh, dw), _ = _geometry(node)
    x = node.args[0]
    _, c, h, w = x.meta["shape"]
    oh, ow = (node if node.target.name == "Conv" else node.args[1]).meta["shape"][2:]
    if c >= FEW_CHANNELS or any(isinstance(n, Expr) for n in (h, w, oh, ow, ld, *strides)) or strides[3] != 1:
        return []
    h_in, w_in = h + min(bottom, 0), w + min(right, 0)
    lines = [f"static void {fname}_im2col(const em_im2col_args* restrict a, const void* restrict xv, void* restrict cv, long ld) {{",
             f"    const {t}* restrict xs = xv;", f"    {t}* restrict cols = cv;", "    (void)a, (void)ld;",
             f"    for (long c = 0; c < {c}; c++) for (long i = 0; i < {kh}; i++) {{",
             f"        const {t}* xp = xs + c*{strides[1]};"]
    for j in range(kw):
        off = j * dw - left
        lo, hi = _columns(off, sw, w_in, ow)
        lines += [f"        {{ {t}* restrict r = cols + ((c*{kh} + i)*{kw} + {j})*{ld};",
                  f"          for (long oh = 0; oh < {oh}; oh++) {{",
                  f"            {t}* restrict ro = r + oh*{ow};",
                  f"            const long ih = oh*{sh} - {top} + i*{dh};",
                  f"            if (ih < 0 || ih >= {h_in}) {{ memset(ro, 0, sizeof({t})*{ow}); continue; }}",
                  f"            const {t}* xr = xp + ih*{strides[2]};",
                  *([f"            memset(ro, 0, sizeof({t})*{lo});"] if lo > 0 else []),
                  *([f"            for (long q = {lo}; q < {hi}; q++) ro[q] = xr[q*{sw} + {off}];" if sw > 1 else
                     f"            memcpy(ro + {lo}, xr + {lo + off}, sizeof({t})*{hi - lo});"] if hi > lo else []),
                  *([f"            memset(ro + {hi}, 0, sizeof({t})*{ow - hi});"] if hi < ow else []),
                  "        } }"]
    return lines + ["    }", "}"]


def _col2im(node, fname, t):
    """C lines of ``static void fname_col2im(const void* cols, void* stage)``, a ConvTranspose's
    col2im of one sample (the generic function's, see the module's docstring) with the node's
    sizes as constants, for groups of few channels (FEW_CHANNELS) and sizes that are numbers;
    else []."""
    (_, cig, kh, kw), (sh, sw), ((top, _), (left, _)), (dh, dw), groups = _geometry(node)
    _, c, h, w = node.meta["shape"]
    oh, ow = node.args[0].meta["shape"][2:]
    if cig >= FEW_CHANNELS or any(isinstance(n, Expr) for n in (h, w, oh, ow)):
        return []
    k = cig * kh * kw
    add = (f"{{ {t}* restrict o = orow + @col@*{c}; const {t}* restrict s = crow + q*{groups * k} + i*{kw} + @j@; "
           f"for (long g = 0; g < {groups}; g++) for (long ci = 0; ci < {cig}; ci++) o[g*{cig} + ci] += s[g*{k} + ci*{kh * kw}]; }}")
    return [f"static void {fname}_col2im(const em_im2col_args* restrict a, const void* restrict cv, void* restrict yv) {{",
            f"    const {t}* restrict cols = cv;", f"    {t}* restrict ycl = yv;", "    (void)a;",
            f"    memset(ycl, 0, sizeof({t})*{h * w * c});",
            *_row_loops(oh, kh, sh, dh, top, h, "    "),
            f"            {t}* restrict orow = ycl + ih*{w * c};",
            f"            const {t}* restrict crow = cols + oh*{ow * groups * k};",
            *_column_loops(kw, sw, dw, left, w, ow, lambda j, col: add.replace("@col@", col).replace("@j@", str(j)),
                           "            "),
            "        }", "    }", "}"]


def _list(values):
    return "{" + ", ".join(map(str, values)) + "}"


def gemm_kernel(src, node, fname, t, epilogue=None):
    """C lines of ``static void fname(void** p)`` computing ``node`` through im2col + BLAS: its
    sizes, strides and scratch (static, or grown with malloc where a size is symbolic:
    :func:`_buffers`) in an ``em_im2col_args`` handed to the shape-generic functions
    (:func:`support`), ``per`` samples at a time (:func:`samples_per_product`); ``epilogue``: as
    :func:`.conv.conv_kernel`'s, run on each block of a Conv."""
    name = node.target.name
    (co, cig, kh, kw), (sh, sw), ((top, bottom), (left, right)), (dh, dw), groups = _geometry(node)
    n, c, h, w, k, p = _sizes(node)
    out = src.plan.loc[node]
    per = samples_per_product(node, 4 if t == "float" else 8)
    ld = per * p  # positions of a block's rows
    x = _Operand(src, node.args[0]) if name != "ConvTranspose" else None
    gnode = {"ConvWeight": node.args[1], "ConvTranspose": node.args[0]}.get(name)
    g = _Operand(src, gnode) if gnode is not None else None
    gc = gnode.meta["shape"][1] if gnode is not None else 0
    copy = gnode is not None and _copied(src, gnode, p, per)
    oh, ow = (node if name == "Conv" else node.args[1] if name == "ConvWeight" else node.args[0]).meta["shape"][2:]
    hin, win = (h, w) if name == "ConvTranspose" else (h + min(bottom, 0), w + min(right, 0))
    stage = {"Conv": ld * co if per > 1 else 1, "ConvWeight": 1, "ConvTranspose": h * w * c}[name]
    sizes = {"cols": groups * k * ld, "rows": gc * ld if copy else 1, "stage": stage}
    decls, start = _buffers(t, fname, sizes)
    bias = node.args[2] if name != "ConvWeight" and len(node.args) > 2 and node.args[2] is not None else None
    fields = {"x": x.base if x else 0, "xs": _list(x.strides if x else (0,) * 4), "g": g.base if g else 0,
              "gs": _list(g.strides if g else (0,) * 4), "gc": gc,
              "wt": _pointer(src, node.args[1]) if name != "ConvWeight" else 0,
              "bias": _pointer(src, bias) if bias is not None else 0, "y": src.pointer(out),
              "n": n, "c": c, "h": h, "w": w, "hin": hin, "win": win, "oh": oh, "ow": ow, "kh": kh, "kw": kw,
              "sh": sh, "sw": sw, "dh": dh, "dw": dw, "top": top, "left": left, "co": co, "cig": cig,
              "groups": groups, "per": per, "copy": int(copy)} | {b: f"{fname}_{b}" for b in sizes}
    im2col = _im2col(node, fname, t, ld, x.strides) if x else []
    col2im = _col2im(node, fname, t) if name == "ConvTranspose" else []
    own = {"im2col": im2col, "col2im": col2im}
    fields |= {f: f"{fname}_{f}" if own[f] else f"em_im2col_{part}_{t}" if (name == "ConvTranspose") == (f == "col2im")
               else 0 for f, part in zip(own, _PARTS)}
    init = "{" + ", ".join(f".{f} = {v}" for f, v in fields.items()) + "}"
    if name == "Conv":
        rows = bool(epilogue and epilogue[1])
        body = [f"    for (long n0 = 0; n0 < {n}; n0 += {per}) {{",
                *([f"        const long ns = n0 + {per} < {n} ? {per} : {n} - n0;"] if rows else []),
                f"        em_im2col_conv_{t}(&a, n0);",
                *_finish(epilogue, f"n0*{co * out.shape[2]}", f"(n0 + ns)*{co * out.shape[2]}"),
                "    }", *_finish(epilogue, None, None)]
    else:
        body = [f"    em_im2col_{'weight' if name == 'ConvWeight' else 'transpose'}_{t}(&a);"]
    return [f"/* im2col + BLAS {name} {list(node.args[0].meta['shape'])} -> {list(out.shape)}, weight "
            f"[{co}, {cig}, {kh}, {kw}], groups {groups}, {per} samples per product: {name}({node.name}) */",
            *decls, *im2col, *col2im, f"static void {fname}(void** restrict p) {{", *start,
            f"    const em_im2col_args a = {init};", *body, "}"]


def conv_variants(src, node, fname, t, epilogue, variants=None):
    """C lines of ``int fname(void** p, int choice)`` (exported, for timing) running variant
    ``choice`` of ``variants`` (default: every one that applies, :func:`applicable`): 0 the
    direct loops of :func:`.conv.conv_kernel`, 1 im2col + BLAS, 2 and 3 Winograd F(2, 3) and
    F(4, 3) (:mod:`.winograd`). It returns 1 where a scratch buffer could not be allocated
    (:func:`_buffers`), else 0."""
    variants = applicable(node, src.plan.have_blas) if variants is None else variants
    lines = []
    for v in sorted(variants):
        name = f"{fname}_{v}"
        if v == 0:
            lines += conv_kernel(src, node, name, t, epilogue)
        elif v == 1:
            lines += gemm_kernel(src, node, name, t, epilogue)
        else:
            lines += winograd.winograd_kernel(src, node, name, t, 2 * v - 2, epilogue)
    calls = " else ".join(f"if (choice == {v}) {fname}_{v}(p);" for v in variants[1:])
    return lines + [f"int {fname}(void** restrict p, int choice) {{ (void)choice; em_bad_where = 0;",
                    f"    {calls + ' else ' if calls else ''}{fname}_{variants[0]}(p);",
                    "    return em_bad_where == -1;", "}"]


def applicable(node, have_blas):
    """The variants (see :func:`conv_variants`) that can compute ``node``: the direct loops
    always; the others need BLAS."""
    if not (have_blas and candidate(node)):
        return (0,)
    return (0, 1, 2, 3) if winograd.candidate(node) else (0, 1)
