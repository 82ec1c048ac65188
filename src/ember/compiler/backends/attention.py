"""C kernels for attention: batched GEMMs, the fused attention weights and their gradient.

``AttentionWeights`` (:mod:`ember._ops.attention`: ``softmax(scale * q @ k^T + mask)`` with a
causal option) runs one BLAS product per (batch, head) matrix with ``scale`` as its alpha, then
masks and normalises that matrix's rows while they are still in cache. ``Matmul`` of stacks of
matrices (the product with the values, and the four products of the backward) is one BLAS call
per matrix, each operand read in place through its strides (the heads of a fused qkv
projection, transposed views), and ``SoftmaxScoresGrad`` is one pass per row. Eagerly these are
NumPy's batched matmul (a loop of small products plus copies of strided operands) and about ten
array passes over the scores.
"""
import numpy as np

from ..symbolic import Expr, at_least_1
from .direct_gemm import TRANSPOSE, vector_bytes
from .kernels import CTYPES, _dtype, c_literal
from .python import label
from .plan import _align, _blas_layout, _is_node, _numel, batched_operands
from .toolchain import simd_reduction

__all__ = ["bmm_kernel", "attention_kernel", "softmax_grad_kernel"]

# the compilers with __builtin_shufflevector in C (GCC from 12, Clang): :func:`_lane_tree`
SHUFFLES = "defined(__clang__) || __GNUC__ >= 12"


def _batch_loops(batch, strided, body):
    """Nested loops over ``batch`` computing each operand's offset (``strided``: name ->
    (base offset, batch strides)), then ``body`` (lines)."""
    lines, indent = [], "    "
    for d, n in enumerate(batch):
        lines.append(f"{indent}for (long b{d} = 0; b{d} < {n}; b{d}++) {{")
        indent += "    "
    for name, (offset, strides) in strided.items():
        terms = [str(offset)] + [f"b{d}*{s}" for d, s in enumerate(strides) if s]
        lines.append(f"{indent}const long {name} = {' + '.join(terms)};")
    lines += [indent + ln for ln in body]
    lines += ["    " * (len(batch) - d) + "}" for d in range(len(batch))]
    return lines


def _gemm_call(a, b, out, m, k, n, alpha):
    """The BLAS call for one matrix of ``out`` (row-major C = alpha A B, as column-major
    C^T = B^T A^T), at offsets ``oa``, ``ob``, ``oc`` of the batch loop."""
    ta, lda = _blas_layout(a.strides[-2:], m, k)
    tb, ldb = _blas_layout(b.strides[-2:], k, n)
    gemm = "em_sgemm_any" if out.dtype == np.float32 else "em_dgemm_any"
    return (f"{gemm}('{tb}', '{ta}', {n}, {m}, {k}, {c_literal(alpha, out.dtype)}, B + ob, {at_least_1(ldb)}, "
            f"A + oa, {at_least_1(lda)}, 0, C + oc, {at_least_1(n)});")


def _tile_shape():
    """(float32 lanes of a vector register, float32 sums a register tile holds): 16 vectors of
    16 with AVX-512 (half of its 32 registers), 8 vectors of 8 with AVX2 (half of its 16). A
    tile of AVX-512's vectors on an AVX2 machine spills: the GPT step's per-head products took
    5.2 ms each there instead of about 0.15 (AMD EPYC, AVX2)."""
    lanes = vector_bytes() // 4
    return lanes, (16 if lanes == 16 else 8) * lanes


