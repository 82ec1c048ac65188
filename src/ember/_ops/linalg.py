"""Products and norms: ``matmul`` (PyTorch's 1-D and batched rules), ``mm``, ``bmm``,
``einsum``, ``tensordot``, ``vector_norm``: each public function, then its op entry."""
import builtins

import numpy as np

from .. import _backend, _dtype
from .._backend import namespace
from .._creation import eye
from .._tensor import Tensor
from .args import c_type_name, dims_arg, dtype_arg, product as product_of, tensor_args, with_out
from .core import Op, _type_name, apply, named, recording, transposed
from .reduce import Sum, _c_order, expand_back, reduction_rule
from .parser import parsed


@parsed
def matmul(input, other, *, out=None):
    """Matrix product with PyTorch's rules for 1-D and batched operands. RuntimeError naming
    both shapes when they do not fit, or both dtypes when they differ."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not {type(other).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{c_type_name(input.dtype)} != {c_type_name(other.dtype)}")
    if input.dtype is _dtype.bool:  # torch's product kernels have no bool (addr's outer does)
        raise NotImplementedError(f"\"{_bool_kernel(input.ndim, other.ndim)}\" not implemented for 'Bool'")
    if out is not None and out.dtype is not input.dtype and input.ndim >= 2:
        if other.ndim == 1:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_type_name(out.dtype)}, "
                               f"{_type_name(input.dtype)}, and {_type_name(other.dtype)}")
        product_out(out, input.dtype)
    a, b = input._data.shape, other._data.shape  # (plain tuples: a Size's indexing runs Python)
    if not a or not b:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and {other.ndim}D")
    k1 = a[-1]
    k2 = b[-2] if len(b) > 1 else b[0]
    if k1 != k2:
        if len(b) <= 2:  # (torch folds a stack of rows times a matrix or vector into one matrix)
            if len(a) > 2:
                a = (product_of(a[:-1]), k1)
            if input.ndim == 1 and other.ndim == 1:
                raise RuntimeError(f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] "
                                   "to have the same number of elements, but got "
                                   f"{a[0]} and {b[0]} elements respectively")
            if other.ndim == 1:
                raise RuntimeError(f"size mismatch, got input ({a[0]}), mat ({_mat_text(a)}), vec ({b[0]})")
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({_mat_text(a)} and {_mat_text(b)})")
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{', '.join(map(str, (b[0] if other.ndim > 2 else 1, k1)))}] but got: "
                           f"[{', '.join(map(str, b[:2] if other.ndim > 2 else (1, k2)))}].")
    try:
        if len(a) > 2 and len(b) > 2:  # (only batch dims on both sides can disagree)
            _backend.broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        raise RuntimeError(_backend.broadcast_error([a[:-2], b[:-2]])) from None
    if len(a) == 1 and len(b) == 2:  # PyTorch: a row, its product, the row's dimension dropped in place
        return with_out(named(apply(Matmul, input.unsqueeze(0), other).squeeze_(0), "SqueezeBackward4"), out)
    if len(a) > 2 and len(b) <= 2 and recording(input, other) and _should_fold(input, other):
        rows = a[:-1]
        product = apply(Matmul, input.reshape(product_of(rows), k1), other)
        result = product.view(rows + product.shape[1:])
        result._base = result._view_chain = None  # (torch's _unsafe_view: a new tensor, not a view)
        return with_out(named(result, "UnsafeViewBackward0"), out)
    result = apply(Matmul, input, other)
    return result if out is None else with_out(result, out)


def _bool_kernel(m, n):
    """The kernel torch names refusing bool operands of ranks ``m`` and ``n``."""
    return "dot" if m == n == 1 else "addmv_impl_cpu" if n == 1 else "bmm" if m > 2 and n > 2 else "addmm_impl_cpu_"


def _should_fold(input, other):
    """PyTorch's rule for a stack of rows times a matrix or vector: fold the stack into one
    matrix (``reshape``, ``mm``/``mv``, ``_unsafe_view``) when ``other`` wants a gradient (a
    broadcast copy of it would cost the backward more) or when the fold needs no copy."""
    if other.requires_grad or not input._data.size:
        return True
    shape, strides = input._data.shape, input._data.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _mat_text(shape):
    return "x".join(map(str, shape if len(shape) == 2 else (1,) + tuple(shape)))


class _Shape:
    """An operand whose values a gradient does not read: its ``ndim`` only."""
    __slots__ = ("ndim",)

    def __init__(self, shape):
        self.ndim = len(shape)


class Matmul(Op):
    """``a @ b`` following https://pytorch.org/docs/stable/generated/torch.matmul.html: 1-D
    operands gain and then lose a dimension, batch dimensions broadcast. Both operands must
    have the same dtype (RuntimeError otherwise, as in PyTorch)."""
    promote = None
    grad_reads = ((1,), (0,))

    @classmethod
    def infer(cls, a, b):
        rows = tuple(a.shape[-2:-1]) if a.ndim > 1 else ()
        columns = tuple(b.shape[-1:]) if b.ndim > 1 else ()
        return _backend.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])) + rows + columns, a.dtype

    @staticmethod
    def forward(a, b):
        return _backend.matmul(a, b)

    @staticmethod
    def backward(ctx, g):
        # each gradient reads only the other operand: one changed in place since is an error only
        # where its value is needed (PyTorch saves a only for b's gradient and b for a's)
        need_a, need_b = ctx.needs_input_grad
        a = ctx.input(0) if need_b else _Shape(ctx.shapes[0])
        b = ctx.input(1) if need_a else _Shape(ctx.shapes[1])
        ga = gb = None
        if a.ndim == 1 and b.ndim == 1:
            return (g * b if need_a else None), (g * a if need_b else None)
        if a.ndim == 1:
            if need_a:
                ga = (g.unsqueeze(-2) @ b.mT).squeeze(-2)
            if need_b:
                gb = a.unsqueeze(-1) * g.unsqueeze(-2)
            return ga, gb
        if b.ndim == 1:
            if need_a:
                ga = g.unsqueeze(-1) * b
            if need_b:
                gb = (a.mT @ g.unsqueeze(-1)).squeeze(-1)
            return ga, gb
        if need_a:
            ga = g @ b.mT
        if need_b:
            gb = a.mT @ g
        return ga, gb


def product_out(out, dtype):
    """torch's RuntimeError for a matrix product's ``out=`` of a dtype other than its operands'
    ``dtype`` (``mm``, ``bmm``, ``addmm``, ``matmul`` of matrices): no cast, as elementwise ops do."""
    if out is not None and out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {c_type_name(dtype)}, but got "
                           f"{c_type_name(out.dtype)} instead")


@parsed
def mm(input, mat2, *, out=None):
    """2-D matrix product; RuntimeError unless both are 2-D, or for an ``out`` of another dtype."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    product_out(out, input.dtype)
    return with_out(matmul(input, mat2), out, "mm")


