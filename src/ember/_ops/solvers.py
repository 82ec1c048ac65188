"""Linear solves and matrix functions: inverse, determinant, solve, triangular solve,
least squares, pseudo-inverse and the matrix exponential (LAPACK through NumPy/SciPy).

Each entry's ``backward`` is the published adjoint of its forward, in ember ops (Giles, "An
extended collection of matrix derivative results for forward and reverse mode automatic
differentiation", 2008; Golub & Pereyra 1973 for the pseudo-inverse; Al-Mohy & Higham 2009
for the Fréchet derivative of the exponential as a block exponential). ``infer`` is the
shape/dtype rule: tensors (anything with ``shape`` and ``dtype``) in, ``(shape, dtype)`` of
the result out, without running the kernel.
"""
import numpy as np
import scipy.linalg
import scipy.linalg.blas

from .. import _backend
from .._tensor import Tensor
from .._backend import namespace
from .core import Op, apply
from .join import Cat
from .lapack import LinAlgError, batch_prefix, eigh_kernel, batched, in_place, matrices, routine, svd_kernel

__all__ = ["Inverse", "Det", "LogAbsDet", "Cofactor", "CofactorAdjoint", "Solve", "SolveTriangular", "Pinv", "Lstsq",
           "MatrixExp"]


def constant(array):
    """A Tensor holding ``array`` (no history): identities, zeros and permutations in backwards."""
    return Tensor._make(array)


def _eye(n, like):
    return constant(namespace(like._data).eye(n, dtype=like._data.dtype))


def inverse_kernel(a, name="linalg.inv"):
    """``a``'s inverse (LAPACK getrf + getri); LinAlgError naming the batch element and the
    zero pivot if singular."""
    if a.size == 0:
        return a.copy()
    if batched(a, largest=16):
        try:
            return namespace(a).linalg.inv(a)
        except np.linalg.LinAlgError:
            pass  # the loop below names the failing matrix and pivot
    getrf, getri = routine("getrf", a.dtype), routine("getri", a.dtype)
    lwork = int(np.real(routine("getri_lwork", a.dtype)(a.shape[-1])[0]))  # optimal, for blocked code
    # LAPACK inverts each matrix of a C-order copy in place through its Fortran-order view
    # m.T = A^T, whose inverse A^{-T} leaves A^{-1} in the copy, in C order: no transposing
    # copies in or out (float32, 1 thread, loaded A/B: 1024 x 1024 40 -> 26 ms, 256 x 256
    # 0.95 -> 0.86 ms).
    out = a.copy()  # (NumPy arrays only: ``batched`` took every other library's)
    for i, m in enumerate(matrices(out)):
        lu, piv, info = getrf(m.T, overwrite_a=1)
        if info > 0:  # torch's pivot is that of A's own LU (A^T's may differ)
            info = getrf(matrices(a)[i])[2]
            raise LinAlgError(f"{name}: {batch_prefix(i, a.shape[:-2])}The diagonal element "
                              f"{info} is zero, the inversion could not be completed because "
                              "the input matrix is singular.")
        in_place(getri(lu, piv, lwork=lwork, overwrite_lu=1)[0], m.T)
    return out


class Inverse(Op):
    """``A^{-1}``; its adjoint is ``-A^{-T} g A^{-T}``."""
    promote = None
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(a):
        return inverse_kernel(a)

    @staticmethod
    def backward(ctx, g):
        inv_t = ctx.output.mT
        return (-(inv_t @ g @ inv_t),)

    @staticmethod
    def infer(a):
        return tuple(a.shape), a.dtype


# ---- determinants ------------------------------------------------------------------------------
class Det(Op):
    """``det(A)`` by LU. Adjoint ``g C`` with ``C`` the cofactor matrix (:class:`Cofactor`)."""
    promote = None

    @staticmethod
    def forward(a):
        return namespace(a).linalg.det(a)

    @staticmethod
    def backward(ctx, g):
        return (g[..., None, None] * apply(Cofactor, ctx.input(0)),)

    @staticmethod
    def infer(a):
        return tuple(a.shape)[:-2], a.dtype


