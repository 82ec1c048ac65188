"""The C of a GEMM kernel (``Matmul``, ``Addmm``): its candidates around one ``finish``
function that adds the bias and runs the fused epilogue on each block of rows, the candidate
picked per call by ``choice`` (:mod:`.autotune` times or models them). A weight gradient's
product also writes the row sums of its A operand, the bias gradient (:func:`.plan.fold_bias_sums`).
"""
import numpy as np

from .autotune import direct_candidate, packed_candidate
from .direct_gemm import direct_lines, packed_lines
from .kernels import CTYPES
from .python import label
from .plan import _blas_layout, _numel, gemm_operands
from ..symbolic import Expr, at_least_1

__all__ = ["gemm_kernel"]


def gemm_kernel(src, kernel, fname, epilogue, gemm_choice):
    """``choice`` 0: BLAS on the whole product, then bias and epilogue; 1: BLAS per block of
    ``block`` rows, each finished while in cache; 2: the register-tiled direct kernel for small
    products; 3: the packed one for large float32 ones on AVX-512 (both direct_gemm.py). Each is
    generated only where it may be picked; where ``gemm_choice(shape, kernel)`` names one, alone."""
    plan, node = src.plan, kernel.nodes[0]
    (a, sa), (b, sb), bias = gemm_operands(node, plan.loc)
    out = plan.loc[node]
    t = CTYPES[out.dtype]
    m, k, n = _numel(a.shape[:-1]), a.shape[-1], out.shape[-1]
    ta, lda = _blas_layout(sa, m, k)
    tb, ldb = _blas_layout(sb, k, n)
    gemm = "em_sgemm" if out.dtype == np.float32 else "em_dgemm"
    finish, after = [], ""
    add_bias = f"for (long j = 0; j < {n}; j++) C[i*{n} + j] += bias[j*{bias.strides[0]}];" if bias is not None else ""
    ename, per_block, outer = epilogue or (None, False, 0)
    if per_block and bias is not None:  # each row's bias, then its epilogue while the row is in L1
        finish.append(f"    for (long i = r0; i < r1; i++) {{ {add_bias} {ename}(p, i, i + 1); }}")
    else:
        if bias is not None:
            finish.append(f"    for (long i = r0; i < r1; i++) {add_bias}")
        if per_block:
            finish.append(f"    {ename}(p, r0, r1);")
        elif ename is not None:  # the loop cannot be cut into row blocks: it runs once, after the product
            after = f"    {ename}(p, 0, {outer});"
    fused = [label(x) for x in (kernel.epilogue.nodes if kernel.epilogue else [])]
    lines = [f"/* GEMM [{m}x{k}] @ [{k}x{n}]: {node.target.name}({node.name})"
             + "".join(f", A's row sums {label(x)}" for x in kernel.sums)
             + (f" with epilogue {', '.join(fused)}" if fused else "") + " */",
             f"static inline void {fname}_finish(void** restrict p, {t}* restrict C, long r0, long r1) {{"]
    if bias is not None:
        lines.append(f"    const {t}* restrict bias = {src.pointer(bias)} + {bias.offset};")
    lines += finish + ["}",
                       f"void {fname}(void** restrict p, int choice, long block) {{",
                       f"    const {t}* A = {src.pointer(a)} + {a.offset};",
                       f"    const {t}* B = {src.pointer(b)} + {b.offset};",
                       f"    {t}* C = {src.pointer(out)};"]
    finish_rows = lambda r0, r1: f"{fname}_finish(p, C, {r0}, {r1});"
    shape = (m, n, k, out.dtype.itemsize)
    only = gemm_choice(shape, kernel)
    sums = "S" if kernel.sums else None  # A's row sums (plan.fold_bias_sums): A is [m, k], strides (1, m)
    if sums:
        lines.append(f"    {t}* restrict S = {src.pointer(plan.loc[kernel.sums[0]])};")
    at = len(lines)
    for choice, made in ((2, only in (None, 2) and not isinstance(m * n * k, Expr) and direct_candidate(shape)
                          and direct_lines(t, out.dtype.itemsize, m, n, k, sa, sb, finish_rows)),
                         (3, only in (None, 3) and packed_candidate(shape) and sa is not None
                          and packed_lines(fname, m, n, k, sa, sb, finish_rows, sums))):
        if made:
            lines[:0] = made[0]
            at += len(made[0])
            lines += [f"    if (choice == {choice}) {{"] + ["        " + ln for ln in made[1]] + ["    } else"]
    if sums:  # the other candidates: a loop adding A's columns in order of k, before the product
        packed = "    if (choice == 3) {" in lines
        lines[at:at] = ["    if (choice != 3) {" if packed else "    {",
                        f"        for (long i = 0; i < {m}; i++) S[i] = 0;",
                        f"        for (long q = 0; q < {k}; q++) for (long i = 0; i < {m}; i++) S[i] += A[q*{m} + i];",
                        "    }"]
    if only is not None and lines[-1] == "    } else":  # the chosen kernel made: no BLAS to compile
        return lines[:-1] + ["    }", after, "}"], shape
    lines += ["    {"]
    lines += [f"        em_blas_threads((long)({m * n * k}));",
              f"        long mb = choice == 1 ? block : {m};",
              f"        for (long r = 0; r < {m}; r += mb) {{",
              f"            long nn = {m} - r < mb ? {m} - r : mb;",
              f"            {gemm}_any('{tb}', '{ta}', {n}, nn, {k}, 1, B, {at_least_1(ldb)}, A + r*{sa[0]}, {at_least_1(lda)}, 0, C + r*{n}, {at_least_1(n)});",
              f"            {fname}_finish(p, C, r, r + nn);",
              "        }",
              "    }", after, "}"]
    return lines, shape