@parsed
def bmm(input, mat2, *, out=None):
    """Batched product of (B, N, M) and (B, M, P) tensors."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
    expected = (input.shape[0], input.shape[2])
    if tuple(mat2.shape[:2]) != expected:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"{list(expected)} but got: {list(mat2.shape[:2])}.")
    product_out(out, input.dtype)
    return with_out(named(matmul(input, mat2), "BmmBackward0"), out, "bmm")


def mv(input, vec):
    """Matrix-vector product of a (N, M) and a (M,) tensor
    (https://pytorch.org/docs/stable/generated/torch.mv.html)."""
    return matmul(input, vec)


def integral_scalars(tensors, beta, alpha):
    """``beta`` and ``alpha`` truncated to ints when no tensor in ``tensors`` is floating, as
    PyTorch's product kernels (``addmm``, ``addmv``...) cast them to an integer dtype."""
    if any(t.dtype.is_floating_point for t in tensors):
        return beta, alpha
    return int(beta), int(alpha)


@parsed
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``; for integer tensors a float ``beta``/``alpha``
    is truncated, as PyTorch's kernel does."""
    beta, alpha = integral_scalars((input, mat1, mat2), beta, alpha)
    product_out(out, mat1.dtype)
    return with_out(_scaled_sum(input, mm, mat1, mat2, beta, alpha, "AddmmBackward0"), out)


def _scaled_sum(input, product, a, b, beta, alpha, node):
    """``beta * input + alpha * product(a, b)``, its grad_fn named ``node``; float16/bfloat16
    operands of one dtype are summed in float32 and rounded once, as torch's CPU kernels."""
    narrow = a.dtype if a.dtype in (_dtype.float16, _dtype.bfloat16) and input.dtype is a.dtype is b.dtype else None
    if narrow is not None:
        input, a, b = input.float(), a.float(), b.float()
    prod = product(a, b)
    if alpha != 1:
        prod = prod * alpha
    result = prod + (input if beta == 1 else input * beta) if beta != 0 else prod
    return named(result if narrow is None else result.to(narrow), node)


class Addmm(Op):
    """``input + mat1 @ mat2`` for matrices ``mat1`` (n, m), ``mat2`` (m, p) and an ``input``
    that broadcasts to (n, p), all of one dtype (https://pytorch.org/docs/stable/generated/torch.addmm.html):
    ``F.linear``'s product with its bias, ``addmm(bias, input, weight.t())``, as PyTorch records it.
    The gradient of ``mat2`` keeps its layout: a transposed weight gets the transpose of a
    contiguous product, so the weight's own gradient (through ``t``) is contiguous, as PyTorch's.
    Unrecorded (``core.recording``), ``F.linear`` passes a contiguous stack of rows (*, n, m) as
    ``mat1`` whole: one product instead of a view, the product and a view back."""
    promote = None

    @classmethod
    def infer(cls, input, mat1, mat2):
        return tuple(mat1.shape[:-1]) + (mat2.shape[1],), mat1.dtype

    @staticmethod
    def forward(input, mat1, mat2):
        if mat1.dtype.itemsize == 2 and mat1.dtype.kind not in "iu":  # float16, bfloat16: the product and
            wide = [t.astype(np.float32) for t in (input, mat1, mat2)]  # the sum in float32, rounded once (torch's)
            return Addmm.forward(*wide).astype(mat1.dtype)
        out = _backend.matmul(mat1, mat2)
        namespace(out).add(out, input, out=out)  # the ufunc call: cheaper than += on one row
        return out

    @staticmethod
    def backward(ctx, g):
        need_input, need_mat1, need_mat2 = ctx.needs_input_grad
        g_mat1 = g_mat2 = None
        if need_mat1:
            g_mat1 = apply(Matmul, g, transposed(ctx.input(2)))
        if need_mat2:  # reads mat1's values and only mat2's layout
            mat1 = ctx.input(1)
            mat2 = ctx.saved_layout(2)
            if mat2.strides == (mat2.itemsize, mat2.itemsize * mat2.shape[0]):  # column-major: keep it so
                g_mat2 = transposed(apply(Matmul, transposed(g), mat1))
            else:
                g_mat2 = apply(Matmul, transposed(mat1), g)
        g_input = None
        if need_input:  # a bias vector's gradient summed here: the engine's general sum_to_size costs more
            g_input = apply(Sum, g, dim=(0,)) if ctx.shapes[0] == g._data.shape[1:] else g
        return g_input, g_mat1, g_mat2


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``
    (https://pytorch.org/docs/stable/generated/torch.baddbmm.html); integer tensors truncate a
    float ``beta``/``alpha``."""
    beta, alpha = integral_scalars((input, batch1, batch2), beta, alpha)
    return _scaled_sum(input, bmm, batch1, batch2, beta, alpha, "BaddbmmBackward0")


@parsed
def dot(input, other):
    """Inner product of two 1-d tensors; RuntimeError for other dims
    (https://pytorch.org/docs/stable/generated/torch.dot.html)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return matmul(input, other)


def vdot(input, other):
    """``dot(conj(input), other)``: the inner product that conjugates its first argument
    (https://pytorch.org/docs/stable/generated/torch.vdot.html)."""
    return dot(input.conj(), other)


def inner(input, other, *, out=None):
    """Sum over the last dims of ``input`` (*a, n) and ``other`` (*b, n), giving (*a, *b); a
    0-d operand multiplies (https://pytorch.org/docs/stable/generated/torch.inner.html).
    RuntimeError when the last sizes differ, TypeError for an operand no tensor (a NumPy array)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args("inner", input, other)
    if input.ndim == 0 or other.ndim == 0:
        return with_out(input * other, out)
    if input.dtype is _dtype.bool or other.dtype is _dtype.bool:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return with_out(tensordot(input, other, ([-1], [-1])), out)


@parsed
def outer(input, vec2):
    """``input[i] * vec2[j]`` for 1-D tensors; RuntimeError otherwise."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


ger = outer


def einsum(equation, *operands):
    """Einstein summation over ``operands`` (also given as one list); implicit output when
    ``->`` is absent, ``...`` broadcasting as in NumPy."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    equation = equation.replace(" ", "")
    if "..." in equation:
        equation = _expand_ellipsis(equation, operands)
    _check_subscripts(equation, operands)
    if "->" not in equation:
        letters = equation.replace(",", "")
        equation += "->" + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    dt = operands[0].dtype
    for op in operands:
        if op.dtype is not dt:
            raise RuntimeError(f"expected scalar type {_type_name(dt)} but found {_type_name(op.dtype)}")
    return named(apply(Einsum, *operands, equation=equation), _einsum_node_name(equation))


def _check_subscripts(equation, operands):
    """torch's RuntimeErrors for operands whose dims do not fit their subscripts: too many or
    too few, a subscript repeated with different sizes, or sizes that do not broadcast (1
    broadcasts) across operands."""
    seen = {}
    for i, (term, op) in enumerate(zip(equation.split("->")[0].split(","), operands)):
        if len(term) != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) does not "
                               f"match the number of dimensions ({op.ndim}) for operand {i} and no "
                               "ellipsis was given")
        own = {}
        for letter, size in zip(term, op.shape):
            if own.setdefault(letter, size) != size:
                raise RuntimeError(f"einsum(): subscript {letter} is repeated for operand {i} but the "
                                   f"sizes don't match, {size} != {own[letter]}")
            before = seen.get(letter, 1)
            if size != before and 1 not in (size, before):
                raise RuntimeError(f"einsum(): subscript {letter} has size {size} for operand {i} which "
                                   f"does not broadcast with previously seen size {before}")
            seen[letter] = before if size == 1 else size


def _einsum_node_name(equation):
    """The grad_fn name of torch's einsum, whose last step depends on the equation: one operand
    ends in a sum (an index summed) or a permute; several, in a product (no index summed) or
    the view after a batched matmul."""
    lhs, rhs = equation.split("->")
    summed = set(lhs) - set(rhs) - {","}
    if "," not in lhs:
        return "SumBackward1" if summed else "PermuteBackward0"
    return "ViewBackward0" if summed else "MulBackward0"


def _expand_ellipsis(equation, operands):
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    used = set(equation)
    spare = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    n_ell = builtins.max((op.ndim - (len(t) - 3) for t, op in zip(terms, operands) if "..." in t), default=0)
    ell = "".join(spare[:n_ell])
    new_terms = []
    for t, op in zip(terms, operands):
        if "..." in t:
            k = op.ndim - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k:])
        new_terms.append(t)
    if arrow:
        rhs = rhs.replace("...", ell)
    else:
        letters = "".join(new_terms).replace("", "")
        rest = "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
        rhs = ell + rest
    return ",".join(new_terms) + "->" + rhs


class Einsum(Op):
    """``einsum(equation, *operands)`` in explicit form (``->`` present; the public function
    adds it). The gradient of operand i is the einsum of the gradient with the others."""
    promote = None

    @classmethod
    def infer(cls, *operands, equation):
        lhs, out = equation.split("->")
        sizes = {}
        for term, x in zip(lhs.split(","), operands):
            for letter, n in zip(term, x.shape):
                if sizes.get(letter, 1) == 1:  # size-1 dims broadcast, as NumPy's einsum does
                    sizes[letter] = n
        return tuple(sizes[letter] for letter in out), operands[0].dtype

    @staticmethod
    def forward(*operands, equation):
        dtype, xp = operands[0].dtype, namespace(*operands)
        if len(operands) == 2 and xp is np and _products_only(equation, operands):
            return _product(equation, *operands)
        if _backend.is_bfloat16(dtype):  # NumPy's einsum has no bfloat16: float32 sums rounded once, as torch's bmm
            return xp.einsum(equation, *[x.astype(np.float32) for x in operands], optimize=len(operands) > 2).astype(dtype)
        return xp.einsum(equation, *operands, optimize=len(operands) > 2)

    @staticmethod
    def backward(ctx, g):
        lhs, out = ctx.attrs["equation"].split("->")
        terms = lhs.split(",")
        operands = ctx.inputs
        grads = []
        for i, need in enumerate(ctx.needs_input_grad):
            if not need:
                grads.append(None)
                continue
            others = [t for j, t in enumerate(terms) if j != i]
            target = terms[i]
            # Letters of operand i that appear nowhere else are summed out in the forward;
            # their gradient is the broadcast of g along them, done by expanding afterwards.
            present = set(out).union(*others) if others else set(out)
            kept = "".join(c for c in dict.fromkeys(target) if c in present)
            eq = ",".join([out] + others) + "->" + kept
            gi = einsum(eq, g, *[operands[j] for j in range(len(terms)) if j != i])
            grads.append(_restore(gi, kept, target, ctx.shapes[i]))
        return tuple(grads)


def _products_only(equation, operands):
    """Whether the two-operand ``equation`` sums over size-1 letters only (an outer product,
    ``'i,j->ij'``, ``'bij,bjk->bik'`` with j of size 1): torch's einsum then multiplies (each element
    the one product, -0.0 for -1 * 0), where NumPy's adds the product to +0.0."""
    lhs, out = equation.split("->")
    return all(n == 1 for term, x in zip(lhs.split(","), operands) for c, n in zip(term, x.shape) if c not in out)


def _product(equation, a, b):
    """The elementwise product an ``equation`` of :func:`_products_only` makes: each operand
    indexed at 0 along its summed (size-1) letters, its diagonals and permutation taken (views),
    reshaped to broadcast against the output's letters."""
    lhs, out = equation.split("->")
    factors = []
    for term, x in zip(lhs.split(","), (a, b)):
        x = x[tuple(0 if c not in out else slice(None) for c in term)]
        term = "".join(c for c in term if c in out)
        letters = "".join(c for c in out if c in term)
        x = np.einsum(f"{term}->{letters}", x) if term != letters else x
        factors.append(x.reshape([x.shape[letters.index(c)] if c in letters else 1 for c in out]))
    return np.multiply(*factors, order="C")


def _restore(gi, kept, target, shape):
    """Turns a gradient indexed by the distinct letters ``kept`` into operand shape ``target``:
    missing letters are broadcast, repeated letters (diagonals) are placed on the diagonal."""
    sizes = dict(zip(target, shape))
    full = "".join(dict.fromkeys(target))
    for c in full:
        if c not in kept:
            gi = gi.unsqueeze(-1)
            kept += c
    # A size-1 dim that broadcast against a larger one in the forward sums its gradient back.
    shrink = tuple(k for k, c in enumerate(kept) if sizes[c] == 1 and gi.shape[k] != 1)
    if shrink:
        gi = gi.sum(shrink, keepdim=True)
    gi = gi.expand(tuple(sizes[c] for c in kept))
    if len(full) == len(target):
        return gi.permute(tuple(kept.index(c) for c in target)) if kept != target else gi
    # Repeated letter, e.g. "ii": multiply with identity masks so only the diagonal gets it.
    letters = kept
    masks, terms = [], [letters]
    for c in full:
        extra = [k for k, t in enumerate(target) if t == c][1:]
        for _ in extra:
            masks.append(eye(sizes[c], dtype=gi.dtype))
    # Build the output subscripts, renaming the repeats.
    spare = iter(ch for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if ch not in letters)
    out_sub, seen = "", set()
    for c in target:
        if c in seen:
            new = next(spare)
            terms.append(c + new)
            out_sub += new
        else:
            out_sub += c
            seen.add(c)
    return einsum(",".join(terms) + "->" + out_sub, gi, *masks)


def tensordot(a, b, dims=2):
    """Sum of products over ``dims`` of ``a`` and ``b`` (the last ``dims`` of ``a`` with the
    first of ``b`` for an int) (https://pytorch.org/docs/stable/generated/torch.tensordot.html).
    NotImplementedError for bool operands, as torch's product kernels."""
    if a.dtype is _dtype.bool or b.dtype is _dtype.bool:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if isinstance(dims, int):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = [list(x) if isinstance(x, (list, tuple)) else [x] for x in dims]
        da, db = [d % a.ndim for d in da], [d % b.ndim for d in db]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(da, db):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in da] + [c for j, c in enumerate(sb) if j not in db]
    return einsum("".join(sa) + "," + "".join(sb) + "->" + "".join(out), a, b)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """``(sum |x|^ord)^(1/ord)`` over ``dim``; ord may be inf, -inf or 0 (``torch.linalg.vector_norm``).
    RuntimeError for integer input without a float ``dtype``, and for ord < 0 or inf over no
    elements (those norms have no identity)."""
    if not x.dtype.is_inexact and dtype is None:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_type_name(x.dtype)}")
    x = dtype_arg(x, dtype)
    dims = dims_arg(dim, x.ndim)
    if x.numel() == 0 and (ord < 0 or ord == float("inf")):
        if dims is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty tensor "
                               "because the operation does not have an identity")
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on the dimension "
                                   f"{d}because this dimension is empty and the operation does not have an identity")
    return with_out(apply(VectorNorm, x, ord=ord, dim=dims, keepdim=keepdim), out, "linalg_vector_norm")