class Cofactor(Op):
    """The cofactor matrix ``C = det(A) A^{-T}`` (det's derivative) of each matrix of ``a``:
    ``det(A^T) (A^T)^{-1}`` from one LU of ``A^T`` (getrf, getri; a stack of small matrices:
    NumPy's batched det and inv, which factor each matrix the same way), so the determinant and
    the inverse share their rounding (near-singular A: the tiny last pivot cancels, as in torch's
    LU-based gradient); from the SVD ``A = U S V^H`` where a pivot is exactly zero,
    ``C = det(U) det(V^H) conj(U diag(prod_{j != i} s_j) V^H)``, not zero at rank n - 1. The
    choice is made per matrix in the kernel, so a compiled backward captures it. Adjoint:
    :class:`CofactorAdjoint` (no division by det(A): exact at singular and nearly singular A)."""
    promote = None
    save_output = True

    @staticmethod
    def forward(a):
        xp = namespace(a)
        if a.size == 0:  # 0 x 0 matrices (the empty product's derivative) or an empty batch
            return a.copy()
        if batched(a, largest=16):  # NumPy's det and inv factor each matrix alike (getrf of A)
            try:
                return (xp.linalg.det(a)[..., None, None] * xp.swapaxes(xp.linalg.inv(a), -1, -2)).astype(a.dtype)
            except np.linalg.LinAlgError:
                pass  # a singular matrix: each by the loop below
        # As inverse_kernel: each matrix of a C-order copy is A^T in Fortran order, made C in
        # place; the copy then holds C^T.
        out = a.copy()
        for m, x in zip(matrices(a), matrices(out)):
            _cofactor_in_place(x.T, m)
        return xp.swapaxes(out, -1, -2)

    @staticmethod
    def backward(ctx, g):
        return (apply(CofactorAdjoint, ctx.input(0), g),)

    @staticmethod
    def infer(a):
        return tuple(a.shape), a.dtype


class CofactorAdjoint(Op):
    """The adjoint of :class:`Cofactor` at ``a`` applied to ``g`` (det's second derivative),
    from the SVD ``A = U S V^H``: the cofactor map is multiplicative, ``C(A) = C(U) C(S) C(V^H)``
    with ``C(U) = det(U) conj(U)`` for a unitary U, so with ``G' = det(U) det(V^H) U^H G V``
    and ``p_ik = prod_{m != i, k} s_m`` the adjoint (transposed: autograd conjugates the
    gradients of holomorphic ops) is ``conj(U) H V^T``, ``H_kk = sum_{i != k} p_ik G'_ii``,
    ``H_ki = -p_ik G'_ik`` (i != k): products of singular values, no division
    by det(A) (``(<G, C> C - C G^T C) / det`` is 0/0 at a singular A and loses every digit
    near one). Its own derivative (det's third) is the closed form's at an invertible real A
    (inf or nan at a singular one)."""
    promote = None

    @staticmethod
    def forward(a, g):
        xp = namespace(a)
        n = a.shape[-1]
        g = xp.broadcast_to(g, a.shape).astype(a.dtype)
        if a.size == 0:
            return xp.zeros(a.shape, a.dtype)
        u, s, vh = xp.linalg.svd(a)
        phase = (xp.linalg.det(u) * xp.linalg.det(vh))[..., None, None]
        gp = phase * (xp.conj(xp.swapaxes(u, -1, -2)) @ g @ xp.conj(xp.swapaxes(vh, -1, -2)))
        # p[..., i, k] = prod of s without s_i and s_k: for i < k the product of s before i,
        # between i and k and after k (exclusive scans; no division: zeros stay exact)
        idx = xp.arange(n)
        one = xp.ones_like(s[..., :1])
        before = xp.cumprod(xp.concatenate([one, s[..., :-1]], -1), -1)
        after = xp.cumprod(xp.concatenate([one, s[..., :0:-1]], -1), -1)[..., ::-1]
        upper = idx[None, :] > idx[:, None]
        between = xp.where(upper, s[..., None, :], 1)  # row i: s_m for m > i
        between = xp.cumprod(xp.concatenate([xp.ones_like(between[..., :1]), between[..., :-1]], -1), -1)
        p = before[..., :, None] * between * after[..., None, :]
        p = xp.where(upper, p, xp.swapaxes(p, -1, -2))
        p[..., idx, idx] = 0
        h = -p * xp.swapaxes(gp, -1, -2)
        h[..., idx, idx] = (p @ gp[..., idx, idx][..., None])[..., 0]
        return (xp.conj(u) @ h @ xp.conj(vh)).astype(a.dtype)

    @staticmethod
    def backward(ctx, k):
        a, g = ctx.input(0), ctx.input(1)
        if a.dtype.is_complex:
            raise RuntimeError("the derivative for 'linalg_det' of order 3 or higher is not implemented in "
                               "ember for complex matrices")
        # <K, H(A, G)> with H = d (<G, B> B - B G^T B), d = det A, B = A^{-T} (invertible A),
        # differentiated by hand: dB = -B dA^T B, dd = d <B, dA>. In G it is H(A, K) itself.
        b = apply(Inverse, a).mT
        d = apply(Det, a)[..., None, None]
        g = g.expand(a.shape)

        def inner(x, y):
            return (x * y).sum((-2, -1), keepdim=True)
        bg, bk = b @ g.mT @ b, b @ k.mT @ b  # B G^T B, B K^T B
        p = inner(g, b) * inner(k, b) - inner(k, bg)
        grad_a = d * (p * b - inner(k, b) * bg - inner(g, b) * bk + bg @ k.mT @ b + bk @ g.mT @ b)
        return grad_a, apply(CofactorAdjoint, a, k)

    @staticmethod
    def infer(a, g):
        return tuple(a.shape), a.dtype


