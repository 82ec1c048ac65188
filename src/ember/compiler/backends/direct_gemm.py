"""The direct GEMM kernel: a product too small for a BLAS call to pay for itself, as C loops
that keep a tile of the result in vector registers (the GEMM kernel's candidate 2, see
:mod:`.autotune`).

``C[M, N] = A[M, K] B[K, N]`` with every size and stride a constant of the generated code.
B is read in place when its rows are contiguous and a whole number of vectors wide; otherwise
it is first packed into a contiguous block on the stack (rows padded with zeros to whole
vectors; a transposed B, as ``Linear``'s weight, read along its rows). Then each block of
``rows`` rows of C is computed panel by panel (``vectors`` vectors of columns each), the sums
of a panel held in registers over all of K, and the block is handed to the kernel's
``finish`` (bias, epilogue) while it is in cache.

Measured on the digits MLP's products (AMD EPYC with AVX-512, one thread, in µs; OpenBLAS
0.3.31 through NumPy): ``x @ W^T`` [32x64]@[64x128] 9.4-10.4 by BLAS, whose transposed-B
("TN") path runs at half the speed of its plain one (4.8) on these sizes, 5.6-5.8 here (0.9 of
it the packing); [32x64]@[64x10] 0.62 by BLAS, 0.72 here, 2.9 by the scalar loop this
replaced; the plain layouts of the backward's [32x64]@[64x128] 5.5 here, 4.8 by BLAS (which
the cost model keeps for them).

The packed kernel (:func:`packed_lines`, the GEMM kernel's candidate 3) is the same register
tile grown to the large float32 products of a transformer step on AVX-512 machines, with B (and
a strided A) packed per block of K, as GotoBLAS does.
"""
import functools
import re

from .toolchain import cpu_identity

__all__ = ["direct_lines", "fits", "packed_fits", "packed_lines", "packed_support", "TRANSPOSE"]

_PACK_LIMIT = 16384  # elements of a packed B on the stack (64 KiB of float32)


