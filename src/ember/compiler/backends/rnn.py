"""The C kernels of the fused recurrent layer: ``RNNLayer`` and ``RNNLayerBackward`` of
:mod:`ember._ops.rnn` (tanh/ReLU RNN, LSTM without projection, GRU; any batch sizes, either
direction), each one C function instead of a Python loop over NumPy calls per time step.

Forward: one GEMM projects the input of every time step (``x @ W_ih^T``, T rows at once); then
per step one product with ``W_hh`` (``h @ W_hh^T``) and one fused loop over the step's rows that
adds the biases, applies the gates' sigmoid/tanh (ember_math.h's vector ``em_sigmoid``/``em_tanh``),
updates c and h and writes the reserve the backward reads. Backward (backpropagation through
time): per step, in reverse, one fused loop giving the gate pre-activations' gradient and one
product with ``W_hh`` for the previous hidden state's; then the input's and weights' gradients
are one GEMM each over the whole sequence, the biases' one column sum. The whole-sequence GEMMs
go to BLAS; the per-step products (a few rows) run a register-tiled loop in float32 (BLAS would
repack all of ``W_hh`` on each call, as costly as the product), BLAS in float64. The results and reserve are the
arrays of ``RNNLayer.forward``, in its layout, so a C forward pairs with a NumPy backward and back.

Equations and gate order: PyTorch's (https://pytorch.org/docs/stable/generated/torch.nn.LSTM.html,
GRU.html, RNN.html), as the module docstring of :mod:`ember._ops.rnn` writes them.
"""
import numpy as np

from ..._ops.rnn import GATES, INPUTS, RESULTS, result_shapes, step_rows
from ..symbolic import Expr
from .kernels import CTYPES
from .python import label
from .plan import Loc, Storage, contiguous_strides

__all__ = ["rnn_kernel"]

# Row-major GEMM through the column-major BLAS: C = op(A) op(B) (+ C when beta is 1), where
# op(A) is m x k; the product of the transposes in reversed order, as the GEMM kernel does.
_HELPERS = """#ifndef EM_RNN_GEMM
#define EM_RNN_GEMM
static void em_rm_gemmf(char ta, char tb, int m, int n, int k, const float* A, int lda,
                        const float* B, int ldb, float beta, float* C, int ldc) {
    em_blas_threads((long)m * n * k);
    em_sgemm_any(tb, ta, n, m, k, 1, B, ldb, A, lda, beta, C, ldc);
}
static void em_rm_gemm(char ta, char tb, int m, int n, int k, const double* A, int lda,
                       const double* B, int ldb, double beta, double* C, int ldc) {
    em_blas_threads((long)m * n * k);
    em_dgemm_any(tb, ta, n, m, k, 1, B, ldb, A, lda, beta, C, ldc);
}
/* A few rows times a matrix, for each step's product with W_hh: C[m, n] (+)= A[m, k] B[k, n]
 * (row-major, n a multiple of EM_TV vectors) in register tiles of EM_TR rows x EM_TV vectors,
 * reading B in place. BLAS packs B (all of W_hh) on every call, which costs as much as the
 * product here. The tile fills the vector registers without spilling: 4 x 4 of AVX-512's 32,
 * 6 x 2 of AVX2's 16 (its 4 x 4 tile spilled: the LSTM step's products 1.4x slower). */
#ifdef __AVX512F__
#define EM_VW 16
#define EM_TR 4
#define EM_TV 4
#else
#define EM_VW 8
#define EM_TR 6
#define EM_TV 2
#endif
typedef float em_vf __attribute__((vector_size(EM_VW * 4)));
typedef float em_vfu __attribute__((vector_size(EM_VW * 4), aligned(4)));
static void em_rows_gemmf(int m, int n, int k, const float* restrict A, int lda, const float* restrict B, int ldb,
                          float beta, float* restrict C, int ldc) {
    if (n % (EM_TV * EM_VW)) { em_rm_gemmf('N', 'N', m, n, k, A, lda, B, ldb, beta, C, ldc); return; }
    for (int j = 0; j < n; j += EM_TV * EM_VW)  /* a panel of B columns, in cache for every row block */
        for (int i = 0; i < m; i += EM_TR) {
            const int rows = m - i < EM_TR ? m - i : EM_TR;
            em_vf acc[EM_TR][EM_TV] = {{0}};
            for (int q = 0; q < k; q++) {
                const float* b = B + (long)q * ldb + j;
                em_vf bv[EM_TV];
                for (int v = 0; v < EM_TV; v++)
                    bv[v] = *(const em_vfu*)(b + v * EM_VW);
                for (int r = 0; r < EM_TR; r++) {
                    const float a = r < rows ? A[(long)(i + r) * lda + q] : 0;
                    for (int v = 0; v < EM_TV; v++)
                        acc[r][v] += a * bv[v];
                }
            }
            for (int r = 0; r < rows; r++)
                for (int v = 0; v < EM_TV; v++) {
                    em_vfu* c = (em_vfu*)(C + (long)(i + r) * ldc + j + v * EM_VW);
                    *c = acc[r][v] + (beta != 0 ? *c * beta : (em_vf){0});
                }
        }
}
#endif"""


