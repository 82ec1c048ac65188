"""Direct C kernels for convolutions: ``Conv``, ``ConvTranspose`` (the input gradient) and
``ConvWeight`` (the weight gradient) of :mod:`ember._ops.conv`, 2-D, any stride, padding,
dilation and groups.

The other variant of each node is im2col + BLAS (:mod:`.conv_gemm`), which copies every window
into a buffer kh*kw times the input's size, then multiplies; it wins where BLAS gets wide
products. For depthwise convolutions (one channel per group) the products are too narrow and
the direct loops win (:data:`MIN_GEMM_CHANNELS`; ``max_autotune`` times both). With stride 1
each input plane is copied into a zero-padded buffer, and each kernel offset becomes one long contiguous
multiply-add over the whole plane (:func:`_flat_planes`). Other strides walk output rows: for
one kernel offset (i, j) an output row is a strided slice of one input row times one weight,
over the column range that offset reaches (computed once: no bounds tests inside). Sizes are
compile-time constants, as everywhere in the generated C, but for the batch in a graph with
size symbols: a loop bound read at run time (the direct loops and im2col + BLAS take it so;
the cost model picks between them as for a fixed batch, with no Winograd and no timing), and
for symbolic image sizes, which only im2col + BLAS takes (:func:`supported`).
"""
import numpy as np

from ..symbolic import Expr
from .toolchain import simd_reduction

__all__ = ["OPS", "supported", "symbolic_image", "narrow", "conv_kernel"]

OPS = ("Conv", "ConvTranspose", "ConvWeight")
# The cost model picks the direct loops when a group's product is too narrow for BLAS: fewer
# than this many output channels per group or products per output (C_in/groups * kh * kw),
# else im2col + BLAS (conv_gemm.py); ``max_autotune`` times both. Timed on bench_compile's rows
# (AMD EPYC, one thread, loaded): depthwise 3x3 (1 channel per group) is 3x faster direct in
# all three ops; LeNet's convolutions (6x25, 16x150, their gradients) 1.4-3x faster and
# Conv2d(16, 32, 3) 1.5-2.7x faster through im2col + BLAS.
MIN_GEMM_CHANNELS = 4


def _geometry(node):
    """(weight shape, stride, padding pairs, dilation, groups) of a 2-D conv node, or None."""
    k = node.kwargs
    stride, padding, dilation = k.get("stride"), k.get("padding"), k.get("dilation")
    if not (stride and len(stride) == 2 and len(padding) == 2 and len(dilation) == 2):
        return None
    if node.target.name == "ConvWeight":
        weight = tuple(node.meta["shape"])
    else:
        weight = tuple(node.args[1].meta["shape"])
    return weight, tuple(stride), tuple(tuple(p) for p in padding), tuple(dilation), k["groups"]


def supported(node, have_blas=True):
    """Whether ``node`` (Conv, ConvTranspose or ConvWeight) gets a C kernel: 2-D float arrays
    of one dtype. Symbolic sizes: the batch for any variant; the image sizes only for im2col +
    BLAS (``have_blas``, and products wide enough that the cost model picks it: see
    :func:`symbolic_image`), whose column ranges and buffers are sized at run time."""
    geometry = _geometry(node)
    if geometry is None:
        return False
    arrays = [a for a in node.args[:3] if a is not None]
    if not all(hasattr(a, "meta") and len(a.meta["shape"]) in (1, 4) for a in arrays):
        return False
    if not all(type(a.meta["shape"][1 if len(a.meta["shape"]) == 4 else 0]) is int for a in arrays + [node]):
        return False  # symbolic channels
    if symbolic_image(node) and (not have_blas or narrow(node)):
        return False
    if node.target.name != "ConvTranspose" and not all(type(p) is int for pair in geometry[2] for p in pair):
        return False  # (an input gradient's padding may follow the sizes: (s0 + 1) % 2)
    dtypes = {np.dtype(getattr(a.meta["dtype"], "np", a.meta["dtype"])) for a in arrays + [node]}
    return len(dtypes) == 1 and dtypes.pop() in (np.dtype(np.float32), np.dtype(np.float64))


def symbolic_image(node):
    """Whether an image size (H or W) of ``node`` or its operands is a size expression."""
    return any(type(n) is not int for a in (node, *node.args[:2]) if a is not None for n in a.meta["shape"][2:])