class VectorNorm(Op):
    """``(sum |x|^ord)^(1/ord)`` over ``dim``; ``ord`` may also be 0 (count of nonzeros) or
    +-inf (largest/smallest magnitude). Gradients follow PyTorch's ``norm_backward``: zero
    where the norm is zero, and shared evenly between tied extremes for +-inf."""
    promote = None
    save_output = True
    holomorphic = False  # a real function of complex x: the rules below hold with sgn(x)
    infer = classmethod(reduction_rule)

    @staticmethod
    def forward(x, ord, dim, keepdim):
        return _c_order(VectorNorm.norm(x, ord, dim, keepdim))  # torch's result is row-major

    @staticmethod
    def norm(x, ord, dim, keepdim):
        xp = namespace(x)
        a = xp.abs(x)
        one_each = a.size and all(a.shape[d] == 1 for d in (range(a.ndim) if dim is None else dim))
        if ord == np.inf or (one_each and ord != 0):  # one element per norm: torch's is |x| (never inf)
            return xp.maximum.reduce(a, axis=dim, keepdims=keepdim)
        if ord == -np.inf:
            return xp.minimum.reduce(a, axis=dim, keepdims=keepdim)
        if ord == 0:
            return xp.add.reduce(a != 0, axis=dim, keepdims=keepdim, dtype=a.dtype)
        if ord == 1:
            return xp.add.reduce(a, axis=dim, keepdims=keepdim)
        with np.errstate(divide="ignore", over="ignore"):
            if ord == 2:
                return xp.sqrt(xp.add.reduce(a * a, axis=dim, keepdims=keepdim))
            return xp.add.reduce(a ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        ord, dim, keepdim = ctx.attrs["ord"], ctx.attrs["dim"], ctx.attrs["keepdim"]
        norm = expand_back(ctx.output, x.shape, dim, keepdim)
        g = expand_back(g, x.shape, dim, keepdim)
        if ord == 0:
            return (g * 0,)
        if ord == 1:
            return (x.sgn() * g,)
        if ord == 2:
            return (g * (x / norm).masked_fill(norm == 0, 0),)  # (torch's order: g's layout leads)
        if ord in (np.inf, -np.inf):
            a = x.abs()
            mask = ((a == norm) | a.isnan()).to(g.dtype)
            count = expand_back(mask.sum(dim=dim, keepdim=True), x.shape, dim, True)
            return (x.sgn() * (g / count) * mask,)
        if ord < 1:
            scaled = x.sgn() * x.abs().pow(ord - 1).masked_fill(x == 0, 0)
            return (scaled * g * norm.pow(1 - ord),)
        scale = (g / norm.pow(ord - 1)).masked_fill(norm == 0, 0)
        if ord < 2:
            return (x.sgn() * x.abs().pow(ord - 1) * scale,)
        return (x * x.abs().pow(ord - 2) * scale,)


def dist(input, other, p=2):
    """``vector_norm(input - other, p)``; TypeError for an operand no tensor (a NumPy array)
    (https://pytorch.org/docs/stable/generated/torch.dist.html)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args("dist", input, other)
    return vector_norm(input - other, p)