def _tiled(a, b, out, m, k, n, alpha, fname, zeros=None, causal=False, weights=False):
    """A C function computing one matrix of ``out`` (float32, its rows ``n`` a multiple of the
    vector's lanes dividing the tile: :func:`_tile_shape`) as ``alpha A B``, or None for other
    shapes. Each call packs B (k x n) into a contiguous block on the stack, then keeps a tile of
    ``tile / n`` rows of C in vector registers while it runs over k. Attention's per-head
    products (64 x 64 x 32 in the tiny GPT) are too small for BLAS to pay back its packing and dispatch: 35-50 GFLOP/s there,
    the tile 60-95 (AMD EPYC, loaded; ``docs/compile.md``). With ``zeros`` (:func:`zero_triangle`:
    A is expected to be 0 above, "lower", or below, "upper", its diagonal) each tile of rows
    skips the terms whose A is 0 in all of its rows, after checking on each call that A's
    diagonal is finite (those zeros are 0 wherever it is: :func:`_skip_check`; no check of A
    for ``weights``, the softmax weights themselves untransposed) and B's rows finite (0 * inf
    would be NaN): otherwise it runs them all, as eager.
    With ``causal`` (the scores of a causal attention, whose softmax reads C[i, j] for j <= i
    only) a tile of rows computes only the vectors of columns holding such a j: 40 of the 64
    vectors of a 64 x 64 head, the others are left as they were (the softmax selects them away).
    ``causal="gradient"`` (dY v^T, read only by the scores' gradient, which multiplies C[i, j]
    by the causal weights, 0 for j > i): the same where A and B are finite (C finite: its
    product with 0 is 0 as eager's), the other vectors written 0; else every vector."""
    if any(isinstance(v, Expr) for v in (m, k, n)):  # sizes known only at run time: BLAS
        return None
    lanes, tile = _tile_shape()
    if out.dtype != np.float32 or n % lanes or tile % n or m % (tile // n) or k * n > 16384 \
            or any(not isinstance(v, int) for v in (*a.strides[-2:], *b.strides[-2:])):
        return None
    (ar, ac), (br, bc), rows, vectors = a.strides[-2:], b.strides[-2:], tile // n, n // lanes
    # a transposed B (the keys of q @ k^T, the values of dY @ v^T) packed through 8x8 shuffles:
    # a [64x32] @ [32x64] head 2.5 -> 1.8 us against the element-wise gather (GPT step, Intel
    # Xeon, one thread, loaded; its attention weights 405 -> 365 us a layer)
    # B's rows whole vectors: copied vector by vector, and where the tile checks B, the check
    # taken on the way (P @ v's tile 168 -> 160 us a [16, 4] batch, AMD EPYC, AVX2: a second
    # pass over the packed B cost more than the copy)
    fused = br != 1 and bc == 1 and (zeros is not None or causal == "gradient")
    pack = (f"em_transpose_f(B, {bc}, {n}, {k}, packed, {n}, 0);" if br == 1 else
            _checked_pack(k, n, br, lanes) if fused else
            f"for (long kk = 0; kk < {k}; kk++) for (long j = 0; j < {n}; j++) packed[kk*{n} + j] = B[kk*{br} + j*{bc}];")
    lines = [TRANSPOSE] * (br == 1) + [
            f"/* C = {c_literal(alpha, out.dtype)} A B, [{m}x{k}] @ [{k}x{n}], register-tiled: {rows} rows of C in {rows * vectors} vectors */",
            f"static void {fname}_tile(const float* restrict A, const float* restrict B, float* restrict C) {{",
            f"    typedef float vf __attribute__((vector_size({lanes * 4}), aligned(4)));",
            f"    float packed[{k * n}] __attribute__((aligned(64)));",
            f"    {pack}",
            *_skip_check(zeros, m, k, n, ar, ac, weights, fused),
            f"    for (long i = 0; i < {m}; i += {rows}) {{"]
    kk = (f"for (long kk = {'skip ? i : 0' if zeros == 'upper' else '0'}; "
          f"kk < {f'(skip && i + {rows} < {k} ? i + {rows} : {k})' if zeros == 'lower' else k}; kk++) {{")

    def block(nv):
        """The tile's lines for its first ``nv`` vectors of columns."""
        return [f"vf acc[{rows}][{nv}];",
                f"for (int r = 0; r < {rows}; r++) for (int v = 0; v < {nv}; v++) acc[r][v] = (vf){{0}};",
                kk, f"    const vf* row = (const vf*)(packed + kk*{n});",
                f"    for (int r = 0; r < {rows}; r++) {{",
                f"        float x = A[(i + r)*{ar} + kk*{ac}];",
                f"        for (int v = 0; v < {nv}; v++) acc[r][v] += x * row[v];",
                "    }", "}",
                f"for (int r = 0; r < {rows}; r++) for (int v = 0; v < {nv}; v++)",
                f"    *(vf*)(C + (i + r)*{n} + v*{lanes}) = {c_literal(alpha, out.dtype)} * acc[r][v];"] + \
            [f"for (int r = 0; r < {rows}; r++) for (int v = {nv}; v < {vectors}; v++) "
             f"*(vf*)(C + (i + r)*{n} + v*{lanes}) = (vf){{0}};"] \
            * (causal == "gradient" and nv < vectors)
    if not causal or vectors == 1:
        return lines + ["        " + ln for ln in block(vectors)] + ["    }", "}"]
    # columns j > i are masked: a tile of rows needs the vectors holding its columns j < i + rows
    if causal == "gradient":
        lines[-1:-1] = _finite_check(m, k, n, ar, ac, fused)
    # in steps of two vectors where a row of C is eight (AVX2): four copies of the tile instead of
    # eight, for a vector of columns more on half the rows (masked, or finite and multiplied by 0)
    step = 2 if vectors >= 8 and vectors % 2 == 0 else 1
    lines.append(f"        const long need = {'!finite ? ' + str(vectors) + ' : ' if causal == 'gradient' else ''}"
                 f"(i + {rows} + {lanes * step - 1}) / {lanes * step} * {step};")
    for nv in range(step, vectors + 1, step):
        test = "else {" if nv == vectors else f"{'else ' if nv > step else ''}if (need == {nv}) {{"
        lines += ["        " + test] + ["            " + ln for ln in block(nv)] + ["        }"]
    return lines + ["    }", "}"]


def _skip_check(zeros, m, k, n, ar, ac, weights=False, fused=False):
    """C lines setting ``skip``: whether the terms of A's expected zeros (``zeros``, see
    :func:`_tiled`) may be left out: A's diagonal finite and the packed B all finite (``fused``:
    B was checked while packed; 0 * inf would be NaN).
    A's diagonal stands for its zeros. A causal attention's weights (:func:`softmax_weights`) are
    in each row either finite with the entries above the diagonal 0 (a sum s >= 1 of exponentials
    of x - max <= 0, times 1 / s) or NaN throughout (s NaN: a NaN or inf score). Their gradient
    (``SoftmaxScoresGrad``: (g - sum(g w)) w scale) is 0 there too, unless a g there, the sum
    (which then holds its g * 0, NaN) or scale is not finite: then so is the diagonal's
    (g_ii - sum) w_ii scale (times w_ii > 0, or NaN for w_ii = 0). So where the diagonal is
    finite the terms left out are 0 times a finite B; else the tile runs them all, as eager.
    The weights untransposed ("lower") need no check: a NaN row of A makes that row of C NaN
    with or without them. A scan of the zeros themselves took P @ v's tile from 140 to 170 us
    a [16, 4] batch (AMD EPYC, AVX2; 181 us while its masks compared 64-bit lanes)."""
    if zeros is None:
        return []
    lines = [] if fused else ["    int bad = 0;", "    " + simd_reduction("|", "bad"),
                              f"    for (long q = 0; q < {k * n}; q++) bad |= packed[q] * 0 != 0;"]
    if not (weights and zeros == "lower"):
        lines.append(f"    for (long r = 0; r < {min(m, k)}; r++) bad |= A[r*{ar + ac}] * 0 != 0;")
    return lines + ["    const int skip = !bad;"]


def _finite_check(m, k, n, ar, ac, fused=False):
    """C lines setting ``finite``: whether A (m x k) and the packed B (k x n) are all finite
    (``fused``: :func:`_checked_pack` declared ``bad`` and checked B). The loops run along
    A's unit stride where it has one."""
    outer, inner = (("kk", k), ("r", m)) if ar == 1 and ac != 1 else (("r", m), ("kk", k))
    lines = [] if fused else ["    int bad = 0;"]
    lines += [f"    for (long {outer[0]} = 0; {outer[0]} < {outer[1]}; {outer[0]}++) {{",
              "        " + simd_reduction("|", "bad"),
              f"        for (long {inner[0]} = 0; {inner[0]} < {inner[1]}; {inner[0]}++) bad |= A[r*{ar} + kk*{ac}] * 0 != 0;",
              "    }"]
    if not fused:
        lines += ["    " + simd_reduction("|", "bad"), f"    for (long q = 0; q < {k * n}; q++) bad |= packed[q] * 0 != 0;"]
    return lines + ["    const int finite = !bad;"]


def _checked_pack(k, n, br, lanes):
    """C lines packing B (k rows of n floats, n a multiple of ``lanes``, each row contiguous
    at a stride of ``br``) vector by vector, and declaring ``bad``: whether B holds an inf or
    NaN (x * 0 != 0, each lane's flag kept in a vector)."""
    return (f"typedef int vi __attribute__((vector_size({lanes * 4}), aligned(4)));\n"
            f"    vi nonfinite = (vi){{0}};\n"
            f"    for (long kk = 0; kk < {k}; kk++) for (int v = 0; v < {n // lanes}; v++) {{\n"
            f"        const vf x = *(const vf*)(B + kk*{br} + v*{lanes});\n"
            f"        *(vf*)(packed + kk*{n} + v*{lanes}) = x;\n"
            f"        nonfinite |= x * 0.0f != 0.0f;\n"
            f"    }}\n"
            f"    int bad = 0;\n"
            f"    for (int l = 0; l < {lanes}; l++) bad |= nonfinite[l];")


def causal_gradient(node):
    """Whether ``node`` (a product dY v^T) is read only by the gradient of a causal
    attention's scores (``SoftmaxScoresGrad`` with weights :func:`zero_triangle` calls "lower"),
    which multiplies its entries above the diagonal by 0."""
    return [getattr(u.target, "name", None) for u in node.users] == ["SoftmaxScoresGrad"] \
        and node.users[0].args[0] is node and zero_triangle(node.users[0].args[1]) == "lower"


def zero_triangle(node):
    """Where the matrices of a product's left operand ``node`` are expected to be 0: "lower"
    (above the diagonal: A[..., r, kk] for kk > r) for the weights of a causal attention
    without a mask, which its kernel writes 0 there, and for their gradient
    (``SoftmaxScoresGrad``, the weights times a finite number); "upper" for either transposed
    (``Permute`` of the last two dims: dv = P^T dY, dk = dS^T q); else None. Half of each
    product of a causal attention's backward, and of the product with the values."""
    node, flipped = _untransposed(node)
    if getattr(node, "op", None) == "call_op" and node.target.name == "SoftmaxScoresGrad":
        node = node.args[1]
    if not _causal_weights(node):
        return None
    return "upper" if flipped else "lower"


def softmax_weights(node):
    """Whether a product's left operand ``node`` is a causal attention's weights themselves
    (:func:`zero_triangle`'s operand but for the gradient), or them transposed."""
    return _causal_weights(_untransposed(node)[0])


def _untransposed(node):
    """(the node under ``node``'s transposes of the last two dims, whether they flip it)."""
    flipped = False
    while getattr(node, "op", None) == "call_op" and node.target.name == "Permute":
        dims = tuple(node.kwargs.get("dims", ()))
        if dims != tuple(range(len(dims) - 2)) + (len(dims) - 1, len(dims) - 2):
            return None, flipped
        node, flipped = node.args[0], not flipped
    return node, flipped


def _causal_weights(node):
    """Whether ``node`` is the weights of a causal attention without a mask."""
    return getattr(node, "op", None) == "call_op" and node.target.name == "AttentionWeights" \
        and bool(node.kwargs.get("is_causal")) and not (len(node.args) > 2 and _is_node(node.args[2]))


def _products(src, node, fname, alpha, row_lines, zeros=None, causal=False, weights=False):
    plan = src.plan
    out = plan.loc[node]
    a, b = batched_operands(node, plan.loc)
    batch = out.shape[:-2]
    m, k, n = out.shape[-2], a.shape[-1], out.shape[-1]
    t = CTYPES[out.dtype]
    tile = _tiled(a, b, out, m, k, n, alpha, fname, zeros, causal, weights)
    call = _gemm_call(a, b, out, m, k, n, alpha) if tile is None else f"{fname}_tile(A + oa, B + ob, C + oc);"
    # each operand's batch strides (0 where it broadcasts); its last two dims are the matrix's
    # the operands' base offsets go into their pointers, where kernels alike but for them (a
    # layer's products reading q, k and v out of one buffer) share one copy (shared.py)
    offsets = {"oa": (0, _align(a, out.shape)[:-2]), "ob": (0, _align(b, out.shape)[:-2]),
               "oc": (0, _align(out, out.shape)[:-2])}
    if len(node.args) > 2 and _is_node(node.args[2]):
        mask = plan.loc[node.args[2]]
        offsets["om"] = (mask.offset, _align(mask, out.shape)[:-2])
    lines = (tile or []) + [f"static void {fname}(void** restrict p) {{",
             f"    const {t}* A = {src.pointer(a)} + {a.offset};",
             f"    const {t}* B = {src.pointer(b)} + {b.offset};",
             f"    {t}* C = {src.pointer(out)};",
             f"    em_blas_threads((long)({m * n * k}));"]
    return lines + _batch_loops(batch, offsets, [call] + row_lines) + ["}"]


def bmm_kernel(src, node, fname):
    """``Matmul`` of stacks of matrices: one BLAS call per matrix of the broadcast batch (or
    the register tile, skipping a causal attention's zeros: :func:`zero_triangle`)."""
    out = src.plan.loc[node]
    head = [f"/* batched GEMM {list(out.shape[:-2])} x [{out.shape[-2]}x{src.plan.loc[node.args[0]].shape[-1]}]"
            f" @ [..x{out.shape[-1]}]: {label(node)} */"]
    zeros = zero_triangle(node.args[0])
    return head + _products(src, node, fname, 1, [], zeros, causal_gradient(node) and "gradient",
                            zeros is not None and softmax_weights(node.args[0]))


def attention_kernel(src, node, fname):
    """Scores ``scale * q @ k^T`` by BLAS per matrix, then per row: the mask (bool: False
    gives -inf; float: added), the causal mask (key j > query i), and the softmax; a row with
    every key masked gives zeros (``masked_rows="zero"``) or NaN, as the op's forward."""
    plan = src.plan
    out = plan.loc[node]
    attrs = node.kwargs
    t = CTYPES[out.dtype]
    sfx = "f" if out.dtype == np.float32 else ""
    rows, n = out.shape[-2], out.shape[-1]
    mask = node.args[2] if len(node.args) > 2 and _is_node(node.args[2]) else None
    causal = bool(attrs.get("is_causal"))
    if mask is None and causal:
        row = _causal_softmax_rows(t, sfx, rows, n, out.dtype)
    else:
        score = "y[j]"
        if mask is not None:
            mloc = plan.loc[mask]
            strides = _align(mloc, out.shape)
            at = f"M[om + i*{strides[-2]} + j*{strides[-1]}]"
            score = f"({at} ? y[j] : -INFINITY)" if _dtype(mask) == np.bool_ else f"(y[j] + {at})"
        if causal:
            score = f"(j > i ? -INFINITY : {score})"
        row = [f"for (long i = 0; i < {rows}; i++) {{",
               f"    {t}* restrict y = C + oc + i*{n};",
               *_softmax_row(t, sfx, str(n), score, attrs.get("masked_rows", "zero") == "zero", out.dtype),
               "}"]
    head = [f"/* attention weights softmax(scale * q @ k^T{' + mask' if mask is not None else ''})"
            f"{' causal' if attrs.get('is_causal') else ''} over {list(out.shape)}: {label(node)} */"]
    lines = _products(src, node, fname, attrs.get("scale", 1.0), row, causal=mask is None and causal)
    if mask is not None:
        mloc = plan.loc[mask]
        at = next(i for i, ln in enumerate(lines) if ln.startswith("    em_blas_threads"))
        lines.insert(at, f"    const {CTYPES[mloc.dtype]}* M = {src.pointer(mloc)};")
    return head + lines


def _causal_softmax_rows(t, sfx, rows, n, dtype):
    """The softmax of a causal attention's scores C[i, j], row i keeping j <= i and the others
    written 0, in blocks of 16 rows: each block's maxima, then its exponentials and their sums,
    then the scaling, each phase a loop over the block's rows (their chains of exp and sum are
    independent, so the CPU overlaps rows; row by row, each row's max, sum and division waited
    for the one before: 0.62 -> 0.55 ms per [16, 4, 64, 64] in the GPT step, AMD EPYC, AVX2).
    The loops run over the whole vectors holding a j <= i and select (loops of i + 1, with
    their scalar tails, took 0.8 ms on a Xeon, the whole row 0.35; these take 44% fewer
    exponentials than the whole row); the vectors after them are written 0 times 1 / s (NaN
    in a row holding one). Where rows are whole vectors (``n`` a multiple of the lanes), the
    loops go vector by vector: the maxima in vector registers, the sums in one partial sum
    per lane (:func:`_vector_parts`)."""
    lanes = vector_bytes() // dtype.itemsize
    if n % lanes:
        maxima, sums, scaling = _softmax_parts(t, sfx, "jn", "y[j]", False, dtype, keep="j <= i")
        last = f"(i | {lanes - 1}) + 1"
    else:
        maxima, sums, scaling = _vector_parts(t, sfx, lanes, dtype)
        last = f"(i / {lanes} + 1) * {lanes}"

    def phase(body):
        return ["    for (long i = i0; i < i1; i++) {",
                f"        {t}* restrict y = C + oc + i*{n};",
                f"        const long jn = {last} < ({n}) ? {last} : ({n});",
                *["    " + line for line in body], "    }"]
    return [f"for (long i0 = 0; i0 < ({rows}); i0 += 16) {{",
            f"    const long i1 = i0 + 16 < ({rows}) ? i0 + 16 : ({rows});",
            f"    {t} mx[16], sm[16];",
            *phase(maxima + ["    mx[i - i0] = m;"]),
            *phase([f"    const {t} m = mx[i - i0];"] + sums + ["    sm[i - i0] = s;"]),
            *phase([f"    const {t} s = sm[i - i0];"] + scaling + [f"    for (long j = jn; j < ({n}); j++) y[j] = 0 * inv;"]),
            "}"]


def _vector_parts(t, sfx, lanes, dtype):
    """:func:`_softmax_parts` (``keep`` j <= i) of rows of ``jn`` scores, ``jn`` a multiple of
    ``lanes``: the max over vectors (GCC's vector extension; as an ``omp simd`` loop over jn
    the max took 37 us more of the 315 a layer's [16, 4, 64, 64] softmax took, as a loop over
    an array of the lanes 136 more), the exponentials in a loop over the vectors around one
    over their lanes, each lane's sum its own (an ``omp simd`` sum over jn: 25 us more). AMD
    EPYC, AVX2, the softmax alone: 315 -> 253 us; the kernel with its scores 492 -> 421. The
    lanes' maxima, NaN flags and sums are then combined in the registers, halving the lanes
    each step (:func:`_lane_tree`; the scalar loop over the lanes remains for compilers without
    ``__builtin_shufflevector``): on AVX-512 (Zen 4) the kernel with its scores 271 -> 241 us.
    The sums stay in an array of lanes, copied to a vector after the loop (it stays in a
    register): summing each stored vector read back (``*(vt*)yv``) took 290 us where the output
    is not 64-byte aligned, its 16 stores forwarded to no load."""
    it = "int" if dtype.itemsize == 4 else "long long"
    size = lanes * dtype.itemsize
    iota = ", ".join(map(str, range(lanes)))
    vector = f"    typedef {t} vt __attribute__((vector_size({size}), aligned({dtype.itemsize})));"
    maxima = [vector,
              f"    typedef {it} vb __attribute__((vector_size({size}), aligned({dtype.itemsize})));",
              "    const vt lowest = (vt){0} - INFINITY;",
              "    vt mv = lowest; vb bad = (vb){0};",
              f"    for (long v = 0; v < jn; v += {lanes}) {{",
              "        const vt x = *(const vt*)(y + v);",
              f"        const vb keep = (vb){{{iota}}} + ({it})v <= ({it})i, more = x > mv;",
              "        mv = (vt)((keep & more & (vb)x) | (~(keep & more) & (vb)mv));",
              "        bad |= keep & (x != x);",
              "    }",
              *_lane_tree(lanes, lambda shuffle: f"const vt sh = {shuffle('mv')}; const vb more = sh > mv; "
                          f"mv = (vt)((more & (vb)sh) | (~more & (vb)mv)); bad |= {shuffle('bad')};",
                          f"for (int l = 1; l < {lanes}; l++) {{ mv[0] = mv[l] > mv[0] ? mv[l] : mv[0]; bad[0] |= bad[l]; }}"),
              f"    {t} m = bad[0] ? NAN : mv[0];"]
    sums = [f"    {t} lanes[{lanes}] = {{0}};",
            f"    for (long v = 0; v < jn; v += {lanes}) {{",
            f"        {t}* restrict yv = y + v;",
            "        #pragma GCC ivdep",
            f"        for (int l = 0; l < {lanes}; l++) {{ {t} e = em_exp{sfx}(yv[l] - m); e = (int)v + l <= (int)i ? e : 0; "
            "yv[l] = e; lanes[l] += e; }",
            "    }",
            vector, "    vt lane; memcpy(&lane, lanes, sizeof lane);",
            *_lane_tree(lanes, lambda shuffle: f"lane += {shuffle('lane')};",
                        f"for (int l = 1; l < {lanes}; l++) lane[0] += lane[l];"),
            f"    {t} s = lane[0];"]
    return maxima, sums, [f"    {t} inv = 1 / s;", "    for (long j = 0; j < jn; j++) y[j] *= inv;"]


def _lane_tree(lanes, step, scalar):
    """Lines combining the lanes of vectors in log2(``lanes``) steps, each ``step(shuffle)`` (a C
    statement; ``shuffle(v)`` is ``v`` with lane l swapped for lane l ^ w, w = lanes / 2,
    lanes / 4, ..., 1), so that every lane ends up holding the combination of all; ``scalar``
    (a statement leaving it in lane 0) for compilers without ``__builtin_shufflevector``."""
    lines, w = [f"    #if {SHUFFLES}"], lanes // 2
    while w:
        order = ", ".join(str(lane ^ w) for lane in range(lanes))
        lines.append("    { " + step(lambda v, order=order: f"__builtin_shufflevector({v}, {v}, {order})") + " }")
        w //= 2
    return lines + ["    #else", "    " + scalar, "    #endif"]


def _softmax_row(t, sfx, keys, score, zero_rows, dtype, keep=None):
    """Softmax over ``y[0:keys]`` after ``y[j] = score``: the max (NaN if a score is), the
    sum of exponentials, the scaling. With ``zero_rows`` a row whose scores are all -inf gives
    zeros: the max is raised to the lowest finite number and the sum to the smallest normal
    one (the op's forward does the same). With ``keep`` (a C condition on j) only the kept
    scores take part and the others are written 0; no exponential of -inf is taken (its
    underflow through the subnormals costs a microcode assist per lane on Intel CPUs, 8x the
    time of a finite argument)."""
    return [line for part in _softmax_parts(t, sfx, keys, score, zero_rows, dtype, keep) for line in part]


def _softmax_parts(t, sfx, keys, score, zero_rows, dtype, keep=None):
    """:func:`_softmax_row`'s lines in three parts: the max ``m``, the exponentials and their
    sum ``s`` (reading ``m``), the scaling (reading ``s``)."""
    if keep is not None:
        maxima = [f"    {t} m = -INFINITY; int nan = 0;",
                  "    " + simd_reduction("max", "m") + " reduction(|:nan)",
                  f"    for (long j = 0; j < {keys}; j++) {{ {t} v = {keep} ? {score} : -INFINITY; m = v > m ? v : m; nan |= v != v; }}",
                  "    if (nan) m = NAN;"]
        sums = [f"    {t} s = 0;", "    " + simd_reduction("+", "s"),
                f"    for (long j = 0; j < {keys}; j++) {{ {t} e = em_exp{sfx}({score} - m); e = {keep} ? e : 0; y[j] = e; s += e; }}"]
        return maxima, sums, [f"    {t} inv = 1 / s;", f"    for (long j = 0; j < {keys}; j++) y[j] *= inv;"]
    maxima = [f"    {t} m = -INFINITY; int nan = 0;",
              "    " + simd_reduction("max", "m") + " reduction(|:nan)",
              f"    for (long j = 0; j < {keys}; j++) {{ {t} v = {score}; y[j] = v; m = v > m ? v : m; nan |= v != v; }}",
              "    if (nan) m = NAN;"]
    if zero_rows:
        lowest = c_literal(-np.finfo(dtype).max, dtype)
        maxima.append(f"    if (m < {lowest}) m = {lowest};")
    sums = [f"    {t} s = 0;", "    " + simd_reduction("+", "s"),
            f"    for (long j = 0; j < {keys}; j++) {{ {t} e = em_exp{sfx}(y[j] - m); y[j] = e; s += e; }}"]
    if zero_rows:
        tiny = c_literal(np.finfo(dtype).tiny, dtype)
        sums.append(f"    if (s < {tiny}) s = {tiny};")
    return maxima, sums, [f"    {t} inv = 1 / s;", f"    for (long j = 0; j < {keys}; j++) y[j] *= inv;"]


def softmax_grad_kernel(src, node, fname):
    """``scale * w * (g - sum(g * w))`` over each row of the scores (SoftmaxScoresGrad)."""
    plan = src.plan
    g, w, out = plan.loc[node.args[0]], plan.loc[node.args[1]], plan.loc[node]
    t = CTYPES[out.dtype]
    n = out.shape[-1]
    rows = _numel(out.shape[:-1])
    scale = c_literal(node.kwargs.get("scale", 1.0), out.dtype)
    return [f"/* gradient of the scores behind softmax weights, rows of {list(out.shape)}: {label(node)} */",
            f"static void {fname}(void** restrict p) {{",
            f"    for (long r = 0; r < {rows}; r++) {{",
            f"        const {t}* restrict g = {src.pointer(g)} + {g.offset} + r*{n};",
            f"        const {t}* restrict w = {src.pointer(w)} + {w.offset} + r*{n};",
            f"        {t}* restrict y = {src.pointer(out)} + r*{n};",
            f"        {t} dot = 0;",
            f"        {simd_reduction('+', 'dot')}",
            f"        for (long j = 0; j < {n}; j++) dot += g[j] * w[j];",
            f"        for (long j = 0; j < {n}; j++) y[j] = (g[j] - dot) * w[j] * {scale};",
            "    }", "}"]
