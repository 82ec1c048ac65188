"""Products added to a tensor (``addmv``, ``addbmm``, ``addr``), pairwise distances
(``cdist``) and norm capping (``renorm``), written in ember's matmul, norm and elementwise ops
so that their gradients come from those. The PyTorch page of each is
``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
from .. import _dtype
from .._tensor import _wrap_dim
from .args import with_out
from .core import _type_name, apply
from .linalg import bmm, integral_scalars, matmul, outer, vector_norm
from .pointwise_binary import Where


def _scaled_sum(input, product, beta, alpha):
    """``beta * input + alpha * product``; ``input`` is ignored (NaN included) when ``beta``
    is 0, as in BLAS. For integer tensors ``beta`` and ``alpha`` are truncated to integers, as
    PyTorch's kernels cast them."""
    beta, alpha = integral_scalars((input, product), beta, alpha)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else input * beta)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)`` for a (n, m) ``mat`` and an (m,) ``vec``; ``input``
    broadcasts to (n,)."""
    if input.ndim > 1 or mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    return with_out(_scaled_sum(input, matmul(mat, vec), beta, alpha), out)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` for (b, n, m) and (b, m, p)
    batches; ``input`` broadcasts to (n, p)."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"batch1 and batch2 must be 3D tensors, got {batch1.ndim}D and {batch2.ndim}D")
    product = bmm(batch1, batch2)
    return with_out(_scaled_sum(input, product.sum(0, dtype=product.dtype), beta, alpha), out)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``; ``input`` broadcasts to (n, m).
    RuntimeError for a float ``beta`` or ``alpha`` with integer tensors."""
    if not any(t.dtype.is_floating_point for t in (input, vec1, vec2)):
        for which, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, float):
                raise RuntimeError(f"For integral input tensors, argument {which} must not be a floating "
                                   f"point number.")
    if input.dtype is vec1.dtype is vec2.dtype is _dtype.bool:  # torch's logical form
        product = outer(vec1, vec2) if alpha else vec1.new_zeros((vec1.shape[0], vec2.shape[0]))
        return with_out(product | input if beta else product | False, out)
    return with_out(_scaled_sum(input, outer(vec1, vec2), beta, alpha), out)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of ``x1`` (B, P, M) and each row of ``x2``
    (B, R, M), as (B, P, R); leading batch dims broadcast. The gradient at a zero distance is
    0, as in PyTorch. RuntimeError for non-float inputs, fewer than 2 dims, different row
    lengths or a negative ``p``; NotImplementedError for float16 and bfloat16 (no torch kernel)."""
    for which, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {which} got: {x.ndim}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {which} got: "
                               f"{_type_name(x.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f"\"cdist\" not implemented for '{_type_name(x1.dtype)}'")
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(differences, p, dim=-1)


def renorm(input, p, dim, maxnorm, *, out=None):
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled to
    norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, PyTorch's factor). RuntimeError for
    ``p <= 0``, negative ``maxnorm``, fewer than 2 dims or a non-float input."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _wrap_dim(dim, input.ndim)
    norms = vector_norm(input, p, dim=[i for i in range(input.ndim) if i != d], keepdim=True)
    factor = apply(Where, norms > maxnorm, maxnorm / (norms + 1e-7), norms.new_ones(()))
    return with_out(input * factor, out)
