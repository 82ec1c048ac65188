"""Winograd kernels for 3x3 stride-1 convolutions: ``Conv``, ``ConvTranspose`` (the input
gradient) and ``ConvWeight`` (the weight gradient), the variants timed beside :mod:`.conv`'s
direct loops and :mod:`.conv_gemm`'s im2col + BLAS.

F(m, 3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2015,
arXiv:1509.09308) computes an m x m output tile from an a x a input tile (a = m + 2) as
``Y = A^T [(G g G^T) * (B^T d B)] A``: a*a products per channel pair instead of 9*m*m, i.e.
2.25x fewer multiplications for F(2, 3) and 4x for F(4, 3). Per block of samples:

* every input plane is copied into a zero-padded plane (borders written once, stay 0);
* the input transform writes V[a][c][t] for each tile t (tiles contiguous: the products'
  long dimension);
* one BLAS product per transform position a and group: M[a][co][t] = U[a][co][c] V[a][c][t],
  U being the weight transform (done once per call: the weights change every step);
* the output transform adds the bias, writes the output tiles and runs any fused loop on the
  block's samples.

``ConvTranspose`` with stride 1 is the convolution of the output gradient with the weight
flipped in space and transposed per group, padded by ``2 - padding``: the same kernel.
``ConvWeight`` is the adjoint of g -> y: G^T [sum over tiles of (A gy A^T) * (B^T d B)] G,
one long product per position over all tiles (:func:`_weight_kernel`).

Precision: the transforms' rounding grows with the tile (F(4, 3)'s G and A^T hold 1/6 and 8);
tests/compiler/test_codegen_conv.py bounds the float32 error against a float64 reference
(WINOGRAD_BOUND). Blocks are whole samples, at least one: a large image's block is large.
"""
from fractions import Fraction as Fr

from .conv import _finish, _gemm, _geometry, _Operand, _pointer
from .toolchain import simd_reduction

__all__ = ["TILES", "candidate", "winograd_kernel"]


def _tile_pragmas(tw, indent):
    """The pragmas over a row's ``tw`` tiles (the transforms' loops): independent iterations,
    and where a row has two tiles (a 4x4 plane's F(2, 3)), no complete unrolling: GCC 12 spent
    14 s cleaning the control flow of one such unrolled kernel (a ResNet-18 step's 512-channel
    layers; 1 s of gcc for the whole unit without it)."""
    return [f"{indent}#pragma GCC ivdep"] + ([f"{indent}#pragma GCC unroll 1"] if tw == 2 else [])

