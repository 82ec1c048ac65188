"""Matrix products: ``matmul`` (with PyTorch's 1-D and batched rules) and ``einsum``."""
import numpy as np

from .. import _backend
from .core import Op


class Matmul(Op):
    """``a @ b`` following https://pytorch.org/docs/stable/generated/torch.matmul.html: 1-D
    operands gain and then lose a dimension, batch dimensions broadcast. Both operands must
    have the same dtype (RuntimeError otherwise, as in PyTorch)."""
    promote = None

    @staticmethod
    def forward(a, b):
        return _backend.matmul(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        need_a, need_b = ctx.needs_input_grad
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


class Einsum(Op):
    """``einsum(equation, *operands)`` in explicit form (``->`` present; the public function
    adds it). The gradient of operand i is the einsum of the gradient with the others."""
    promote = None

    @staticmethod
    def forward(*operands, equation):
        return np.einsum(equation, *operands, optimize=len(operands) > 2)

    @staticmethod
    def backward(ctx, g):
        from .._functional import einsum
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


def _restore(gi, kept, target, shape):
    """Turns a gradient indexed by the distinct letters ``kept`` into operand shape ``target``:
    missing letters are broadcast, repeated letters (diagonals) are placed on the diagonal."""
    from .._functional import einsum
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
    from .._creation import eye
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
