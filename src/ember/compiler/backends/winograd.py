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
one long product per position over all tiles. Where an operand holds inf or NaN, direct sums
run instead (a transform would spread it over the tile: :func:`_finite`).

The loops are shape-generic: one C function per kind, tile size and dtype reads the sizes,
strides and scratch buffers from an ``em_winograd_args`` (:data:`ARGS`), and sits in a
translation unit of its own, the same text in every graph (:func:`support`; its object is
cached by content, so it compiles once per machine); each node's kernel is a few lines that
fill the struct, own the scratch and call them (:func:`winograd_kernel`). Unrolled per shape,
the transforms had been 70% of a CIFAR ResNet-18 step's C compile (41 kernels: 5.3 of 7.5 s
of gcc); the generic loops ran its step faster, not slower (docs/compile.md).

Precision: the transforms' rounding grows with the tile (F(4, 3)'s G and A^T hold 1/6 and 8);
tests/compiler/test_codegen_conv.py bounds the float32 error against a float64 reference
(WINOGRAD_BOUND). Blocks are whole samples, at least one: a large image's block is large.
"""
import re
from fractions import Fraction as Fr

from .conv import ALIGNED, _finish, _gemm, _geometry, _Operand, _pointer
from .toolchain import simd_reduction

__all__ = ["TILES", "candidate", "winograd_kernel", "support", "ARGS"]


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
# time (-ftime-report), for no speed: the unit holding them (:func:`support`) compiles without it
# (toolchain.unit_flags).
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


# The arguments of the shape-generic functions (one struct for every kind and dtype; the
# pointers are the dtype's arrays). Scratch, sized by each node's wrapper (static: a pad's
# borders are never written, so they stay 0): u the transformed weight (a*a x C_out x C_in/g;
# ConvWeight: the products' sums), v the input's tiles (a*a x C x tiles), z the products
# (Conv; a*a x C_out x tiles) or the output gradient's tiles (ConvWeight), pad and zpad the
# padded planes of a block (_plane), out an output plane staged where tiles overhang it.
ARGS = """#ifndef EM_WINOGRAD_ARGS
#define EM_WINOGRAD_ARGS
typedef struct {  /* a Winograd kernel's operands, sizes and scratch (backends/winograd.py) */
    const void* x; long xshape[4], xs[4];  /* the tiled input (N, C, H, W), its element strides */
    const void* g; long gshape[4], gs[4];  /* the weight, or ConvWeight's output gradient */
    long co, cig, groups, flip;  /* output channels, input channels per group; flip: ConvTranspose */
    long top, left, oh, ow;      /* the input's offset in its padded plane; the output's plane */
    long th, tw, per;            /* tiles per output column and row; samples per block */
    void* y; const void* bias;   /* the result; the bias or 0 */
    void *u, *v, *z, *pad, *zpad, *out;  /* scratch (see winograd.py) */
} em_winograd_args;
#endif
"""
_CALL = re.compile(r"\bem_winograd([24])_(?:start|block|weight)_(float|double)\(")


def _as_conv(src, node):
    """The convolution ``node`` computes, as (input, its shape (N, C, H, W), output channels,
    input channels per group, groups, (top, left) padding, flip): ``ConvTranspose`` is the
    convolution of the output gradient with the weight flipped in space and transposed per
    group (flip 1), padded by 2 - padding."""
    (co, cig, _, _), _, ((top, _), (left, _)), _, groups = _geometry(node)
    shape = tuple(node.args[0].meta["shape"])
    if node.target.name == "Conv":
        return _Operand(src, node.args[0]), shape, co, cig, groups, (top, left), 0
    return _Operand(src, node.args[0]), shape, groups * cig, co // groups, groups, (2 - top, 2 - left), 1


def _plane(side, m, th, tw):
    """Elements of one padded plane of ``side`` x ``side`` tiles (th x tw of them, m apart):
    rows of m runs of q places (see :func:`_tiles`); the generic code computes the same."""
    return (th * m + side - m) * m * (tw + (side - 1) // m)


def _blocks(n, oh, ow, m):
    """(tile rows, tile columns, samples per block, tiles per block)."""
    th, tw = -(-oh // m), -(-ow // m)
    per = min(n, max(1, BLOCK_TILES // (th * tw)))
    return th, tw, per, per * th * tw


def _transposed(matrix):
    return [list(row) for row in zip(*matrix)]


def _tiles(name, side, left, m, t):
    """C of ``static void name(...)`` transforming every ``side`` x ``side`` tile of samples
    n0..n0+ns of a 4-D operand x (c channels of h x w, element strides xs[4], offset by (top,
    lft) in a zero-padded plane; tile (ty, tx) starts at row ty*m, column tx*m) into
    v[k][c][tile] = (left X left^T)[k / a][k % a], ``left`` an a x side matrix. Each plane is
    first copied into ``pad``, each row stored as m runs of q places (column k + lft goes to
    run (k + lft) % m, place (k + lft) / m): a tile's column l is then run l % m at place
    tx + l / m, contiguous in the tile index tx, which the transform loops over in vectors."""
    a, lead = len(left), (side - 1) // m
    gather = [[f"d[{i * m + j % m}*q + {j // m}]" for j in range(side)] for i in range(side)]
    runs = []
    for res in range(m):  # the input columns of run res: place qq holds column qq*m + off
        runs += [f"            {{ const long off = {res} - lft, last = w - 1 - off, end = last < 0 ? 0 : last/{m} + 1;",
                 f"              for (long qq = ({m - 1} - off)/{m}; qq < (end < q ? end : q); qq++) "
                 f"row[{res}*q + qq] = xr[(qq*{m} + off)*xs[3]]; }}"]
    return [
        f"static void {name}(const {t}* x, const long* xs, long c, long h, long w, long top, long lft, long th,",
        f"                   long tw, long tb, long n0, long ns, {t}* restrict pad, {t}* restrict v) {{",
        f"    const long q = tw + {lead}, plane = (th*{m} + {side - m})*{m}*q, cs = c*tb;",
        "    for (long s = 0; s < ns; s++) for (long k = 0; k < c; k++) {",
        f"        const {t}* xp = x + (n0 + s)*xs[0] + k*xs[1];",
        "        for (long r = 0; r < h; r++) {",
        f"            {t}* restrict row = pad + (s*c + k)*plane + (r + top)*{m}*q;",
        f"            const {t}* xr = xp + r*xs[2];",
        *runs,
        "        }",
        "    }",
        "    for (long k = 0; k < c; k++) for (long s = 0; s < ns; s++) for (long ty = 0; ty < th; ty++) {",
        f"        const {t}* restrict d0 = pad + (s*c + k)*plane + ty*{m * m}*q;",
        f"        {t}* restrict v0 = v + k*tb + (s*th + ty)*tw;",
        "        #pragma GCC ivdep",
        "        for (long tx = 0; tx < tw; tx++) {",
        f"            const {t}* restrict d = d0 + tx;",
        *["            " + ln for ln in _transform(left, left, gather, "v", t)],
        *[f"            v0[{i * a + j}*cs + tx] = v{i}_{j};" for i in range(a) for j in range(a)],
        "        }",
        "    }",
        "}"]


def _finite(name, t):
    """C of ``static int name(x, shape, strides)``: whether a 4-D operand holds no inf or NaN.
    A transform mixes every value of a tile, so one inf would make NaN of outputs the direct
    sum leaves finite (torch's masks): the direct sums (:func:`_direct`) run instead.
    0 * v is NaN exactly for those (never folded: IEEE flags, toolchain.FLAGS)."""
    return [f"static int {name}(const {t}* x, const long* shape, const long* st) {{",
            f"    {t} bad = 0;",
            "    if (st[3] == 1 && st[2] == shape[3] && st[1] == shape[2]*st[2] && st[0] == shape[1]*st[1]) {",
            f"        {simd_reduction('+', 'bad')}",
            "        for (long k = 0; k < shape[0]*st[0]; k++) bad += 0 * x[k];",
            "        return bad == bad;",
            "    }",
            "    for (long n = 0; n < shape[0]; n++) for (long c = 0; c < shape[1]; c++) for (long r = 0; r < shape[2]; r++) {",
            f"        const {t}* xp = x + n*st[0] + c*st[1] + r*st[2];",
            f"        {simd_reduction('+', 'bad')}",
            "        for (long k = 0; k < shape[3]; k++) bad += 0 * xp[k*st[3]];",
            "    }",
            "    return bad == bad;",
            "}"]


def _direct(name, t, weight):
    """C of ``static void name(a)``: the kernel ``a`` describes (``weight``: ConvWeight's) as
    direct sums, for operands that are not finite, with eager's inf and NaN masks: a padding
    position's 0 times an inf is NaN in Conv and ConvWeight (im2col's zeros; torch's CPU
    kernels differ among themselves there) and adds nothing in ConvTranspose (col2im)."""
    if weight:  # y[o][i] = sum over samples and positions of x's window times the output gradient
        sums = [f"                {t} acc = 0;",
                "                for (long r = 0; r < oh; r++) {",
                f"                    const {t}* gr = gp + r*a->gs[2];",
                "                    const long ih = r + ki - a->top, inside = ih >= 0 && ih < h;",
                "                    for (long q = 0; q < ow; q++) if (!inside || q < lo || q >= hi) acc += 0 * gr[q*a->gs[3]];",
                "                    if (!inside) continue;",
                f"                    {simd_reduction('+', 'acc')}",
                "                    for (long q = lo; q < hi; q++) acc += xp[ih*a->xs[2] + (q + kj - a->left)*a->xs[3]] * gr[q*a->gs[3]];",
                "                }",
                "                y[(o*cig + i)*9 + ki*3 + kj] += acc;"]
        per_channel = [f"        const {t}* gp = g + s*a->gs[0] + o*a->gs[1];"]
        within = []
    else:  # each weight times the input plane, added to the output plane
        sums = [f"                const {t} v = wt[ki*s2 + kj*s3], zero = 0 * v;",
                "                const int padded = !a->flip && zero != zero;  /* NaN: 0 times an inf weight */",
                "                for (long r = 0; r < oh; r++) {",
                "                    const long ih = r + ki - a->top, inside = ih >= 0 && ih < h;",
                "                    if (padded) for (long q = 0; q < ow; q++) if (!inside || q < lo || q >= hi) yp[r*ow + q] += zero;",
                "                    if (!inside) continue;",
                "                    #pragma GCC ivdep",
                "                    for (long q = lo; q < hi; q++) yp[r*ow + q] += v * xp[ih*a->xs[2] + (q + kj - a->left)*a->xs[3]];",
                "                }"]
        per_channel = [f"        {t}* restrict yp = y + (s*co + o)*oh*ow;",
                       f"        for (long k = 0; k < oh*ow; k++) yp[k] = a->bias ? ((const {t}*)a->bias)[o] : 0;"]
        within = [f"            const {t}* wt = {_WEIGHT} + i*si;"]
    return [f"static void {name}(const em_winograd_args* restrict a) {{",
            "    const long n = a->xshape[0], h = a->xshape[2], w = a->xshape[3], oh = a->oh, ow = a->ow;",
            "    const long co = a->co, cig = a->cig, cog = co/a->groups;",
            *([] if weight else [_STEPS]),
            f"    const {t}* g = a->g;",
            f"    {t}* y = a->y;",
            *(["    for (long k = 0; k < co*cig*9; k++) y[k] = 0;"] if weight else []),
            "    for (long s = 0; s < n; s++) for (long o = 0; o < co; o++) {",
            *per_channel,
            "        for (long i = 0; i < cig; i++) {",
            f"            const {t}* xp = (const {t}*)a->x + s*a->xs[0] + ((o/cog)*cig + i)*a->xs[1];",
            *within,
            "            for (long ki = 0; ki < 3; ki++) for (long kj = 0; kj < 3; kj++) {",
            "                const long lo = a->left - kj > 0 ? a->left - kj : 0, hi = w + a->left - kj < ow ? w + a->left - kj : ow;",
            *sums,
            "            }",
            "        }",
            "    }",
            "}"]


# The weight of output channel o and input channel i of the convolution (ConvTranspose: the
# transposed weight, read flipped), rows s2 and columns s3 apart
_STEPS = ("    const long s2 = a->flip ? -a->gs[2] : a->gs[2], s3 = a->flip ? -a->gs[3] : a->gs[3], K = a->gshape[1], "
          "si = a->flip ? a->gs[0] : a->gs[1];")
_WEIGHT = "g + (a->flip ? o/K*cig*a->gs[0] + (o%K)*a->gs[1] - 2*s2 - 2*s3 : o*a->gs[0])"


def _functions(m, t):
    """C of the shape-generic F(m, 3) functions of dtype ``t``: ``em_winograd<m>_start_<t>``
    (the operands' check, then the weight's transform), ``em_winograd<m>_block_<t>`` (one
    block of samples of a Conv or ConvTranspose) and ``em_winograd<m>_weight_<t>``
    (ConvWeight: the check, then every block). The checks return 1 where an operand is not
    finite, the result then computed by direct sums (:func:`_direct`), else 0."""
    bt, g, at = TILES[m]
    a = m + 2
    f = f"em_winograd{m}_{{}}_{t}"
    weights = [[f"w{i}_{j}" for j in range(3)] for i in range(3)]
    products = [[f"mm[{i * a + j}*ms]" for j in range(a)] for i in range(a)]
    sums = [[f"sv[{i * a + j}*ss]" for j in range(a)] for i in range(a)]
    gt = _transposed(g)
    outputs = ["            #pragma GCC ivdep",
               "            for (long tx = 0; tx < tw; tx++) {",
               f"                const {t}* restrict mm = m0 + tx;",
               f"                {t}* restrict o_ = o0 + tx*{m};",
               *["                " + ln for ln in _transform(at, at, products, "y", t)],
               *[f"                o_[{i}*width + {j}] = y{i}_{j};" for i in range(m) for j in range(m)],
               "            }"]
    sizes = ["    const long c = a->xshape[1], co = a->co, cig = a->cig, groups = a->groups, cog = co/groups;",
             "    const long th = a->th, tw = a->tw, tb = a->per*th*tw;"]
    return "\n".join([
        *_finite(f.format("finite"), t),
        *_direct(f.format("direct"), t, weight=False),
        *_direct(f.format("weight_direct"), t, weight=True),
        *_tiles(f.format("input"), a, bt, m, t),
        *_tiles(f.format("gradient"), m, _transposed(at), m, t),
        f"int {f.format('start')}(const em_winograd_args* restrict a) {{",
        f"    if (!{f.format('finite')}(a->x, a->xshape, a->xs) || !{f.format('finite')}(a->g, a->gshape, a->gs)) {{",
        f"        {f.format('direct')}(a);",
        "        return 1;",
        "    }",
        "    const long co = a->co, cig = a->cig, ss = co*cig;",
        f"    const {t}* g = a->g;",
        _STEPS,
        "    for (long o = 0; o < co; o++) {",
        f"        const {t}* restrict w = {_WEIGHT};",
        f"        {t}* restrict u = ({t}*)a->u + o*cig;",
        "        #pragma GCC ivdep",
        "        for (long i = 0; i < cig; i++) {",
        "            " + " ".join(f"const {t} w{ki}_{kj} = w[i*si + {ki}*s2 + {kj}*s3];" for ki in range(3) for kj in range(3)),
        *["            " + ln for ln in _transform(g, g, weights, "u", t)],
        *[f"            u[{i * a + j}*ss + i] = u{i}_{j};" for i in range(a) for j in range(a)],
        "        }",
        "    }",
        "    return 0;",
        "}",
        f"void {f.format('block')}(const em_winograd_args* restrict a, long n0) {{",
        *sizes,
        "    const long oh = a->oh, ow = a->ow, ns = n0 + a->per < a->xshape[0] ? a->per : a->xshape[0] - n0;",
        f"    {t}* restrict z = a->z;",
        f"    {t}* restrict out = a->out;",
        f"    const {t}* restrict b = a->bias;",
        f"    {f.format('input')}(a->x, a->xs, c, a->xshape[2], a->xshape[3], a->top, a->left, th, tw, tb, n0, ns, a->pad, a->v);",
        "    em_blas_threads(cog*cig*tb);",
        f"    for (long k = 0; k < {a * a}; k++) for (long g = 0; g < groups; g++)",
        "        " + _gemm(t, "N", "N", "ns*th*tw", "cog", "cig", f"({t}*)a->v + (k*c + g*cig)*tb", "tb",
                           f"({t}*)a->u + (k*co + g*cog)*cig", "cig", 0, "z + (k*co + g*cog)*tb", "tb"),
        f"    const long ms = co*tb, width = out ? tw*{m} : ow;  /* staged: tiles overhang the output */",
        "    for (long s = 0; s < ns; s++) for (long o = 0; o < co; o++) {",
        f"        {t}* plane = ({t}*)a->y + ((n0 + s)*co + o)*oh*ow;",
        "        for (long ty = 0; ty < th; ty++) {",
        f"            const {t}* restrict m0 = z + o*tb + (s*th + ty)*tw;",
        f"            {t}* restrict o0 = (out ? out : plane) + ty*{m}*width;",
        *outputs,
        "        }",
        "        if (out) for (long r = 0; r < oh; r++) for (long k = 0; k < ow; k++) plane[r*ow + k] = out[r*width + k];",
        "        if (b) for (long k = 0; k < oh*ow; k++) plane[k] += b[o];  /* (adding 0 would make -0.0 0.0) */",
        "    }",
        "}",
        f"int {f.format('weight')}(const em_winograd_args* restrict a) {{",
        f"    if (!{f.format('finite')}(a->x, a->xshape, a->xs) || !{f.format('finite')}(a->g, a->gshape, a->gs)) {{",
        f"        {f.format('weight_direct')}(a);",
        "        return 1;",
        "    }",
        *sizes,
        f"    {t}* restrict sums = a->u;",
        "    em_blas_threads(cog*cig*tb);",
        "    for (long n0 = 0; n0 < a->xshape[0]; n0 += a->per) {",
        "        const long ns = n0 + a->per < a->xshape[0] ? a->per : a->xshape[0] - n0;",
        f"        {f.format('input')}(a->x, a->xs, c, a->xshape[2], a->xshape[3], a->top, a->left, th, tw, tb, n0, ns, a->pad, a->v);",
        f"        {f.format('gradient')}(a->g, a->gs, co, a->oh, a->ow, 0, 0, th, tw, tb, n0, ns, a->zpad, a->z);",
        f"        for (long k = 0; k < {a * a}; k++) for (long g = 0; g < groups; g++)",
        "            " + _gemm(t, "T", "N", "cig", "cog", "ns*th*tw", f"({t}*)a->v + (k*c + g*cig)*tb", "tb",
                               f"({t}*)a->z + (k*co + g*cog)*tb", "tb", "n0 ? 1 : 0",
                               "sums + (k*co + g*cog)*cig", "cig"),
        "    }",
        f"    {t}* restrict y = a->y;",
        "    const long ss = co*cig;",
        "    for (long o = 0; o < co; o++) for (long i = 0; i < cig; i++) {",
        f"        const {t}* restrict sv = sums + o*cig + i;",
        *["        " + ln for ln in _transform(gt, gt, sums, "w", t)],
        *[f"        y[(o*cig + i)*9 + {3 * i + j}] = w{i}_{j};" for i in range(3) for j in range(3)],
        "    }",
        "    return 0;",
        "}", ""])


def support(program):
    """(declarations, units) of the shape-generic functions the Winograd kernels in
    ``program`` (C text) call: :data:`ARGS` and their prototypes, for every unit; and one
    translation unit per tile size and dtype called, the same text in every graph (its
    object, cached by its content, compiles once and every later graph links it)."""
    used = sorted(set(_CALL.findall(program)))
    if not used:
        return "", []
    declarations = [ARGS] + [f"int em_winograd{m}_start_{t}(const em_winograd_args* restrict a);\n"
                             f"void em_winograd{m}_block_{t}(const em_winograd_args* restrict a, long n0);\n"
                             f"int em_winograd{m}_weight_{t}(const em_winograd_args* restrict a);\n" for m, t in used]
    return "".join(declarations), [f"{UNIT_FLAGS}\n{ARGS}{_functions(int(m), t)}" for m, t in used]


def _args(x, xshape, g, gshape, y, bias, geometry, scratch):
    """The C initialiser of an ``em_winograd_args``."""
    co, cig, groups, flip, (top, left), (oh, ow), (th, tw, per) = geometry
    return ("{" + f".x = {x.base}, .xshape = {{{', '.join(map(str, xshape))}}}, .xs = {{{', '.join(map(str, x.strides))}}}, "
            f".g = {g.base}, .gshape = {{{', '.join(map(str, gshape))}}}, .gs = {{{', '.join(map(str, g.strides))}}}, "
            f".co = {co}, .cig = {cig}, .groups = {groups}, .flip = {flip}, .top = {top}, .left = {left}, "
            f".oh = {oh}, .ow = {ow}, .th = {th}, .tw = {tw}, .per = {per}, .y = {y}, .bias = {bias}, "
            + ", ".join(f".{k} = {v}" for k, v in scratch.items()) + "}")


def winograd_kernel(src, node, fname, t, m, epilogue=None):
    """C lines of ``static void fname(void** p)`` computing ``node`` (see :func:`candidate`)
    with F(m, 3): its sizes and scratch, handed to the shape-generic functions (:func:`support`);
    ``epilogue``: as :func:`.conv.conv_kernel`'s, run per block of samples (on all of them
    where the direct sums ran instead: an operand not finite)."""
    a = m + 2
    out = src.plan.loc[node]
    if node.target.name == "ConvWeight":
        (co, cig, _, _), _, ((top, _), (left, _)), _, groups = _geometry(node)
        x, gy, xshape = _Operand(src, node.args[0]), _Operand(src, node.args[1]), node.args[0].meta["shape"]
        (n, c, _, _), (oh, ow) = xshape, node.args[1].meta["shape"][2:]
        th, tw, per, tb = _blocks(n, oh, ow, m)
        scratch = {"u": a * a * co * cig, "v": a * a * c * tb, "z": a * a * co * tb,
                   "pad": per * c * _plane(a, m, th, tw), "zpad": per * co * _plane(m, m, th, tw)}
        init = _args(x, xshape, gy, node.args[1].meta["shape"], src.pointer(out), 0,
                     (co, cig, groups, 0, (top, left), (oh, ow), (th, tw, per)),
                     {k: f"{fname}_{k}" for k in scratch} | {"out": 0})
        body = [f"    em_winograd{m}_weight_{t}(&a);"]
    else:
        x, xshape, co, cig, groups, pads, flip = _as_conv(src, node)
        n, c = xshape[:2]
        oh, ow = out.shape[2:]
        th, tw, per, tb = _blocks(n, oh, ow, m)
        edge = bool(oh % m or ow % m)  # the last tiles overhang the output: staged, then cropped
        scratch = {"u": a * a * co * cig, "v": a * a * c * tb, "z": a * a * co * tb,
                   "pad": per * c * _plane(a, m, th, tw)} | ({"out": th * m * tw * m} if edge else {})
        bias = node.args[2] if len(node.args) > 2 and node.args[2] is not None else None
        init = _args(x, xshape, _Operand(src, node.args[1]), node.args[1].meta["shape"], src.pointer(out),
                     _pointer(src, bias) if bias is not None else 0, (co, cig, groups, flip, pads, (oh, ow), (th, tw, per)),
                     {k: f"{fname}_{k}" for k in scratch} | {"zpad": 0} | ({} if edge else {"out": 0}))
        rows = bool(epilogue and epilogue[1])
        every = f"{epilogue[0]}(p, 0, {epilogue[2]}); " if epilogue else ""
        body = [f"    if (em_winograd{m}_start_{t}(&a)) {{ {every}return; }}",
                f"    for (long n0 = 0; n0 < {n}; n0 += {per}) {{",
                *([f"        const long ns = n0 + {per} < {n} ? {per} : {n} - n0;"] if rows else []),
                f"        em_winograd{m}_block_{t}(&a, n0);",
                *["    " + ln for ln in _finish(epilogue, f"n0*{co * oh}", f"(n0 + ns)*{co * oh}")],
                "    }", *_finish(epilogue, None, None)]
    return [f"/* Winograd F({m}, 3) {node.target.name} {list(node.args[0].meta['shape'])} -> {list(out.shape)}, "
            f"groups {groups}: {node.target.name}({node.name}) */",
            f"static {ALIGNED} {t} " + ", ".join(f"{fname}_{k}[{size}]" for k, size in scratch.items())
            + ";  /* pads' borders stay 0 */",
            f"static void {fname}(void** restrict p) {{",
            f"    const em_winograd_args a = {init};",
            *body, "}"]