class _Emit:
    """Pointers and C lines of one kernel; ``pointer(name, loc)`` declares ``name`` over it."""

    def __init__(self, src, dtype):
        self.src, self.dtype, self.t = src, dtype, CTYPES[dtype]
        self.sfx = "f" if dtype == np.float32 else ""
        self.lines = []

    def pointer(self, name, loc, const=False):
        q = "const " if const else ""
        self.lines.append(f"    {q}{self.t}* restrict {name} = {self.src.pointer(loc)} + {loc.offset};")

    def scratch(self, name, shape):
        """``name`` over a buffer of the kernel's own (memory planning leaves it alone)."""
        self.pointer(name, Loc(Storage("buffer", None, shape, self.dtype), shape, contiguous_strides(shape), self.dtype))

    def gemm(self, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc):
        self.lines.append(f"    em_rm_gemm{self.sfx}('{ta}', '{tb}', {m}, {n}, {k}, {a}, {lda}, {b}, {ldb}, {beta}, {c}, {ldc});")

    def step_gemm(self, m, n, k, a, lda, b, ldb, beta, c, ldc):
        """A step's product with W_hh (float32: the direct kernel, else BLAS)."""
        if self.sfx:
            self.lines.append(f"        em_rows_gemmf({m}, {n}, {k}, {a}, {lda}, {b}, {ldb}, {beta}, {c}, {ldc});")
        else:
            self.gemm("N", "N", m, n, k, a, lda, b, ldb, beta, c, ldc)

    def fill(self, name, n, source=None):
        size = f"{n} * sizeof({self.t})"
        self.lines.append(f"    memcpy({name}, {source}, {size});" if source else f"    memset({name}, 0, {size});")

    def steps(self, batch_sizes, reverse, backward, rows, batch):
        """The loop over time steps (the last first for ``backward``): ``r0`` and ``b`` are the
        step's first row and batch size. A padded sequence (``batch_sizes`` None) of symbolic
        sizes (a dynamic graph's) loops over ``rows / batch`` steps counted at run time; of
        fixed sizes it lists its steps as a packed one. A batch size the C compiler sees as a
        constant made the LSTM step 10-15% slower (its per-step products), so the run-time
        loop hides an int batch behind an empty asm statement."""
        if batch_sizes is None and (isinstance(rows, Expr) or isinstance(batch, Expr)):
            last = reverse != backward  # the loop runs from the last step to the first
            self.lines += [f"    const long n_steps = {batch} ? ({rows}) / ({batch}) : 0;",
                           "    for (long s = 0; s < n_steps; s++) {",
                           f"        long b = {batch};",
                           '        __asm__("" : "+r"(b));  /* a run-time value to the C compiler */',
                           f"        const long r0 = ({'n_steps - 1 - s' if last else 's'}) * b;"]
            return
        order = step_rows(batch_sizes, reverse, rows, batch)
        order = order[::-1] if backward else order
        starts, sizes = ", ".join(str(rows.start) for rows, _ in order), ", ".join(str(b) for _, b in order)
        self.lines += [f"    static const long start[] = {{{starts}}}, size[] = {{{sizes}}};",
                       f"    for (long s = 0; s < {len(order)}; s++) {{",
                       "        const long r0 = start[s], b = size[s];"]


