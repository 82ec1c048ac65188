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
contiguous block first. Every size is a compile-time constant but those of a graph with size
symbols, C expressions read at run time: the batch N only counts the samples the loop visits
(the buffers hold one block, the last block of the batch may be short); symbolic image sizes
(H, W and their floors) make the products' dimensions, each kernel column's range of output
columns (computed, and tested for being empty, at run time) and the buffers' sizes
expressions, the buffers then grown with malloc to the largest size met. One library serves
every size.
"""
import math

from ..symbolic import Expr, SymbolicSizeError
from . import winograd
from .conv import _column_loops, _columns, _finish, _gemm, _geometry, _Operand, _pointer, _row_loops, conv_kernel

__all__ = ["candidate", "applicable", "gemm_kernel", "conv_variants", "samples_per_product"]


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
    ({suffix: element count}): static arrays, or, for a count that is a size expression, a
    pointer grown (malloc) to the largest count met so far. Where malloc fails the kernel
    returns with ``em_bad_where`` -1 (its caller, :func:`conv_variants`, reports it)."""
    fixed = [f"{fname}_{b}[{n}]" for b, n in sizes.items() if not isinstance(n, Expr)]
    grown = [b for b, n in sizes.items() if isinstance(n, Expr)]
    decls = ([f"static {t} {', '.join(fixed)};"] if fixed else []) + \
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


def _im2col(node, x, t, fname, ld=None):
    """``static void fname_im2col(const T* x_of_sample, T* cols)``: zeros where a window
    leaves the input; row (c, i, j) of the windows starts at ``cols + row*ld`` (``ld``: the
    block's positions, default one sample's ``p``; a block's sample b is written at
    ``cols + b*p``). Runs of a row are copied with memcpy: GCC 12 at -O3 -march=native gave
    wrong results for the same copy written as a loop here (right at -O2)."""
    (_, _, kh, kw), (sh, sw), ((top, bottom), (left, right)), (dh, dw), _ = _geometry(node)
    _, c, h, w, _, p = _sizes(node)
    _, _, h_out, w_out = (node if node.target.name == "Conv" else node.args[1]).meta["shape"]
    h_in, w_in = h + min(bottom, 0), w + min(right, 0)
    ld = p if ld is None else ld
    lines = [f"static void {fname}_im2col(const {t}* restrict xs, {t}* restrict cols) {{",
             f"    for (long c = 0; c < {c}; c++) {{",
             f"        const {t}* xp = xs + c*{x.strides[1]};",
             f"        for (long i = 0; i < {kh}; i++) {{"]
    for j in range(kw):
        off = j * dw - left
        lo, hi = _columns(off, sw, w_in, w_out)
        if isinstance(hi, str):  # symbolic sizes: the range computed (and tested) at run time
            lines += [f"            {{ {t}* restrict r = cols + ((c*{kh} + i)*{kw} + {j})*{ld};",
                      f"            const long lo = {lo}, hi = {hi} > {lo} ? {hi} : {lo};",
                      f"            for (long oh = 0; oh < {h_out}; oh++) {{",
                      f"                {t}* restrict ro = r + oh*{w_out};",
                      f"                long ih = oh*{sh} - {top} + i*{dh};",
                      f"                if (ih < 0 || ih >= {h_in}) {{ memset(ro, 0, sizeof({t})*{w_out}); continue; }}",
                      f"                const {t}* xr = xp + ih*{x.strides[2]};",
                      f"                memset(ro, 0, sizeof({t})*lo);",
                      f"                if (hi > lo) memcpy(ro + lo, xr + lo + ({off}), sizeof({t})*(hi - lo));"
                      if sw * x.strides[3] == 1 else
                      f"                for (long q = lo; q < hi; q++) ro[q] = xr[(q*{sw} + {off})*{x.strides[3]}];",
                      f"                memset(ro + hi, 0, sizeof({t})*({w_out} - hi));",
                      "            } }"]
            continue
        lines += [f"            {{ {t}* restrict r = cols + ((c*{kh} + i)*{kw} + {j})*{ld};",
                  f"            for (long oh = 0; oh < {h_out}; oh++) {{",
                  f"                {t}* restrict ro = r + oh*{w_out};",
                  f"                long ih = oh*{sh} - {top} + i*{dh};",
                  f"                if (ih < 0 || ih >= {h_in}) {{ memset(ro, 0, sizeof({t})*{w_out}); continue; }}",
                  f"                const {t}* xr = xp + ih*{x.strides[2]};"]
        if lo > 0:
            lines.append(f"                memset(ro, 0, sizeof({t})*{lo});")
        if hi > lo and sw * x.strides[3] == 1:
            lines.append(f"                memcpy(ro + {lo}, xr + {lo + off}, sizeof({t})*{hi - lo});")
        elif hi > lo:
            lines.append(f"                for (long q = {lo}; q < {hi}; q++) ro[q] = xr[(q*{sw} + {off})*{x.strides[3]}];")
        if hi < w_out:
            lines.append(f"                memset(ro + {hi}, 0, sizeof({t})*{w_out - hi});")
        lines += ["            } }"]
    return lines + ["        }", "    }", "}"]