def narrow(node):
    """Whether a group's product is too narrow for BLAS (see MIN_GEMM_CHANNELS): its layer's
    output channels per group, or the products each output sums."""
    (co, cig, kh, kw), groups = _geometry(node)[0], _geometry(node)[4]
    return min(co // groups, cig * kh * kw) < MIN_GEMM_CHANNELS


def _columns(off, stride, width, count):
    """(lo, hi): the positions q in [0, count) with 0 <= q*stride + off < width, as a range;
    with a symbolic ``width`` or ``count``, ``hi`` is C code (the range may be empty: hi <= lo)."""
    lo = 0 if off >= 0 else (-off + stride - 1) // stride
    if isinstance(width, Expr) or isinstance(count, Expr):
        last = f"({width} - 1 - ({off}))"  # C's / truncates: the test keeps it >= 0
        return lo, f"({last} >= 0 ? ({last} / {stride} + 1 < {count} ? {last} / {stride} + 1 : {count}) : 0)"
    hi = min(count, (width - 1 - off) // stride + 1) if width - 1 - off >= 0 else 0
    return lo, max(lo, hi)


def _row_loops(h_out, kh, sh, dh, top, h_in, indent):
    """Loops over output rows ``oh`` and kernel rows ``i`` with input row ``ih`` in range."""
    return [f"{indent}for (long oh = 0; oh < {h_out}; oh++) {{",
            f"{indent}    for (long i = 0; i < {kh}; i++) {{",
            f"{indent}        long ih = oh*{sh} - {top} + i*{dh};",
            f"{indent}        if (ih < 0 || ih >= {h_in}) continue;"]


def _column_loops(kw, sw, dw, left, w_in, w_out, statement, indent, pragma=lambda j: "#pragma GCC ivdep"):
    """One block per kernel column j (unrolled: its column range is a constant), each a loop
    over output columns q reading input column q*sw + off; ``statement(j, column)``, the loop
    preceded by ``pragma(j)``."""
    lines = []
    for j in range(kw):
        off = j * dw - left
        lo, hi = _columns(off, sw, w_in, w_out)
        if isinstance(hi, str) or hi > lo:  # (a symbolic range: the loop tests it)
            lines += [f"{indent}{pragma(j)}",
                      f"{indent}for (long q = {lo}; q < {hi}; q++) {statement(j, f'(q*{sw} + {off})')}"]
    return lines


# Static scratch starts on a cache line: 512-bit loads and stores (-mprefer-vector-width=512,
# toolchain.py) in an array the linker placed 32 bytes into one each touch two lines; as other
# kernels' buffers moved, ResNet-18's Winograd forwards took 10% longer (3.9 -> 4.3 ms).
ALIGNED = "__attribute__((aligned(64)))"


class _Operand:
    """A 4-D operand in C: its pointer expression and element strides (a broadcast gradient,
    e.g. of ``out.sum()``, has stride 0: the kernels read any strided layout)."""

    def __init__(self, src, node):
        loc = src.plan.loc[node]
        self.base = f"({src.pointer(loc)} + {loc.offset})"
        self.strides = loc.strides

    def plane(self, n, c):
        return f"{self.base} + ({n})*{self.strides[0]} + ({c})*{self.strides[1]}"

    def at(self, row, column):
        return f"[({row})*{self.strides[2]} + ({column})*{self.strides[3]}]"


def conv_kernel(src, node, fname, ctype, epilogue=None):
    """C lines of ``static void fname(void** p)`` computing ``node`` with direct loops;
    ``epilogue``: ``(name, per_block, rows)`` of a loop fused behind a stride-1 ``Conv``, run
    on each sample's output rows as soon as they are written (see ``cgen._epilogue``)."""
    plan = src.plan
    name = node.target.name
    (co, cig, kh, kw), (sh, sw), ((top, bottom), (left, right)), (dh, dw), groups = _geometry(node)
    out = plan.loc[node]
    t, first = ctype, _Operand(src, node.args[0])
    lines = [f"/* direct {name} {list(node.args[0].meta['shape'])} -> {list(out.shape)}, weight "
             f"[{co}, {cig}, {kh}, {kw}], groups {groups}: {name}({node.name}) */",
             f"static void {fname}(void** restrict p) {{",
             f"    {t}* restrict y = {src.pointer(out)};"]
    bias = node.args[2] if name != "ConvWeight" and len(node.args) > 2 else None
    if bias is not None:
        lines.append(f"    const {t}* restrict b = {src.pointer(plan.loc[bias])} + {plan.loc[bias].offset};")
    flat = _flat_planes(src, node, first, t, bias is not None, epilogue) if (sh, sw) == (1, 1) else None
    if flat is not None:
        return lines + flat
    if name == "ConvWeight":  # the weight gradient: x's windows times the output gradient
        n, c, h, w = node.args[0].meta["shape"]
        _, _, h_out, w_out = node.args[1].meta["shape"]
        gy, cog = _Operand(src, node.args[1]), co // groups
        return lines + [
            f"    for (long k = 0; k < {co * cig * kh * kw}; k++) y[k] = 0;",
            f"    for (long n = 0; n < {n}; n++) for (long co = 0; co < {co}; co++) for (long ci = 0; ci < {cig}; ci++) {{",
            f"        const {t}* xp = {first.plane('n', f'(co/{cog})*{cig} + ci')};",
            f"        const {t}* gp = {gy.plane('n', 'co')};",
            f"        {t}* restrict wp = y + (co*{cig} + ci)*{kh * kw};",
            *_row_loops(h_out, kh, sh, dh, top, h + min(bottom, 0), "        "),
            f"                {t} {', '.join(f'acc{j} = 0' for j in range(kw))};",
            *_column_loops(kw, sw, dw, left, w + min(right, 0), w_out,
                           lambda j, col: f"acc{j} += xp{first.at('ih', col)} * gp{gy.at('oh', 'q')};",
                           "                ", lambda j: simd_reduction("+", f"acc{j}")),
            "                " + " ".join(f"wp[i*{kw} + {j}] += acc{j};" for j in range(kw)),
            "            }", "        }", "    }", "}"]
    weight = f"{src.pointer(plan.loc[node.args[1]])} + {plan.loc[node.args[1]].offset}"
    if name == "Conv":
        n, c, h, w = node.args[0].meta["shape"]
        _, _, h_out, w_out = out.shape
        cog = co // groups
        return lines + [
            f"    const {t}* restrict wt = {weight};",
            f"    for (long n = 0; n < {n}; n++) for (long co = 0; co < {co}; co++) {{",
            f"        {t}* restrict o = y + (n*{co} + co)*{h_out * w_out};",
            f"        for (long k = 0; k < {h_out * w_out}; k++) o[k] = {'b[co]' if bias is not None else '0'};",
            f"        for (long ci = 0; ci < {cig}; ci++) {{",
            f"            const {t}* xp = {first.plane('n', f'(co/{cog})*{cig} + ci')};",
            f"            const {t}* restrict wp = wt + (co*{cig} + ci)*{kh * kw};",
            *_row_loops(h_out, kh, sh, dh, top, h + min(bottom, 0), "            "),
            f"                    {t}* restrict orow = o + oh*{w_out};",
            *_column_loops(kw, sw, dw, left, w + min(right, 0), w_out,
                           lambda j, col: f"orow[q] += xp{first.at('ih', col)} * wp[i*{kw} + {j}];",
                           "                    "),
            "                }", "            }", "        }", "    }", "}"]
    # ConvTranspose (the input gradient): each input position adds its window back.
    n, cx, h_x, w_x = node.args[0].meta["shape"]
    _, c_out, h, w = out.shape
    cxg = cx // groups
    return lines + [
        f"    const {t}* restrict wt = {weight};",
        f"    for (long n = 0; n < {n}; n++) for (long c = 0; c < {c_out}; c++)",
        f"        for (long k = 0; k < {h * w}; k++) y[(n*{c_out} + c)*{h * w} + k] = "
        f"{'b[c]' if bias is not None else '0'};",
        f"    for (long n = 0; n < {n}; n++) for (long cx = 0; cx < {cx}; cx++) {{",
        f"        const {t}* xp = {first.plane('n', 'cx')};",
        f"        for (long ci = 0; ci < {cig}; ci++) {{",
        f"            {t}* restrict op = y + (n*{c_out} + (cx/{cxg})*{cig} + ci)*{h * w};",
        f"            const {t}* restrict wp = wt + (cx*{cig} + ci)*{kh * kw};",
        *_row_loops(h_x, kh, sh, dh, top, h, "            "),
        f"                    {t}* restrict orow = op + ih*{w};",
        *_column_loops(kw, sw, dw, left, w, w_x,
                       lambda j, col: f"orow[{col}] += xp{first.at('oh', 'q')} * wp[i*{kw} + {j}];",
                       "                    "),
        "                }", "            }", "        }", "    }", "}"]


def _flat_planes(src, node, first, t, has_bias, epilogue=None):
    """Stride-1 kernels over zero-padded planes: with the input plane copied into a padded
    (Hp, Wp) buffer, output position p = oh*Wp + ow of every kernel offset (i, j) reads padded
    element p + i*dh*Wp + j*dw, so each offset is ONE contiguous multiply-add over OH*Wp
    elements (the Wp - OW columns past each row are computed and dropped): long vectorised
    loops instead of one short loop per row, for planes as small as a depthwise layer's.
    None where it does not apply (a crop)."""
    name = node.target.name
    (co, cig, kh, kw), _, ((top, bottom), (left, right)), (dh, dw), groups = _geometry(node)
    x_shape = node.args[0].meta["shape"]
    if name == "ConvTranspose":
        n, cx, h_out, w_out = x_shape
        _, c_in, h, w = src.plan.loc[node].shape
    else:
        n, c_in, h, w = x_shape
        cx = co
    hp, wp = h + top + bottom, w + left + right
    h_out, w_out = hp - dh * (kh - 1), wp - dw * (kw - 1)
    gradient = node.args[0] if name == "ConvTranspose" else node if name == "Conv" else node.args[1]
    if min(top, bottom, left, right) < 0 or (h_out, w_out) != tuple(gradient.meta["shape"][2:]):
        return None  # crops (negative padding): the row kernels
    span = h_out * wp
    size = hp * wp + dw * (kw - 1)  # the last row's dropped columns read this far
    offsets = [(i, j, i * dh * wp + j * dw) for i in range(kh) for j in range(kw)]
    # static scratch (one per compiled graph, like the plan's arena buffers)
    if name in ("Conv", "ConvWeight"):
        # every input plane of sample n padded once, before the output channels that read it
        planes = [f"    static {t} xpads[{c_in * size}];  /* borders and dropped columns stay 0 */",
                  f"    for (long n = 0; n < {n}; n++) {{",
                  f"        for (long c = 0; c < {c_in}; c++) {{",
                  f"            const {t}* xp = {first.plane('n', 'c')};",
                  f"            for (long h = 0; h < {h}; h++) for (long w = 0; w < {w}; w++) "
                  f"xpads[c*{size} + (h + {top})*{wp} + w + {left}] = xp{first.at('h', 'w')};",
                  "        }"]
        cog = co // groups
        reader = [f"            const {t}* restrict xpad = xpads + ((co/{cog})*{cig} + ci)*{size};"]
    if name == "Conv":
        return [f"    static {t} rows[{span}];"] + planes + [
            f"    const {t}* restrict wt = {_pointer(src, node.args[1])};",
            f"    for (long co = 0; co < {co}; co++) {{",
            f"        for (long k = 0; k < {span}; k++) rows[k] = {'b[co]' if has_bias else '0'};",
            f"        for (long ci = 0; ci < {cig}; ci++) {{",
            *reader,
            f"            const {t}* restrict wp = wt + (co*{cig} + ci)*{kh * kw};",
            *[ln for i, j, base in offsets for ln in (
                f"            {{ const {t} v = wp[{i * kw + j}];",
                "              #pragma GCC ivdep",
                f"              for (long k = 0; k < {span}; k++) rows[k] += v * xpad[k + {base}]; }}")],
            "        }",
            f"        {t}* restrict o = y + (n*{co} + co)*{h_out * w_out};",
            f"        for (long oh = 0; oh < {h_out}; oh++) for (long ow = 0; ow < {w_out}; ow++) "
            f"o[oh*{w_out} + ow] = rows[oh*{wp} + ow];",
            "    }", *_finish(epilogue, f"n*{co * h_out}", f"(n + 1)*{co * h_out}"), "    }",
            *_finish(epilogue, None, None), "}"]
    if name == "ConvWeight":
        gy = _Operand(src, node.args[1])
        return [f"    static {t} rows[{span}];  /* dropped columns stay 0 */",
                f"    for (long k = 0; k < {co * cig * kh * kw}; k++) y[k] = 0;"] + planes + [
            f"    for (long co = 0; co < {co}; co++) {{",
            f"        const {t}* gp = {gy.plane('n', 'co')};",
            f"        for (long oh = 0; oh < {h_out}; oh++) for (long ow = 0; ow < {w_out}; ow++) "
            f"rows[oh*{wp} + ow] = gp{gy.at('oh', 'ow')};",
            f"        for (long ci = 0; ci < {cig}; ci++) {{",
            *reader,
            f"            {t}* restrict wp = y + (co*{cig} + ci)*{kh * kw};",
            *[ln for i, j, base in offsets for ln in (
                f"            {{ {t} acc = 0;",
                "              " + simd_reduction("+", "acc"),
                f"              for (long k = 0; k < {span}; k++) acc += rows[k] * xpad[k + {base}];",
                f"              wp[{i * kw + j}] += acc; }}")],
            "        }", "    }", "    }", "}"]
    # ConvTranspose: each gradient row (laid out with width Wp) adds into the padded plane at
    # every offset; the plane's interior is the result.
    cxg = cx // groups
    return [f"    static {t} xpad[{size}], grads[{cx * span}];  /* dropped columns stay 0 */",
            f"    const {t}* restrict wt = {_pointer(src, node.args[1])};",
            f"    for (long n = 0; n < {n}; n++) {{",
            f"        for (long cx = 0; cx < {cx}; cx++) {{  /* each gradient plane laid out once */",
            f"            const {t}* xp = {first.plane('n', 'cx')};",
            f"            for (long oh = 0; oh < {h_out}; oh++) for (long ow = 0; ow < {w_out}; ow++) "
            f"grads[cx*{span} + oh*{wp} + ow] = xp{first.at('oh', 'ow')};",
            "        }",
            f"        for (long c = 0; c < {c_in}; c++) {{",
            f"            for (long k = 0; k < {size}; k++) xpad[k] = 0;",
            f"            for (long cx = (c/{cig})*{cxg}; cx < (c/{cig} + 1)*{cxg}; cx++) {{",
            f"                const {t}* restrict rows = grads + cx*{span};",
            f"                const {t}* restrict wp = wt + (cx*{cig} + c%{cig})*{kh * kw};",
            *[ln for i, j, base in offsets for ln in (
                f"                {{ const {t} v = wp[{i * kw + j}];",
                "                  #pragma GCC ivdep",
                f"                  for (long k = 0; k < {span}; k++) xpad[k + {base}] += v * rows[k]; }}")],
            "            }",
            f"            {t}* restrict o = y + (n*{c_in} + c)*{h * w};",
            f"            for (long h = 0; h < {h}; h++) for (long w = 0; w < {w}; w++) "
            f"o[h*{w} + w] = xpad[(h + {top})*{wp} + w + {left}]{' + b[c]' if has_bias else ''};",
            "        }", "    }", "}"]


def _finish(epilogue, r0, r1):
    """The call of the fused loop: per sample (``r0``, ``r1`` its rows) or, where the loop
    cannot be cut into rows, once after the last sample (``r0`` None)."""
    if epilogue is None or epilogue[1] != (r0 is not None):
        return []
    name, _, rows = epilogue
    return [f"        {name}(p, {r0}, {r1});" if r0 is not None else f"    {name}(p, 0, {rows});"]


def _gemm(t, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc):
    """One column-major BLAS product C = A B + beta C (row-major arrays read transposed),
    through NumPy's BLAS when found (``em_sgemm_any``, cgen's header)."""
    call = "em_sgemm_any" if t == "float" else "em_dgemm_any"
    return f"{call}('{ta}', '{tb}', {m}, {n}, {k}, 1, {a}, {lda}, {b}, {ldb}, {beta}, {c}, {ldc});"


def _pointer(src, node):
    loc = src.plan.loc[node]
    return f"{src.pointer(loc)} + {loc.offset}"