def rnn_kernel(src, node, fname, results):
    """C lines of ``static void fname(void** p)`` computing ``node``; ``results``: result
    index -> the Loc it is written to (the getitem nodes picking it)."""
    make = _forward if node.target.name == "RNNLayer" else _backward
    return [_HELPERS, f"/* {node.kwargs['mode']} layer {'forward' if make is _forward else 'backward'}, "
                      f"batch sizes {_described(node.kwargs['batch_sizes'])}: {label(node)} */",
            f"static void {fname}(void** restrict p) {{"] + make(src, node, results) + ["}"]


def _described(batch_sizes):
    return "padded" if batch_sizes is None else list(batch_sizes)


def _sizes(loc_of, x, hx, w_hh, mode):
    (rows, n_in), (batch, n_out), g = loc_of(x).shape, loc_of(hx).shape, loc_of(w_hh).shape[0]
    return rows, n_in, batch, n_out, g, g // GATES[mode]


def _forward(src, node, results):
    plan, k = src.plan, node.kwargs
    mode = k["mode"]
    x, hx, cx, w_ih, w_hh, b_ih, b_hh, _ = node.args
    T, n_in, N, n_out, G, H = _sizes(plan.loc.get, x, hx, w_hh, mode)
    e = _Emit(src, plan.loc[x].dtype)
    t, sfx = e.t, e.sfx
    for name, a in (("x", x), ("hx", hx), ("cx", cx), ("w_ih", w_ih), ("w_hh", w_hh), ("b_ih", b_ih), ("b_hh", b_hh)):
        if a is not None:
            e.pointer(name, plan.loc[a], const=True)
    for name, shape in result_shapes(mode, T, N, H, n_out).items():
        index = RESULTS.index(name)
        if index in results:
            e.pointer(name, results[index])
        else:
            e.scratch(name, shape)
    e.scratch("pre", (T, G))
    e.scratch("gh", (N, G))
    # W_hh^T once, so that each step's product reads it untransposed: OpenBLAS multiplies a few
    # rows by a transposed matrix at about half the speed (measured, 16x128 @ 128x512 sgemm)
    e.scratch("w_hh_t", (n_out, G))
    e.lines += [f"    for (long i0 = 0; i0 < {G}; i0 += 16)  /* in blocks of 16 rows: each write a contiguous run */",
                f"        for (long j = 0; j < {n_out}; j++)",
                f"            for (long i = i0; i < (i0 + 16 < {G} ? i0 + 16 : {G}); i++) w_hh_t[j*{G} + i] = w_hh[i*{n_out} + j];"]
    e.lines += [f"    {t} bias_x[{G}], bias_h[{G}];",
                f"    for (long j = 0; j < {G}; j++) {{ bias_x[j] = {'b_ih[j]' if b_ih is not None else 0}; "
                f"bias_h[j] = {'b_hh[j]' if b_hh is not None else 0}; }}"]
    e.gemm("N", "T", T, G, n_in, "x", n_in, "w_ih", n_in, 0, "pre", G)
    e.fill("h_n", N * n_out, "hx")
    if mode == "LSTM":
        e.fill("c_n", N * H, "cx")
    e.steps(k["batch_sizes"], k.get("reverse", False), False, T, N)
    e.lines += [f"        memcpy(h_prev + r0*{n_out}, h_n, b * {n_out} * sizeof({t}));"]
    e.step_gemm("b", G, n_out, f"h_prev + r0*{n_out}", n_out, "w_hh_t", G, 0, "gh", G)
    e.lines += ["        for (long r = 0; r < b; r++) {",
                f"            const {t}* restrict a = pre + (r0 + r)*{G};",
                f"            const {t}* restrict q = gh + r*{G};",
                f"            {t}* restrict h = h_n + r*{H};",
                f"            {t}* restrict y = output + (r0 + r)*{H};"]
    sig, tanh = f"em_sigmoid{sfx}", f"em_tanh{sfx}"

    def pre(gate):  # the pre-activation of gate ``gate`` (its block of H columns)
        j = f"{gate * H} + j" if gate else "j"
        return f"(a[{j}] + bias_x[{j}] + q[{j}] + bias_h[{j}])"
    if mode == "LSTM":
        cell = [f"{t}* restrict gt = gates + (r0 + r)*{G};",
                f"{t}* restrict cn = c_n + r*{H};",
                f"{t}* restrict cp = c_prev + (r0 + r)*{H};",
                f"{t}* restrict cr = c + (r0 + r)*{H};",
                "#pragma GCC ivdep",
                f"for (long j = 0; j < {H}; j++) {{",
                f"    const {t} i = {sig}{pre(0)}, f = {sig}{pre(1)}, g = {tanh}{pre(2)}, o = {sig}{pre(3)};",
                f"    gt[j] = i; gt[{H} + j] = f; gt[{2 * H} + j] = g; gt[{3 * H} + j] = o;",
                f"    const {t} old = cn[j], cv = f * old + i * g;",
                "    cp[j] = old; cr[j] = cv; cn[j] = cv;",
                f"    const {t} hv = o * {tanh}(cv);",
                "    y[j] = hv; h[j] = hv;", "}"]
    elif mode == "GRU":
        cell = [f"{t}* restrict gt = gates + (r0 + r)*{G};",
                f"{t}* restrict hh = hh_new + (r0 + r)*{H};",
                f"const {t}* restrict hp = h_prev + (r0 + r)*{H};",
                "#pragma GCC ivdep",
                f"for (long j = 0; j < {H}; j++) {{",
                f"    const {t} rg = {sig}{pre(0)}, zg = {sig}{pre(1)}, hn = q[{2 * H} + j] + bias_h[{2 * H} + j];",
                f"    const {t} nv = {tanh}(a[{2 * H} + j] + bias_x[{2 * H} + j] + rg * hn);",
                f"    gt[j] = rg; gt[{H} + j] = zg; gt[{2 * H} + j] = nv; hh[j] = hn;",
                f"    const {t} hv = nv + zg * (hp[j] - nv);",
                "    y[j] = hv; h[j] = hv;", "}"]
    else:
        act = f"{tanh}(v)" if mode == "RNN_TANH" else "(v < 0 ? 0 : v)"  # relu keeps NaN, as np.maximum
        cell = ["#pragma GCC ivdep",
                f"for (long j = 0; j < {H}; j++) {{",
                f"    const {t} v = {pre(0)};",
                f"    const {t} hv = {act};",
                "    y[j] = hv; h[j] = hv;", "}"]
    e.lines += ["            " + ln for ln in cell] + ["        }", "    }"]
    return e.lines