def _rows_operand(src, node, t, fname, channels, p, per):
    """(C lines, pointer expression of the block's rows, leading dimension) of a 4-D operand
    read as (channels, positions) rows for the ``ns`` samples from ``n0``: in place when the
    block is one sample (``per`` 1) whose channels' positions are contiguous, else copied into
    ``fname_rows`` (sample s at column s*p of rows of ``per*p``)."""
    a = _Operand(src, node)
    h, w = node.meta["shape"][2:]
    try:
        expected, flat = 1, bool(a.strides[1] >= p)
    except SymbolicSizeError:  # symbolic sizes: in place where the strides are the positions'
        expected, flat = 1, bool(a.strides[1] == p)
    for size, stride in reversed([(h, a.strides[2]), (w, a.strides[3])]):
        flat &= bool(size == 1) or bool(stride == expected)
        expected *= size
    if flat and per == 1:
        return [], f"({a.plane('n0', 0)})", a.strides[1]
    copy = [f"        for (long s = 0; s < ns; s++) for (long c = 0; c < {channels}; c++) for (long y = 0; y < {h}; y++) "
            f"for (long x = 0; x < {w}; x++) {fname}_rows[c*{per * p} + s*{p} + y*{w} + x] = "
            f"({a.plane('n0 + s', 'c')}){a.at('y', 'x')};"]
    return copy, f"{fname}_rows", per * p


def _transpose(a, y, rows, cols, add):
    """Lines writing ``y`` (cols, rows) = ``a`` (rows, cols)^T (+ ``add``, a C expression of
    ``c``), in blocks of rows that stay in L1 while every column reads them."""
    block = 256
    return [f"        for (long q0 = 0; q0 < {rows}; q0 += {block}) for (long c = 0; c < {cols}; c++) {{",
            f"            const long q1 = q0 + {block} < {rows} ? q0 + {block} : {rows};",
            "            #pragma GCC ivdep",
            f"            for (long q = q0; q < q1; q++) ({y})[c*{rows} + q] = ({a})[q*{cols} + c]"
            f"{' + ' + add if add else ''};",
            "        }"]


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