def _cofactor_in_place(x, m):
    """Overwrites ``x`` (``m^T`` in Fortran order) with ``m``'s cofactor matrix
    ``det(m^T) (m^T)^{-1}``."""
    n = m.shape[-1]
    if n == 0:
        return
    lu, pivots, info = routine("getrf", m.dtype)(x, overwrite_a=1)
    if info > 0:
        x[...] = _cofactor_by_svd(m)
        return
    in_place(lu, x)
    det = np.prod(np.diagonal(x)) * (-1) ** int((pivots != np.arange(n)).sum())
    lwork = int(np.real(routine("getri_lwork", m.dtype)(n)[0]))
    in_place(routine("getri", m.dtype)(x, pivots, lwork=lwork, overwrite_lu=1)[0], x)
    x *= det


def _cofactor_by_svd(m):
    xp = namespace(m)
    u, s, vh = svd_kernel(m)
    others = xp.where(xp.eye(s.shape[-1], dtype=bool), 1, s[None, :]).prod(-1)  # prod_{j != i} s_j
    return xp.linalg.det(u) * xp.linalg.det(vh) * xp.conj((u * others) @ vh)


class LogAbsDet(Op):
    """``log|det(A)|`` (slogdet's second result); adjoint ``g A^{-T}``."""
    promote = None
    holomorphic = False

    @staticmethod
    def forward(a):
        return namespace(a).linalg.slogdet(a)[1]

    @staticmethod
    def backward(ctx, g):
        return (g[..., None, None] * apply(Inverse, ctx.input(0)).mH,)

    @staticmethod
    def infer(a):
        return tuple(a.shape)[:-2], a.dtype


class Solve(Op):
    """``X = A^{-1} B`` for a batch of matrices B (the public function turns vectors into
    columns and broadcasts the batch dims). Adjoints: ``gB = A^{-T} g``, ``gA = -gB X^T``."""
    promote = None
    save_output = True

    @staticmethod
    def forward(a, b):
        xp = namespace(a)
        if a.ndim == b.ndim == 2 and b.size and not batched(a):  # one system: no broadcasting to set up
            return _gesv(a, b, 0, ())
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = matrices(xp.broadcast_to(a, batch + a.shape[-2:]))
        b = matrices(xp.broadcast_to(b, batch + b.shape[-2:]))
        out = xp.empty(b.shape, a.dtype)
        if out.size == 0:
            return out.reshape(batch + b.shape[-2:])
        if batched(a):
            try:
                return xp.linalg.solve(a, b).reshape(batch + b.shape[-2:])
            except np.linalg.LinAlgError:
                pass  # the loop below names the failing matrix
        for i in range(len(a)):
            out[i] = _gesv(a[i], b[i], i, batch)
        return out.reshape(batch + b.shape[-2:])

    @staticmethod
    def backward(ctx, g):
        gb = apply(Solve, ctx.input(0).mT, g)
        ga = -(gb @ ctx.output.mT) if ctx.needs_input_grad[0] else None
        return ga, gb

    @staticmethod
    def infer(a, b):
        batch = np.broadcast_shapes(tuple(a.shape)[:-2], tuple(b.shape)[:-2])
        return batch + (tuple(a.shape)[-1], tuple(b.shape)[-1]), a.dtype