# m -> (B^T, G, A^T) of F(m, 3), exact; a test checks each against the direct correlation.
TILES = {
    2: ([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
        [[1, 0, 0], [Fr(1, 2), Fr(1, 2), Fr(1, 2)], [Fr(1, 2), Fr(-1, 2), Fr(1, 2)], [0, 0, 1]],
        [[1, 1, 1, 0], [0, 1, -1, -1]]),
    4: ([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
         [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
        [[Fr(1, 4), 0, 0], [Fr(-1, 6), Fr(-1, 6), Fr(-1, 6)], [Fr(-1, 6), Fr(1, 6), Fr(-1, 6)],
         [Fr(1, 24), Fr(1, 12), Fr(1, 6)], [Fr(1, 24), Fr(-1, 12), Fr(1, 6)], [0, 0, 1]],
        [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]),
}
# Tiles per block (at least one sample): the transformed input and the products of a block stay
# in cache. Timed on bench_compile's Conv2d(16, 32, 3) (F(2, 3), AMD EPYC, one thread, loaded):
# forward 0.50 / 0.58 / 0.60 / 0.57 ms and its input gradient 0.60 / 0.65 / 0.68 / 0.76 ms with
# 64 / 128 / 256 / 512 tiles.
BLOCK_TILES = 64


# The unrolled transforms keep GCC's predictive commoning busy for a third of the unit's compile
# time (-ftime-report), for no speed: the unit holding them compiles without it (toolchain.unit_flags).
UNIT_FLAGS = "/* cflags: -fno-predictive-commoning */"


def candidate(node):
    """Whether ``node`` is a 3x3, stride-1, undilated Conv or ConvWeight (padding >= 0) or
    ConvTranspose (padding 0..2) with no empty or symbolic dimension (its blocks of samples are
    sized at compile time): the Winograd variants can compute it."""
    geometry = _geometry(node)
    if geometry is None:
        return False
    (_, _, kh, kw), stride, padding, dilation, _ = geometry
    pads = [p for pair in padding for p in pair]
    top = 2 if node.target.name == "ConvTranspose" else None
    return ((kh, kw) == (3, 3) and stride == (1, 1) and dilation == (1, 1)
            and min(pads) >= 0 and (top is None or max(pads) <= top)
            and all(type(n) is int and n > 0 for a in [node, *node.args[:2]] for n in a.meta["shape"]))


def _as_conv(src, node):
    """The convolution ``node`` computes, as (windowed operand, (N, C, H, W), output channels,
    input channels per group, groups, (top, bottom, left, right), weight index(co, ci, i, j))."""
    (co, cig, _, _), _, ((top, bottom), (left, right)), _, groups = _geometry(node)
    shape = tuple(node.args[0].meta["shape"])
    if node.target.name == "Conv":
        return (_Operand(src, node.args[0]), shape, co, cig, groups, (top, bottom, left, right),
                lambda o, c, i, j: f"({o}*{cig} + {c})*9 + {3 * i + j}")
    cxg = co // groups  # the transpose: channels swap roles per group, the kernel is flipped
    return (_Operand(src, node.args[0]), shape, groups * cig, cxg, groups,
            (2 - top, 2 - bottom, 2 - left, 2 - right),
            lambda o, c, i, j: f"((({o})/{cig}*{cxg} + {c})*{cig} + ({o})%{cig})*9 + {3 * (2 - i) + 2 - j}")


def _combine(row, names, t):
    """C expression sum(row[k] * names[k]): zero terms dropped, +-1 as additions."""
    terms = []
    for coef, name in zip(row, names):
        if coef == 0:
            continue
        sign = "-" if coef < 0 else "+"
        value = abs(Fr(coef))
        factor = "" if value == 1 else f"({t}){float(value)!r}*"
        terms.append(f"{sign} {factor}{name}")
    text = " ".join(terms) if terms else "0"
    return text[2:] if text.startswith("+ ") else text


def _transform(left, right, names, out, t):
    """C lines: ``out_i_j = (left X right^T)[i][j]`` for X the matrix of C names ``names[k][l]``
    (two passes, through ``out``_tmp)."""
    lines = []
    rows, inner = len(left), len(names[0])
    for i in range(rows):
        lines.append(" ".join(f"const {t} {out}t{i}_{l} = {_combine(left[i], [r[l] for r in names], t)};"
                              for l in range(inner)))
    for i in range(rows):
        temps = [f"{out}t{i}_{l}" for l in range(inner)]
        lines.append(" ".join(f"const {t} {out}{i}_{j} = {_combine(right[j], temps, t)};" for j in range(len(right))))
    return lines


def _deinterleave(x, t, h, w, m, q, top, left, indent):
    """Lines copying one input plane ``xp`` into the padded plane ``pad`` of ``hp`` rows, each
    stored as m runs of ``q`` columns (column k + left goes to run (k + left) % m, place
    (k + left) / m): a tile's column l is then run l % m at place tx + l / m, contiguous in the
    tile index tx, which the transform loops over in vectors."""
    lines = [f"{indent}for (long r = 0; r < {h}; r++) {{",
             f"{indent}    {t}* restrict row = pad + (r + {top})*{m * q};"]
    for res in range(m):
        off = res - left  # input column of place qq in this run: qq*m + off
        lo, hi = max(0, (m - 1 - off) // m), min(q, (w - 1 - off) // m + 1)
        if hi > lo:
            lines.append(f"{indent}    for (long qq = {lo}; qq < {hi}; qq++) "
                         f"row[{res * q} + qq] = xp{x.at('r', f'qq*{m} + {off}')};")
    return lines + [f"{indent}}}"]


def _tiles(fname, buf, x, shape, pads, side, left, t, m, tiles, indent="        "):
    """(static array declaration, C lines) transforming every ``side`` x ``side`` tile of the
    block's samples of 4-D operand ``x`` (``shape`` (N, C, H, W), offset by ``pads`` (top, left)
    in a zero-padded plane; tile (ty, tx) starts at row ty*m, column tx*m) into
    ``buf``[k][c][tile] = (left X left^T)[k / a][k % a], ``left`` an a x side matrix."""
    th, tw, tb = tiles
    _, c, h, w = shape
    a, q = len(left), tw + (side - 1) // m  # places per run: see _deinterleave
    plane = (th * m + side - m) * m * q
    gather = [[f"d[{i * m * q + (j % m) * q + j // m}]" for j in range(side)] for i in range(side)]
    pad = f"{fname}_{buf}pad"
    return f"{pad}[@per@*{c * plane}]", [
        f"{indent}for (long s = 0; s < ns; s++) for (long c = 0; c < {c}; c++) {{",
        f"{indent}    const {t}* xp = {x.plane('n0 + s', 'c')};",
        f"{indent}    {t}* restrict pad = {pad} + (s*{c} + c)*{plane};",
        *_deinterleave(x, t, h, w, m, q, pads[0], pads[1], indent + "    "),
        f"{indent}}}",
        f"{indent}for (long c = 0; c < {c}; c++) for (long s = 0; s < ns; s++) for (long ty = 0; ty < {th}; ty++) {{",
        f"{indent}    const {t}* restrict d0 = {pad} + (s*{c} + c)*{plane} + ty*{m * m * q};",
        f"{indent}    {t}* restrict v = {fname}_{buf} + c*{tb} + (s*{th} + ty)*{tw};",
        *_tile_pragmas(tw, f"{indent}    "),
        f"{indent}    for (long tx = 0; tx < {tw}; tx++) {{",
        f"{indent}        const {t}* restrict d = d0 + tx;",
        *[f"{indent}        " + ln for ln in _transform(left, left, gather, "v", t)],
        *[f"{indent}        v[{(i * a + j) * c * tb} + tx] = v{i}_{j};" for i in range(a) for j in range(a)],
        f"{indent}    }}",
        f"{indent}}}"]


def _blocks(n, oh, ow, m):
    """(tile rows, tile columns, samples per block, tiles per block)."""
    th, tw = -(-oh // m), -(-ow // m)
    per = min(n, max(1, BLOCK_TILES // (th * tw)))
    return th, tw, per, per * th * tw


def _transposed(matrix):
    return [list(row) for row in zip(*matrix)]


def _finite(src, node, t, fallback):
    """Lines returning after ``fallback(p)`` when an operand holds inf or NaN: a transform
    mixes every value of a tile, so one inf would make NaN of outputs the direct sum leaves
    finite (torch's masks). 0 * v is NaN exactly for those (never folded: IEEE flags, toolchain.FLAGS)."""
    lines = [f"    {t} bad = 0;"]
    for operand in node.args[:2]:
        o, shape = _Operand(src, operand), operand.meta["shape"]
        lines += [f"    for (long n = 0; n < {shape[0]}; n++) for (long c = 0; c < {shape[1]}; c++) "
                  f"for (long r = 0; r < {shape[2]}; r++) {{",
                  f"        const {t}* xp = {o.plane('n', 'c')};",
                  f"        {simd_reduction('+', 'bad')}",
                  f"        for (long k = 0; k < {shape[3]}; k++) bad += 0 * xp{o.at('r', 'k')};",
                  "    }"]
    return lines + [f"    if (bad != bad) {{ {fallback}(p); return; }}"]


def winograd_kernel(src, node, fname, t, m, epilogue=None, fallback=None):
    """C lines of ``static void fname(void** p)`` computing ``node`` (see :func:`candidate`)
    with F(m, 3); ``epilogue``: as :func:`.conv.conv_kernel`'s, run per block of samples;
    ``fallback``: the kernel called instead when an operand is not finite (:func:`_finite`)."""
    if node.target.name == "ConvWeight":
        return _weight_kernel(src, node, fname, t, m, fallback)
    bt, g, at = TILES[m]
    a = m + 2
    x, (n, c, h, w), co, cig, groups, (top, bottom, left, right), windex = _as_conv(src, node)
    out = src.plan.loc[node]
    oh, ow = out.shape[2:]
    th, tw, per, tb = _blocks(n, oh, ow, m)
    cog = co // groups
    bias = node.args[2] if len(node.args) > 2 and node.args[2] is not None else None
    edge = bool(oh % m or ow % m)  # the last tiles overhang the output: staged, then cropped
    weights = [[f"wt[{windex('o', 'i', i, j)}]" for j in range(3)] for i in range(3)]
    products = [[f"mm[{(i * a + j) * co * tb}]" for j in range(a)] for i in range(a)]
    width = tw * m if edge else ow  # row length of what the output transform writes
    plus = " + bv" if bias is not None else ""
    stores = [f"o_[{i * width + j}] = y{i}_{j}{plus};" for i in range(m) for j in range(m)]
    staged = f", {fname}_out[{th * m * tw * m}]" if edge else ""
    pad, transform = _tiles(fname, "v", x, (n, c, h, w), (top, left), a, bt, t, m, (th, tw, tb))
    return [
        UNIT_FLAGS,
        f"/* Winograd F({m}, 3) {node.target.name} {list(node.args[0].meta['shape'])} -> {list(out.shape)}, "
        f"groups {groups}: {node.target.name}({node.name}) */",
        f"static {t} {fname}_u[{a * a * co * cig}], {fname}_v[{a * a * c * tb}], {fname}_m[{a * a * co * tb}], "
        f"{pad.replace('@per@', str(per))}{staged};  /* the pad's borders stay 0 */",
        f"static void {fname}(void** restrict p) {{",
        *(_finite(src, node, t, fallback) if fallback else []),
        f"    {t}* restrict y = {src.pointer(out)};",
        f"    const {t}* restrict wt = {_pointer(src, node.args[1])};",
        *([f"    const {t}* restrict b = {_pointer(src, bias)};"] if bias is not None else []),
        f"    for (long o = 0; o < {co}; o++) for (long i = 0; i < {cig}; i++) {{",
        f"        {t}* restrict u = {fname}_u + o*{cig} + i;",
        *["        " + ln for ln in _transform(g, g, weights, "u", t)],
        *[f"        u[{(i * a + j) * co * cig}] = u{i}_{j};" for i in range(a) for j in range(a)],
        "    }",
        f"    em_blas_threads({cog * cig * tb}L);",
        f"    for (long n0 = 0; n0 < {n}; n0 += {per}) {{",
        f"        const long ns = n0 + {per} < {n} ? {per} : {n} - n0, nt = ns*{th * tw};",
        *transform,
        f"        for (long k = 0; k < {a * a}; k++) for (long g = 0; g < {groups}; g++)",
        "            " + _gemm(t, "N", "N", "nt", cog, cig, f"{fname}_v + (k*{c} + g*{cig})*{tb}", tb,
                               f"{fname}_u + (k*{co} + g*{cog})*{cig}", cig, 0,
                               f"{fname}_m + (k*{co} + g*{cog})*{tb}", tb),
        f"        for (long s = 0; s < ns; s++) for (long o = 0; o < {co}; o++) {{",
        f"            {t}* restrict plane = y + ((n0 + s)*{co} + o)*{oh * ow};",
        *([f"            const {t} bv = b[o];"] if bias is not None else []),
        f"            for (long ty = 0; ty < {th}; ty++) {{",
        f"                const {t}* restrict m0 = {fname}_m + o*{tb} + (s*{th} + ty)*{tw};",
        f"                {t}* restrict o0 = {f'{fname}_out' if edge else 'plane'} + ty*{m * width};",
        *_tile_pragmas(tw, "                "),
        f"                for (long tx = 0; tx < {tw}; tx++) {{",
        f"                    const {t}* restrict mm = m0 + tx;",
        f"                    {t}* restrict o_ = o0 + tx*{m};",
        *["                    " + ln for ln in _transform(at, at, products, "y", t)],
        *["                    " + ln for ln in stores],
        "                }",
        "            }",
        *([f"            for (long r = 0; r < {oh}; r++) for (long k = 0; k < {ow}; k++) "
           f"plane[r*{ow} + k] = {fname}_out[r*{width} + k];"] if edge else []),
        "        }",
        *["    " + ln for ln in _finish(epilogue, f"n0*{co * oh}", f"(n0 + ns)*{co * oh}")],
        "    }", *_finish(epilogue, None, None), "}"]


def _weight_kernel(src, node, fname, t, m, fallback):
    """The weight gradient, the adjoint of the forward's map g -> y in g: with V = B^T d B of
    every input tile and Z = A gy A^T of the output gradient's tile, gW = G^T S G where
    S[k][co][c] = sum over tiles of Z[k][co] V[k][c] (one long BLAS product per position k
    and group, accumulated over the blocks)."""
    bt, g, at = TILES[m]
    a = m + 2
    (co, cig, _, _), _, ((top, _), (left, _)), _, groups = _geometry(node)
    x, gy = _Operand(src, node.args[0]), _Operand(src, node.args[1])
    n, c, h, w = node.args[0].meta["shape"]
    oh, ow = node.args[1].meta["shape"][2:]
    th, tw, per, tb = _blocks(n, oh, ow, m)
    cog = co // groups
    xpad, xform = _tiles(fname, "v", x, (n, c, h, w), (top, left), a, bt, t, m, (th, tw, tb))
    gpad, gform = _tiles(fname, "z", gy, (n, co, oh, ow), (0, 0), m, _transposed(at), t, m, (th, tw, tb))
    sums = [[f"sv[{(i * a + j) * co * cig}]" for j in range(a)] for i in range(a)]
    gt = _transposed(g)
    return [
        UNIT_FLAGS,
        f"/* Winograd F({m}, 3) ConvWeight {list(node.args[0].meta['shape'])} -> {list(node.meta['shape'])}, "
        f"groups {groups}: ConvWeight({node.name}) */",
        f"static {t} {fname}_v[{a * a * c * tb}], {fname}_z[{a * a * co * tb}], {fname}_s[{a * a * co * cig}], "
        f"{xpad.replace('@per@', str(per))}, {gpad.replace('@per@', str(per))};  /* the pads' borders stay 0 */",
        f"static void {fname}(void** restrict p) {{",
        *(_finite(src, node, t, fallback) if fallback else []),
        f"    {t}* restrict y = {src.pointer(src.plan.loc[node])};",
        f"    em_blas_threads({cog * cig * tb}L);",
        f"    for (long n0 = 0; n0 < {n}; n0 += {per}) {{",
        f"        const long ns = n0 + {per} < {n} ? {per} : {n} - n0, nt = ns*{th * tw};",
        *xform, *gform,
        f"        for (long k = 0; k < {a * a}; k++) for (long g = 0; g < {groups}; g++)",
        "            " + _gemm(t, "T", "N", cig, cog, "nt", f"{fname}_v + (k*{c} + g*{cig})*{tb}", tb,
                               f"{fname}_z + (k*{co} + g*{cog})*{tb}", tb, "n0 ? 1 : 0",
                               f"{fname}_s + (k*{co} + g*{cog})*{cig}", cig),
        "    }",
        f"    for (long o = 0; o < {co}; o++) for (long i = 0; i < {cig}; i++) {{",
        f"        const {t}* restrict sv = {fname}_s + o*{cig} + i;",
        *["        " + ln for ln in _transform(gt, gt, sums, "w", t)],
        *[f"        y[(o*{cig} + i)*9 + {3 * i + j}] = w{i}_{j};" for i in range(3) for j in range(3)],
        "    }", "}"]