def gemm_kernel(src, node, fname, t, epilogue=None):
    """C lines of ``static void fname(void** p)`` computing ``node`` through im2col + BLAS,
    ``per`` samples at a time (:func:`samples_per_product`): ``n0`` the block's first sample,
    ``ns`` its count; ``epilogue``: as :func:`.conv.conv_kernel`'s, run on each block."""
    plan = src.plan
    name = node.target.name
    (co, cig, kh, kw), (sh, sw), ((top, _), (left, _)), (dh, dw), groups = _geometry(node)
    n, c, h, w, k, p = _sizes(node)
    out = plan.loc[node]
    per = samples_per_product(node, 4 if t == "float" else 8)
    ld = per * p  # positions of a block's rows
    lines = [f"/* im2col + BLAS {name} {list(node.args[0].meta['shape'])} -> {list(out.shape)}, weight "
             f"[{co}, {cig}, {kh}, {kw}], groups {groups}, {per} samples per product: {name}({node.name}) */"]
    bias = node.args[2] if name != "ConvWeight" and len(node.args) > 2 else None
    body = [f"static void {fname}(void** restrict p) {{",
            f"    {t}* restrict y = {src.pointer(out)};"]
    if name != "ConvWeight":
        body.append(f"    const {t}* restrict wt = {_pointer(src, node.args[1])};")
    if bias is not None:
        body.append(f"    const {t}* restrict b = {_pointer(src, bias)};")
    blocks = [f"    for (long n0 = 0; n0 < {n}; n0 += {per}) {{",
              f"        const long ns = n0 + {per} < {n} ? {per} : {n} - n0;"]
    if name == "Conv":
        x, cog = _Operand(src, node.args[0]), co // groups
        # the product in NCHW: straight into y for one sample, else rows of the block's
        # samples side by side, each sample's run of positions then copied out
        plus = " + b[c]" if bias is not None else ""
        decls, start = _buffers(t, fname, {"cols": groups * k * ld} | ({} if per == 1 else {"yt": ld * co}))
        target, ldc = (f"y + n0*{co * p}", p) if per == 1 else (f"{fname}_yt", ld)
        place = ([f"        for (long c = 0; c < {co}; c++) for (long q = 0; q < {p}; q++) y[n0*{co * p} + c*{p} + q] += b[c];"]
                 if bias is not None else []) if per == 1 else [
            f"        for (long s = 0; s < ns; s++) for (long c = 0; c < {co}; c++) for (long q = 0; q < {p}; q++) "
            f"y[(n0 + s)*{co * p} + c*{p} + q] = {fname}_yt[c*{ld} + s*{p} + q]{plus};"]
        product = [f"        for (long g = 0; g < {groups}; g++)",
                   "            " + _gemm(t, "N", "N", f"ns*{p}", cog, k, f"{fname}_cols + g*{k * ld}", ld,
                                          f"wt + g*{cog * k}", k, 0, f"{target} + g*{cog}*{ldc}", ldc), *place]
        return lines + decls + _im2col(node, x, t, fname, ld) + body + start + [
            f"    em_blas_threads((long)({cog * k * ld}));", *blocks,
            f"        for (long s = 0; s < ns; s++) {fname}_im2col({x.plane('n0 + s', 0)}, {fname}_cols + s*{p});",
            *product,
            *_finish(epilogue, f"n0*{co * out.shape[2]}", f"(n0 + ns)*{co * out.shape[2]}"),
            "    }", *_finish(epilogue, None, None), "}"]
    if name == "ConvWeight":
        x, cog = _Operand(src, node.args[0]), co // groups
        copy, gy, ldg = _rows_operand(src, node.args[1], t, fname, co, p, per)
        decls, start = _buffers(t, fname, {"cols": groups * k * ld, "rows": co * ld if copy else 1})
        return lines + decls + _im2col(node, x, t, fname, ld) + body + start + [
            f"    em_blas_threads((long)({cog * k * ld}));",
            *([f"    if ({n} == 0) memset(y, 0, sizeof({t})*{co * k});  /* no sample: a zero gradient */"]
              if isinstance(n, Expr) else []), *blocks,
            f"        for (long s = 0; s < ns; s++) {fname}_im2col({x.plane('n0 + s', 0)}, {fname}_cols + s*{p});",
            *copy,
            f"        for (long g = 0; g < {groups}; g++)",
            "            " + _gemm(t, "T", "N", k, cog, f"ns*{p}", f"{fname}_cols + g*{k * ld}", ld,
                                   f"{gy} + g*{cog}*{ldg}", ldg, "n0 ? 1 : 0", f"y + g*{cog * k}", k),
            "    }", "}"]
    # ConvTranspose (see the module's docstring): position-major windows, col2im channels-last.
    cx, h_x, w_x = node.args[0].meta["shape"][1:]
    cxg, width, window = cx // groups, groups * k, kh * kw
    copy, gy, ldg = _rows_operand(src, node.args[0], t, fname, cx, p, per)
    add = (f"{{ {t}* restrict o = orow + @col@*{c}; const {t}* restrict s = crow + q*{width} + i*{kw} + @j@; "
           f"for (long g = 0; g < {groups}; g++) for (long ci = 0; ci < {cig}; ci++) o[g*{cig} + ci] += s[g*{k} + ci*{window}]; }}")
    decls, start = _buffers(t, fname, {"cols": width * ld, "rows": cx * ld if copy else 1, "ycl": h * w * c})
    return lines + decls + body + start + [
        f"    em_blas_threads((long)({cxg * k * ld}));", *blocks, *copy,
        f"        for (long g = 0; g < {groups}; g++)",
        "            " + _gemm(t, "N", "T", k, f"ns*{p}", cxg, f"wt + g*{cxg * k}", k,
                               f"{gy} + g*{cxg}*{ldg}", ldg, 0, f"{fname}_cols + g*{k}", width),
        "        for (long sn = 0; sn < ns; sn++) {",
        f"        memset({fname}_ycl, 0, sizeof({t})*{h * w * c});",
        *_row_loops(h_x, kh, sh, dh, top, h, "        "),
        f"                {t}* restrict orow = {fname}_ycl + ih*{w * c};",
        f"                const {t}* restrict crow = {fname}_cols + (sn*{p} + oh*{w_x})*{width};",
        *_column_loops(kw, sw, dw, left, w, w_x, lambda j, col: add.replace("@col@", col).replace("@j@", str(j)), "                "),
        "            }", "        }",
        *_transpose(f"{fname}_ycl", f"y + (n0 + sn)*{c * h * w}", h * w, c, "b[c]" if bias is not None else None),
        "        }", "    }", "}"]


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