def _backward(src, node, results):
    plan, k = src.plan, node.kwargs
    mode, needs = k["mode"], set(k["needs"])
    g_out, g_h_n, g_c_n = node.args[:3]
    x, hx, cx, w_ih, w_hh, b_ih, b_hh, _ = node.args[3:3 + len(INPUTS)]
    reserve = dict(zip(RESULTS, node.args[3 + len(INPUTS):]))
    T, n_in, N, n_out, G, H = _sizes(plan.loc.get, x, hx, w_hh, mode)
    e = _Emit(src, plan.loc[x].dtype)
    t, sfx = e.t, e.sfx
    const = [("g_out", g_out), ("g_h_n", g_h_n), ("g_c_n", g_c_n), ("x", x), ("w_ih", w_ih), ("w_hh", w_hh)]
    const += [(name, reserve[name]) for name in ("output", "gates", "c", "c_prev", "hh_new", "h_prev")]
    for name, a in const:
        if a is not None:
            e.pointer(name, plan.loc[a], const=True)
    wanted = {name: results[i] for i, name in enumerate(INPUTS) if i in results and name in needs}
    # the running gradients of h (and c), from the final states' (or zero): written straight
    # into the gradients of hx (cx) when those are wanted
    states = [("dh", "hx", "g_h_n", g_h_n, (N, n_out))] + ([("dc", "cx", "g_c_n", g_c_n, (N, H))] if mode == "LSTM" else [])
    for name, state, given_name, given, shape in states:
        if state in wanted:
            e.pointer(name, wanted[state])
        else:
            e.scratch(name, shape)
        e.fill(name, shape[0] * shape[1], given_name if given is not None else None)
    e.scratch("dg", (T, G))
    dhh = "dhh" if mode == "GRU" else "dg"  # the h side of the gates' gradient (the reset gate scales the candidate's)
    if mode == "GRU":
        e.scratch("dhh", (T, G))
    e.steps(k["batch_sizes"], k.get("reverse", False), True, T, N)
    e.lines += ["        for (long r = 0; r < b; r++) {",
                f"            {t}* restrict d = dh + r*{n_out};",
                f"            {t}* restrict dgr = dg + (r0 + r)*{G};"]
    dv = "d[j] + go[j]" if g_out is not None else "d[j]"
    tanh = f"em_tanh{sfx}"
    cell = [f"const {t}* restrict go = g_out + (r0 + r)*{plan.loc[g_out].strides[0]};"] if g_out is not None else []
    if mode == "LSTM":
        cell += [f"const {t}* restrict gt = gates + (r0 + r)*{G};",
                 f"const {t}* restrict cr = c + (r0 + r)*{H};",
                 f"const {t}* restrict cp = c_prev + (r0 + r)*{H};",
                 f"{t}* restrict dcr = dc + r*{H};",
                 "#pragma GCC ivdep",
                 f"for (long j = 0; j < {H}; j++) {{",
                 f"    const {t} dv = {dv}, i = gt[j], f = gt[{H} + j], g = gt[{2 * H} + j], o = gt[{3 * H} + j];",
                 f"    const {t} tc = {tanh}(cr[j]), dcv = dcr[j] + dv * o * (1 - tc * tc);",
                 f"    dgr[j] = dcv * g * (i * (1 - i)); dgr[{H} + j] = dcv * cp[j] * (f * (1 - f));",
                 f"    dgr[{2 * H} + j] = dcv * i * (1 - g * g); dgr[{3 * H} + j] = dv * tc * (o * (1 - o));",
                 "    dcr[j] = dcv * f;", "}"]
    elif mode == "GRU":
        cell += [f"const {t}* restrict gt = gates + (r0 + r)*{G};",
                 f"const {t}* restrict hp = h_prev + (r0 + r)*{H};",
                 f"const {t}* restrict hn = hh_new + (r0 + r)*{H};",
                 f"{t}* restrict dhr = dhh + (r0 + r)*{G};",
                 "#pragma GCC ivdep",
                 f"for (long j = 0; j < {H}; j++) {{",
                 f"    const {t} dv = {dv}, rg = gt[j], zg = gt[{H} + j], nv = gt[{2 * H} + j];",
                 f"    const {t} dn = dv * (1 - zg) * (1 - nv * nv), dr = dn * hn[j] * (rg * (1 - rg)), "
                 f"dz = dv * (hp[j] - nv) * (zg * (1 - zg));",
                 f"    dgr[j] = dr; dgr[{H} + j] = dz; dgr[{2 * H} + j] = dn;",
                 f"    dhr[j] = dr; dhr[{H} + j] = dz; dhr[{2 * H} + j] = dn * rg;",
                 "    d[j] = dv * zg;", "}"]
    else:
        local = "(1 - y[j] * y[j])" if mode == "RNN_TANH" else "(y[j] > 0)"
        cell += [f"const {t}* restrict y = output + (r0 + r)*{H};",
                 "#pragma GCC ivdep",
                 f"for (long j = 0; j < {H}; j++) dgr[j] = ({dv}) * {local};"]
    e.lines += ["            " + ln for ln in cell] + ["        }"]
    # the gradient reaching the previous hidden state (for a GRU, plus d * z written above)
    e.step_gemm("b", n_out, G, f"{dhh} + r0*{G}", G, "w_hh", n_out, int(mode == "GRU"), "dh", n_out)
    e.lines.append("    }")
    if "input" in wanted:
        e.pointer("gx", wanted["input"])
        e.gemm("N", "N", T, n_in, G, "dg", G, "w_ih", n_in, 0, "gx", n_in)
    if "weight_ih" in wanted:
        e.pointer("gw_ih", wanted["weight_ih"])
        e.gemm("T", "N", G, n_in, T, "dg", G, "x", n_in, 0, "gw_ih", n_in)
    if "weight_hh" in wanted:
        e.pointer("gw_hh", wanted["weight_hh"])
        e.gemm("T", "N", G, n_out, T, dhh, G, "h_prev", n_out, 0, "gw_hh", n_out)
    for name, source in (("bias_ih", "dg"), ("bias_hh", dhh)):
        if name in wanted:
            e.pointer("g" + name, wanted[name])
            e.fill("g" + name, G)
            e.lines += [f"    for (long r = 0; r < {T}; r++)", "        #pragma GCC ivdep",
                        f"        for (long j = 0; j < {G}; j++) g{name}[j] += {source}[r*{G} + j];"]
    return e.lines