def _gesv(a, b, index, batch):
    """The solution of one system (LAPACK getrf + getrs, as gesv); LinAlgError naming batch
    element ``index`` of ``batch`` if ``a`` is singular. LAPACK factors a C-order copy of
    ``a`` through its Fortran-order view A^T and solves with the transpose of that, instead
    of copying ``a`` into Fortran order (float32, 1 thread, loaded A/B: 1024 x 1024 with 4
    right-hand sides 16 -> 8.4 ms, 256 x 256 0.34 -> 0.28 ms)."""
    lu, piv, info = routine("getrf", a.dtype)(np.array(a, order="C").T, overwrite_a=1)
    if info > 0:
        raise LinAlgError(f"torch.linalg.solve: {batch_prefix(index, batch)}The solver failed "
                          "because the input matrix is singular.")
    return routine("getrs", a.dtype)(lu, piv, b, trans=1)[0]


class SolveTriangular(Op):
    """``X = A^{-1} B`` with A triangular (``upper``; ``unitriangular`` assumes a unit
    diagonal, never read). Adjoints: ``gB = A^{-T} g`` (the other triangle), ``gA = -gB X^T``
    restricted to A's triangle. A zero on the diagonal gives inf/nan, as LAPACK's trtrs."""
    promote = None
    save_output = True

    @staticmethod
    def forward(a, b, upper, unitriangular=False):
        xp = namespace(a)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = xp.broadcast_to(a, batch + a.shape[-2:])
        b = xp.broadcast_to(b, batch + b.shape[-2:])
        if a.size == 0 or b.size == 0:
            return xp.zeros(batch + (a.shape[-1], b.shape[-1]), a.dtype)
        try:
            return _backend.linalg(a).solve_triangular(a, b, lower=not upper, unit_diagonal=unitriangular,
                                                        check_finite=False)
        except np.linalg.LinAlgError:  # a zero on the diagonal: BLAS trsm gives inf/nan, as PyTorch
            trsm = scipy.linalg.blas.get_blas_funcs("trsm", dtype=a.dtype)
            flat_a = a.reshape((-1,) + a.shape[-2:])
            flat_b = b.reshape((-1,) + b.shape[-2:])
            with np.errstate(divide="ignore", invalid="ignore"):
                out = [trsm(1.0, m, r, lower=not upper, diag=int(unitriangular))
                       for m, r in zip(flat_a, flat_b)]
            return np.array(out, a.dtype).reshape(b.shape)

    @staticmethod
    def backward(ctx, g):
        a = ctx.input(0)
        upper, unit = ctx.attrs["upper"], ctx.attrs.get("unitriangular", False)
        gb = apply(SolveTriangular, a.mT, g, upper=not upper, unitriangular=unit)
        ga = None
        if ctx.needs_input_grad[0]:
            ga = -(gb @ ctx.output.mT)
            offset = 1 if unit else 0
            ga = ga.triu(offset) if upper else ga.tril(-offset)
        return ga, gb

    @staticmethod
    def infer(a, b, upper, unitriangular=False):
        return Solve.infer(a, b)


def pinv_adjoint(g, pinv, a):
    """Adjoint of ``A -> A^+`` at constant rank (Golub & Pereyra 1973):
    ``-P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A)`` with ``P = A^+``."""
    pt, gt = pinv.mH, g.mH
    m, n = a.shape[-2], a.shape[-1]
    return (-(pt @ g @ pt) + (_eye(m, a) - a @ pinv) @ gt @ (pinv @ pt)
            + (pt @ pinv) @ gt @ (_eye(n, a) - pinv @ a))