def fits(n, k):
    """Whether B (k x n), packed with its rows padded to whole vectors, fits on the stack."""
    return k * -(-n // 16) * 16 <= _PACK_LIMIT


@functools.lru_cache(maxsize=None)
def vector_bytes():
    """Bytes of the widest vector registers the generated code may use (it is built with
    ``-march=native``): 64 with AVX-512, else 32."""
    return 64 if " avx512f " in f" {cpu_identity()} " else 32


# Packing a transposed float32 B (Linear's weight): 8x8 blocks through three rounds of vector
# shuffles (AVX's unpack, shuffle and lane permute), 0.9 us for a 128x64 weight against 2.5 for
# the scalar loop that remains for the edges and for compilers without __builtin_shufflevector.
TRANSPOSE = """#ifndef EM_TRANSPOSE_F
#define EM_TRANSPOSE_F
/* dst[q*ldd + j] = src[j*lds + q] for j < rows, q < cols; and where sums is not NULL,
   sums[q] += src[j*lds + q] for each j in order (a weight gradient's A: its bias gradient) */
static void em_transpose_f(const float* restrict src, long lds, long rows, long cols, float* restrict dst, long ldd,
                           float* restrict sums) {
    long r8 = rows & ~7L, c8 = cols & ~7L;
#if defined(__clang__) || __GNUC__ >= 12
    typedef float v8 __attribute__((vector_size(32), aligned(4)));
    for (long j = 0; j < r8; j += 8)
        for (long q = 0; q < c8; q += 8) {
            v8 r[8], s[8], t[8];
            for (int i = 0; i < 8; i++) r[i] = *(const v8*)(src + (j + i)*lds + q);
            if (sums) {
                v8 total = *(v8*)(sums + q);
                for (int i = 0; i < 8; i++) total += r[i];
                *(v8*)(sums + q) = total;
            }
            for (int i = 0; i < 8; i += 2) {
                s[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
                s[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
            }
            for (int i = 0; i < 8; i += 4) {
                t[i] = __builtin_shufflevector(s[i], s[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
                t[i + 1] = __builtin_shufflevector(s[i], s[i + 2], 2, 3, 10, 11, 6, 7, 14, 15);
                t[i + 2] = __builtin_shufflevector(s[i + 1], s[i + 3], 0, 1, 8, 9, 4, 5, 12, 13);
                t[i + 3] = __builtin_shufflevector(s[i + 1], s[i + 3], 2, 3, 10, 11, 6, 7, 14, 15);
            }
            for (int i = 0; i < 4; i++) {
                *(v8*)(dst + (q + i)*ldd + j) = __builtin_shufflevector(t[i], t[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
                *(v8*)(dst + (q + i + 4)*ldd + j) = __builtin_shufflevector(t[i], t[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
            }
        }
#else
    r8 = c8 = 0;
#endif
    for (long q = 0; q < cols; q++)
        for (long j = q < c8 ? r8 : 0; j < rows; j++) {
            dst[q*ldd + j] = src[j*lds + q];
            if (sums) sums[q] += src[j*lds + q];
        }
}
#endif
"""


def _tile(t, rows, vectors, lanes, k, a, b_row, c_row, store_cols):
    """C lines computing ``rows`` x ``vectors * lanes`` of C: ``a(r, q)`` is A's element,
    ``b_row(q)`` the address of B's row q at the panel, ``c_row(r)`` of C's row r at the
    panel; ``store_cols`` columns are written (fewer than the tile's in the last panel)."""
    width = vectors * lanes
    lines = [f"em_v acc[{rows}][{vectors}];",
             f"for (int r = 0; r < {rows}; r++) for (int v = 0; v < {vectors}; v++) acc[r][v] = (em_v){{0}};",
             f"for (long q = 0; q < {k}; q++) {{",
             f"    const em_v* b = (const em_v*)({b_row('q')});",
             f"    for (int r = 0; r < {rows}; r++) {{",
             f"        const {t} x = {a('r', 'q')};",
             f"        for (int v = 0; v < {vectors}; v++) acc[r][v] += x * b[v];",
             "    }", "}"]
    if store_cols == width:
        lines.append(f"for (int r = 0; r < {rows}; r++) for (int v = 0; v < {vectors}; v++) "
                     f"*(em_v*)({c_row('r')} + v*{lanes}) = acc[r][v];")
    else:  # the last columns: through a row on the stack
        lines += [f"for (int r = 0; r < {rows}; r++) {{",
                  f"    {t} row[{width}] __attribute__((aligned(64)));",
                  f"    for (int v = 0; v < {vectors}; v++) *(em_v*)(row + v*{lanes}) = acc[r][v];",
                  f"    for (int c = 0; c < {store_cols}; c++) ({c_row('r')})[c] = row[c];",
                  "}"]
    return lines


def direct_lines(t, itemsize, m, n, k, sa, sb, finish):
    """(file-scope C lines, C statements) of the direct product into ``C`` (``T* C``, rows of ``n``) from
    ``const T* A`` and ``const T* B`` (element strides ``sa``, ``sb``: (row, column)), calling
    ``finish(r0, r1)`` (a C statement) after each block of rows. Needs :func:`fits`."""
    if not m or not n:
        return [], []
    vb = vector_bytes()
    lanes = vb // itemsize
    padded = -(-n // lanes) * lanes
    # register budget: 16 sums in 32 registers (AVX-512), 12 in 16 (AVX2), B's row and A's element
    # besides; 8 rows x 2 vectors ran the MLP's products 15% faster than 4 x 4 (fewer B loads per
    # sum); on AVX2 6 x 2 (the 6x16 tile of BLIS's Haswell kernel) against 4 x 2 took the digits
    # MLP's step from 0.078-0.081 to 0.068-0.069 ms (AMD EPYC, one thread)
    vectors = min(2, padded // lanes)
    rows = min(m, (16 if vb == 64 else 12) // vectors)
    lines = [f"typedef {t} em_v __attribute__((vector_size({vb}), aligned({itemsize})));"]
    if sb[1] == 1 and n % lanes == 0:  # B's rows read in place
        ldb, base = sb[0], "B"
    else:
        ldb, base = padded, "Bp"
        lines.append(f"{t} Bp[{max(1, k * padded)}] __attribute__((aligned(64)));")
        if sb[0] == 1 and t == "float":  # transposed
            lines.append(f"em_transpose_f(B, {sb[1]}, {n}, {k}, Bp, {padded}, 0);")
        else:
            lines.append(f"for (long q = 0; q < {k}; q++) for (long j = 0; j < {n}; j++) "
                         f"Bp[q*{padded} + j] = B[q*{sb[0]} + j*{sb[1]}];")
        if padded > n:
            lines.append(f"for (long q = 0; q < {k}; q++) for (long j = {n}; j < {padded}; j++) Bp[q*{padded} + j] = 0;")

    def block(count):
        """One block of ``count`` rows from row i: its panels, then finish. The panels inside
        the first n columns store whole; one narrower or cut panel may end the row."""
        width = vectors * lanes
        whole = n // width
        a = lambda r, q: f"A[(i + {r})*{sa[0]} + {q}*{sa[1]}]"
        b_row = lambda q: f"{base} + {q}*{ldb} + j"
        c_row = lambda r: f"C + (i + {r})*{n} + j"
        out = []
        if whole:
            out += [f"for (long j = 0; j < {whole * width}; j += {width}) {{"]
            out += ["    " + ln for ln in _tile(t, count, vectors, lanes, k, a, b_row, c_row, width)] + ["}"]
        if n > whole * width:
            tail = _tile(t, count, (padded - whole * width) // lanes, lanes, k, a, b_row, c_row, n - whole * width)
            out += ["{", f"    const long j = {whole * width};"] + ["    " + ln for ln in tail] + ["}"]
        return out + [finish("i", f"i + {count}")]

    whole = m - m % rows
    if whole:
        lines += [f"for (long i = 0; i < {whole}; i += {rows}) {{"] + ["    " + ln for ln in block(rows)] + ["}"]
    if m % rows:
        lines += ["{", f"    const long i = {whole};"] + ["    " + ln for ln in block(m % rows)] + ["}"]
    return [TRANSPOSE] * ("em_transpose_f(" in "".join(lines)), lines


# The packed kernel's blocking (float32, AVX-512): a register tile of 6 rows by 4 vectors (24
# sums; a row's element broadcast against 4 vectors of B: 6 + 4 loads per 24 fused multiply-adds),
# K in blocks of 256 (a 64-column panel of B, 64 KiB, stays in L1/L2 while a block of rows runs
# over it), rows in blocks of 96 finished (bias, epilogue) while in cache.
_MR, _NV, _KC, _MB = 6, 4, 256, 96


def _packed_shape():
    """(float32 lanes of a vector register, vectors across a register tile's row): 6 rows by 4
    vectors of 16 with AVX-512 (24 of its 32 registers), 6 rows by 2 vectors of 8 with AVX2 (12
    of its 16: the 6x16 tile of BLIS's and OpenBLAS's Haswell kernels)."""
    lanes = vector_bytes() // 4
    return lanes, (_NV if lanes == 16 else 2)


def packed_fits(m, n, k, itemsize):
    """Whether the packed kernel applies: float32, constant sizes, whole vectors of columns."""
    return itemsize == 4 and all(isinstance(v, int) for v in (m, n, k)) and n % _packed_shape()[0] == 0


_TILE_SIGNATURE = ("(const float* restrict A, long ar, long ac, const float* restrict Bp, float* restrict C, "
                   "long ldc, long kc, int first)")


def _packed_tile(rows, vectors):
    """``em_packed_<rows>x<vectors>(A, ar, ac, Bp, C, ldc, kc, first)``: C[rows, vectors*lanes]
    (rows ``ldc`` apart) = (first ? 0 : C) + A[rows, kc] Bp[kc, vectors*lanes], A's elements
    ``ar``, ``ac`` apart (lanes: :func:`_packed_shape`)."""
    lanes = _packed_shape()[0]
    return [f"void em_packed_{rows}x{vectors}{_TILE_SIGNATURE} {{",
            f"    typedef float em_vp __attribute__((vector_size({lanes * 4}), aligned(4)));",
            f"    em_vp acc[{rows}][{vectors}];",
            f"    for (int r = 0; r < {rows}; r++) for (int v = 0; v < {vectors}; v++)",
            f"        acc[r][v] = first ? (em_vp){{0}} : *(const em_vp*)(C + r*ldc + v*{lanes});",
            "    for (long q = 0; q < kc; q++) {",
            f"        const em_vp* b = (const em_vp*)(Bp + q*{vectors * lanes});",
            f"        for (int r = 0; r < {rows}; r++) {{",
            "            const float x = A[r*ar + q*ac];",
            f"            for (int v = 0; v < {vectors}; v++) acc[r][v] += x * b[v];",
            "        }", "    }",
            f"    for (int r = 0; r < {rows}; r++) for (int v = 0; v < {vectors}; v++) *(em_vp*)(C + r*ldc + v*{lanes}) = acc[r][v];",
            "}"]


def packed_support(program):
    """(declarations, definitions) of the helpers the packed products in ``program`` (C text)
    call: the register tiles it names and the packing functions, each compiled once, in a
    unit of their own (cgen.CSource.helpers: a copy per product, or per translation unit, made
    gcc's time on the GPT step half as long again; in their own unit, a graph calling the same
    tiles as one compiled before links the cached object)."""
    tiles = sorted(set(re.findall(r"em_packed_(\d+)x(\d+)\(", program)))
    if not tiles:
        return "", ""
    declarations = [f"void em_packed_{r}x{v}{_TILE_SIGNATURE};" for r, v in tiles] + [_PACK_SIGNATURES]
    lanes, vectors = _packed_shape()
    definitions = [TRANSPOSE, PACK.replace("EM_NC", str(vectors * lanes))] + \
        [ln for r, v in tiles for ln in _packed_tile(int(r), int(v))]
    return "\n".join(declarations) + "\n", "\n".join(definitions) + "\n"


# Packing for the packed kernel, shared by every product of a graph (sizes and strides as
# arguments). em_pack_b: rows [k0, k0 + kc) of B (n columns) into panels of
# ``width`` columns, panel j's rows contiguous at bp + j*kc (a transposed B through
# em_transpose_f's shuffles; a whole panel copies a constant EM_NC floats per row, as a loop of
# variable count became a memcpy call per row). em_pack_a: rows [i0, i1) of A, columns
# [k0, k0 + kc): a transposed A (a weight gradient's, ``X^T @ dY``) into rows of kc through
# em_transpose_f's shuffles (read as the tiles read a contiguous A), adding the block's columns
# into sums[i - i0] where sums is not NULL (plan.fold_bias_sums: only a transposed A); any other, each tile of
# ``mr`` rows (fewer at the end) interleaved: row r, column q at (i - i0)*kc + q*rows + r.
# The transposed A used to take the second form, with gcc calling memcpy for each 24 bytes:
# 4-7% of the GPT step's time (perf), its weight gradients 0.2 ms slower than OpenBLAS's.
_PACK_SIGNATURES = """void em_pack_b(const float* restrict B, long sb0, long sb1, long k0, long kc, long n, long width, float* restrict bp);
void em_pack_a(const float* restrict A, long sa0, long sa1, long k0, long kc, long i0, long i1, long mr, float* restrict ap,
               float* restrict sums);"""
PACK = """void em_pack_b(const float* restrict B, long sb0, long sb1, long k0, long kc, long n, long width, float* restrict bp) {
    for (long j = 0; j < n; j += width) {
        const long w = n - j < width ? n - j : width;
        if (sb0 == 1) em_transpose_f(B + j*sb1 + k0, sb1, w, kc, bp + j*kc, w, 0);
        else if (sb1 == 1 && w == EM_NC)
            for (long q = 0; q < kc; q++) for (long c = 0; c < EM_NC; c++) bp[j*kc + q*EM_NC + c] = B[(k0 + q)*sb0 + j + c];
        else for (long q = 0; q < kc; q++) for (long c = 0; c < w; c++) bp[j*kc + q*w + c] = B[(k0 + q)*sb0 + (j + c)*sb1];
    }
}
void em_pack_a(const float* restrict A, long sa0, long sa1, long k0, long kc, long i0, long i1, long mr, float* restrict ap,
               float* restrict sums) {
    if (sa0 == 1) {
        em_transpose_f(A + k0*sa1 + i0, sa1, kc, i1 - i0, ap, kc, sums);
        return;
    }
    for (long i = i0; i < i1; i += mr) {
        const long rows = i1 - i < mr ? i1 - i : mr;
        for (long q = 0; q < kc; q++) for (long r = 0; r < rows; r++) ap[(i - i0)*kc + q*rows + r] = A[(i + r)*sa0 + (k0 + q)*sa1];
    }
}
"""  # (EM_NC: the panels' width, _packed_shape's vectors times lanes)


def packed_lines(fname, m, n, k, sa, sb, finish, sums=None):
    """(file-scope C lines, C statements) of the packed product ``C = A B`` (float32, see
    :func:`packed_fits`; ``const float* A``, ``const float* B`` with element strides ``sa``,
    ``sb``; ``float* C`` rows of ``n``), calling ``finish(r0, r1)`` (a C statement) on each
    block of rows once its sums are complete; ``sums`` (a C pointer, A transposed) gets A's row
    sums, each adding A's elements in order of k. GotoBLAS's scheme (Goto and van de Geijn,
    *Anatomy of High-Performance Matrix Multiplication*, 2008) with every size a constant: for
    each block of K, B's rows are packed into panels of 64 columns (each panel's rows
    contiguous; a transposed B through 8x8 shuffles), A's rows too where they are not
    contiguous, then each block of rows runs every panel in register tiles. On the tiny GPT's
    products with contiguous A rows it ran 0.79-0.88 of OpenBLAS 0.3.31's time (Intel Xeon,
    AVX-512, one thread, docs/compile.md)."""
    lanes, nv = _packed_shape()
    width, kc_max = nv * lanes, min(k, _KC)
    rest, pack_a = m % _MR, sa[1] != 1
    whole, tail = n - n % width, (n % width) // lanes
    helpers = [f"static float {fname}_bp[{kc_max * n}] __attribute__((aligned(64)));"]
    if pack_a:
        helpers.append(f"static float {fname}_ap[{min(m, _MB) * kc_max}] __attribute__((aligned(64)));")
    lines = [f"for (long i = 0; i < {m}; i++) {sums}[i] = 0;"] if sums else []
    lines += [f"for (long k0 = 0; k0 < {k}; k0 += {kc_max}) {{",
             f"    const long kc = {k} - k0 < {kc_max} ? {k} - k0 : {kc_max};",
             f"    em_pack_b(B, {sb[0]}, {sb[1]}, k0, kc, {n}, {width}, {fname}_bp);",
             f"    for (long i0 = 0; i0 < {m}; i0 += {_MB}) {{",
             f"        const long i1 = i0 + {_MB} < {m} ? i0 + {_MB} : {m};"]
    if pack_a:
        lines.append(f"        em_pack_a(A, {sa[0]}, {sa[1]}, k0, kc, i0, i1, {_MR}, {fname}_ap, {sums + ' + i0' if sums else '0'});")
    a_at = f"{fname}_ap + (i - i0)*kc" if pack_a else f"A + i*{sa[0]} + k0*{sa[1]}"

    def panels(j, vectors):
        strides = lambda rows: ("kc, 1" if sa[0] == 1 else f"1, {rows}") if pack_a else f"{sa[0]}, {sa[1]}"
        call = lambda rows: (f"em_packed_{rows}x{vectors}({a_at}, {strides(rows)}, {fname}_bp + {j}*kc, "
                             f"C + i*{n} + {j}, {n}, kc, k0 == 0);")
        return ["long i = i0;", f"for (; i + {_MR} <= i1; i += {_MR}) {call(_MR)}"] + \
            ([f"if (i < i1) {call(rest)}"] if rest else [])
    if whole:
        lines += [f"        for (long j = 0; j < {whole}; j += {width}) {{"] + ["            " + ln for ln in panels("j", nv)] + ["        }"]
    if tail:
        lines += ["        {"] + ["            " + ln for ln in panels(whole, tail)] + ["        }"]
    lines += [f"        if (k0 + kc == {k}) {finish('i0', 'i1')}", "    }", "}"]
    return helpers, lines
