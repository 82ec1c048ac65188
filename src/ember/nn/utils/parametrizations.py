"""Ready-made parametrizations (``torch.nn.utils.parametrizations``): spectral normalisation,
orthogonal matrices and weight normalisation, each registered with
:func:`~ember.nn.utils.parametrize.register_parametrization` (state_dict keys
``parametrizations.<name>.original`` plus the parametrization's own buffers).

- :func:`spectral_norm`: ``W / sigma(W)``, sigma estimated by power iteration on the weight
  reshaped to a matrix (Miyato et al., "Spectral Normalization for GANs", 2018).
- :func:`orthogonal`: W kept orthogonal (orthonormal columns, or rows when wide) as the image
  of an unconstrained matrix under the matrix exponential or Cayley map of its skew part, or a
  product of Householder reflectors (Lezcano-Casado & Martinez-Rubio 2019, "Cheap
  orthogonal constraints in neural networks"; with ``use_trivialization`` the map is taken
  around a stored ``base``, so training starts from the module's own weight, orthogonalised).
- :func:`weight_norm`: ``g * v / ||v||`` (Salimans & Kingma 2016).
"""
import numpy as np

from ... import linalg
from ..._creation import eye, zeros
from ..._sampling import randn
from ..._ops.join import cat
from ..._ops.pointwise_binary import where
from ..._linalg_legacy import geqrf
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["spectral_norm", "orthogonal", "weight_norm"]


class _SpectralNorm(Module):
    """``weight / sigma`` with sigma = ``u . (W v)``, u and v (buffers ``_u``, ``_v``) refined
    by ``n_power_iterations`` power-iteration steps per training forward (15 at creation)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + weight.ndim
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        if weight.ndim > 1:
            matrix = self._matrix(weight)
            h, w = matrix.shape
            u = F.normalize(randn(h, dtype=weight.dtype), dim=0, eps=eps)
            v = F.normalize(randn(w, dtype=weight.dtype), dim=0, eps=eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(matrix, 15)

    def _matrix(self, weight):
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.flatten(1)

    def _power_method(self, matrix, steps):
        with no_grad():
            for _ in range(steps):
                self._u.copy_(F.normalize(matrix @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(matrix.mT @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / (u * (matrix @ v)).sum()

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Registers spectral normalisation on ``module.<name>``; returns the module. ``dim``: the
    output dimension (default 1 for ConvTranspose, 0 otherwise)."""
    weight = getattr(module, name, None)
    if weight is None:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


_MAPS = ("matrix_exp", "cayley", "householder")


def _orthonormal(a):
    """Q of A's QR with R's diagonal made positive (the unique such Q for full-rank A)."""
    q, r = linalg.qr(a)
    return q * r.diagonal(0, -2, -1).sign().unsqueeze(-2)


class _Orthogonal(Module):
    """Maps X (*, n, k) to a matrix with orthonormal columns (rows when n < k)."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2:]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = cat([X, zeros(X.shape[:-2] + (n, n - k), dtype=X.dtype)], -1)
            A = X - X.mT  # skew-symmetric, so both maps give an orthogonal matrix
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:
                identity = eye(n, dtype=X.dtype)
                Q = linalg.solve(identity - 0.5 * A, identity + 0.5 * A)
            Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            # X's diagonal (+-1, set by right_inverse) picks each reflector's sign; it gets no
            # gradient (detached: ember's integer cast still records one)
            signs = X.diagonal(0, -2, -1).detach().int().unsqueeze(-2)
            Q = linalg.householder_product(A, tau) * signs
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(f"Expected a matrix or batch of matrices of shape {tuple(self.shape)}. "
                             f"Got a tensor of shape {tuple(Q.shape)}.")
        with no_grad():
            given = Q
            n, k = Q.shape[-2:]
            if n < k:
                Q, n, k = Q.mT, k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError("It is not possible to assign to the matrix "
                                              "exponential or the Cayley parametrizations when "
                                              "use_trivialization=False.")
                A, tau = geqrf(Q)
                # the diagonal holds each reflector's sign: R's, flipped where LAPACK used none
                signs = A.sign() * (1 - 2 * (tau == 0).to(A.dtype)).unsqueeze(-2)
                A = where(eye(n, k, dtype=A.dtype).bool(), signs, A)
                return A.mT if given.shape[-2] < given.shape[-1] else A
            if n == k:
                gram = Q.mT @ Q
                exact = bool((gram - eye(k, dtype=Q.dtype)).abs().max() <= 10 * n * _eps(Q))
                Q = Q.clone() if exact else _orthonormal(Q)
            else:
                Q = _orthonormal(cat([Q, randn(Q.shape[:-2] + (n, n - k), dtype=Q.dtype)], -1))
            self.base = Q
            # -I: with an all-zero lower part, householder_product gives I, times the -1 signs
            return -eye(*given.shape[-2:], dtype=given.dtype).expand(given.shape).clone()


def _eps(t):
    return float(np.finfo(t._data.dtype).eps)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keeps ``module.<name>`` (*, n, k) orthogonal; returns the module. ``orthogonal_map``:
    "matrix_exp" (default for square), "cayley" or "householder" (default otherwise). The
    weight starts as the orthogonalised original weight."""
    weight = getattr(module, name, None)
    if weight is None:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} "
                         "dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrization = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    register_parametrization(module, name, parametrization, unsafe=True)
    return module


class _WeightNorm(Module):
    """``g * v / ||v||``, the norm over every dim but ``dim`` (all dims when ``dim`` is None)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def _norm(self, v):
        if self.dim == -1:
            return v.norm()
        dims = [d for d in range(v.ndim) if d != self.dim % v.ndim]
        return v.norm(2, dims, keepdim=True)

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / self._norm(weight_v))

    def right_inverse(self, weight):
        return self._norm(weight), weight


def weight_norm(module, name="weight", dim=0):
    """Registers weight normalisation on ``module.<name>`` (``original0`` = g, ``original1`` =
    v); returns the module."""
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
