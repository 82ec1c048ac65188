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
"""
import functools

from .toolchain import cpu_identity

__all__ = ["direct_lines", "fits", "TRANSPOSE"]

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
/* dst[q*ldd + j] = src[j*lds + q] for j < rows, q < cols */
static void em_transpose_f(const float* restrict src, long lds, long rows, long cols, float* restrict dst, long ldd) {
    long r8 = rows & ~7L, c8 = cols & ~7L;
#if defined(__clang__) || __GNUC__ >= 12
    typedef float v8 __attribute__((vector_size(32), aligned(4)));
    for (long j = 0; j < r8; j += 8)
        for (long q = 0; q < c8; q += 8) {
            v8 r[8], s[8], t[8];
            for (int i = 0; i < 8; i++) r[i] = *(const v8*)(src + (j + i)*lds + q);
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
        for (long j = q < c8 ? r8 : 0; j < rows; j++) dst[q*ldd + j] = src[j*lds + q];
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
    # register budget: 16 sums in 32 registers (AVX-512), 8 in 16 (AVX2), B's row and A's element
    # besides; 8 rows x 2 vectors ran the MLP's products 15% faster than 4 x 4 (fewer B loads per sum)
    vectors = min(2, padded // lanes)
    rows = min(m, (16 if vb == 64 else 8) // vectors)
    lines = [f"typedef {t} em_v __attribute__((vector_size({vb}), aligned({itemsize})));"]
    if sb[1] == 1 and n % lanes == 0:  # B's rows read in place
        ldb, base = sb[0], "B"
    else:
        ldb, base = padded, "Bp"
        lines.append(f"{t} Bp[{max(1, k * padded)}] __attribute__((aligned(64)));")
        if sb[0] == 1 and t == "float":  # transposed
            lines.append(f"em_transpose_f(B, {sb[1]}, {n}, {k}, Bp, {padded});")
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