class Pinv(Op):
    """Moore-Penrose pseudo-inverse by SVD (``hermitian``: by eigh), dropping singular values
    at or below ``max(atol, rtol * largest)``; adjoint :func:`pinv_adjoint`."""
    promote = None
    save_output = True
    holomorphic = False  # A^+ involves A^H: the adjoint is stated with conjugate transposes

    @staticmethod
    def forward(a, atol, rtol, hermitian=False):
        xp = namespace(a)
        out_shape = a.shape[:-2] + (a.shape[-1], a.shape[-2])
        if a.size == 0:
            return xp.zeros(out_shape, a.dtype)
        if hermitian:
            w, v = eigh_kernel(a, "L")
            s, left, right = xp.abs(w), v * xp.sign(w)[..., None, :], v
        else:
            left, s, right_h = svd_kernel(a)
            right = xp.swapaxes(right_h, -1, -2).conj()
        atol = xp.asarray(atol, s.dtype)[..., None]
        rtol = xp.asarray(rtol, s.dtype)[..., None]
        cutoff = xp.maximum(atol, rtol * s.max(-1, keepdims=True, initial=0))
        keep = s > cutoff
        inv_s = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(a.dtype)
        return (right * inv_s[..., None, :]) @ xp.swapaxes(left, -1, -2).conj()

    @staticmethod
    def backward(ctx, g):
        return (pinv_adjoint(g, ctx.output, ctx.input(0)),)

    @staticmethod
    def infer(a, atol, rtol, hermitian=False):
        return tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2]), a.dtype


class Lstsq(Op):
    """Least-squares solution ``argmin_X ||A X - B||_F`` with LAPACK ``driver`` (gelsy, gelsd,
    gelss; gels is gelsy's QR path at full rank). ``rcond`` as LAPACK's (None: eps * max(m, n)).
    Adjoints through ``X = A^+ B``: ``gA = pinv_adjoint(g B^H)``, ``gB = A^{+H} g``."""
    promote = None
    holomorphic = False

    @staticmethod
    def forward(a, b, rcond, driver):
        xp = namespace(a)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        out = xp.zeros(batch + (a.shape[-1], b.shape[-1]), a.dtype)
        if out.size == 0 or a.shape[-2] == 0:
            return out
        a = xp.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
        b = xp.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
        if rcond is None:
            rcond = np.finfo(a.dtype).eps * max(a.shape[-2:])
        flat = out.reshape((-1,) + out.shape[-2:])
        for i in range(len(a)):
            flat[i] = _backend.linalg(a).lstsq(a[i], b[i], cond=rcond, check_finite=False,
                                               lapack_driver="gelsy" if driver == "gels" else driver)[0]
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        pinv = apply(Pinv, a, atol=0.0, rtol=0.0)
        ga = pinv_adjoint(g @ b.mH, pinv, a) if ctx.needs_input_grad[0] else None
        gb = pinv.mH @ g if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def infer(a, b, rcond, driver):
        batch = np.broadcast_shapes(tuple(a.shape)[:-2], tuple(b.shape)[:-2])
        return batch + (tuple(a.shape)[-1], tuple(b.shape)[-1]), a.dtype


class MatrixExp(Op):
    """``exp(A)`` by scaling and squaring (SciPy's expm). Adjoint: the top-right block of
    ``exp([[A^T, g], [0, A^T]])`` (the Fréchet derivative at A^T applied to g)."""
    promote = None

    @staticmethod
    def forward(a):
        xp = namespace(a)
        if a.size == 0:
            return xp.zeros_like(a)
        return _backend.linalg(a).expm(a)

    @staticmethod
    def backward(ctx, g):
        at = ctx.input(0).mT
        n = at.shape[-1]
        zero = at.new_zeros(at.shape)
        block = apply(Cat, apply(Cat, at, g, dim=-1), apply(Cat, zero, at, dim=-1), dim=-2)
        return (apply(MatrixExp, block)[..., :n, n:],)

    @staticmethod
    def infer(a):
        return tuple(a.shape), a.dtype
