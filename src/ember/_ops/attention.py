"""Attention weights: ``softmax(scale * query @ key^T + mask)`` as one primitive.

Scaled dot-product attention is this op followed by a product with the values
(``F.scaled_dot_product_attention``). Fusing the scores, the scale, the mask and the softmax
saves three dispatches and two score-sized temporaries per call, in both directions, and it
is where PyTorch's rule for rows in which every key is masked lives: SDPA returns zeros
there (and passes no gradient), while a plain softmax, as ``MultiheadAttention`` uses when it
returns its weights, gives NaN.
"""
import numpy as np

from .. import _backend
from .core import Op, apply, elementwise_rule
from .linalg import Matmul


class AttentionWeights(Op):
    """``softmax(scale * query @ key^T + mask, dim=-1)``.

    Inputs: ``query`` (..., L, E), ``key`` (..., S, E) of one floating dtype, batch
    dimensions broadcasting; ``mask`` None, bool (True = the key takes part) or of the query's
    dtype (added to the scores), broadcastable to the scores (..., L, S) without growing them.
    Attributes: ``scale``; ``is_causal`` masks key j for query i when j > i (PyTorch's
    top-left alignment when L != S); ``masked_rows`` is ``"zero"`` (a row with every key
    masked gives zeros, SDPA's rule) or ``"nan"`` (it gives NaN, a plain softmax's).
    The function checks shapes and dtypes; the output is the attention weights (..., L, S).
    """
    promote = None
    save_output = True

    @classmethod
    def infer(cls, query, key, mask=None, **attrs):
        batch = _backend.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2]))
        return batch + (query.shape[-2], key.shape[-2]), query.dtype

    @staticmethod
    def forward(query, key, mask=None, scale=1.0, is_causal=False, masked_rows="zero"):
        # course:begin 12/attention-weights
        # hint: scores = scale * query @ key^T; a bool mask keeps keys where True (-inf elsewhere), a float
        # hint: mask is added; is_causal hides key j from query i when j > i; softmax over the keys; rows with
        # hint: every key masked give zeros when masked_rows == 'zero' (SDPA's rule), NaN otherwise
        scores = _backend.matmul(query, key.swapaxes(-1, -2))
        xp = _backend.namespace(scores)
        # Ufunc calls with out= rather than in-place operators: half the cost on a decoder's
        # one-query rows, same arithmetic.
        xp.multiply(scores, scores.dtype.type(scale), out=scores)
        if mask is not None:
            if mask.dtype == np.bool_:
                xp.copyto(scores, scores.dtype.type(-np.inf), where=~mask)
            else:
                scores += mask
        if is_causal:
            above = ~xp.tri(scores.shape[-2], scores.shape[-1], dtype=bool)
            xp.copyto(scores, scores.dtype.type(-np.inf), where=above)
        if scores.shape[-1] == 0:
            return scores
        # The ufuncs' reduce: the same sums as the methods, without their Python wrappers.
        top = xp.maximum.reduce(scores, axis=-1, keepdims=True)
        if masked_rows == "zero":
            # A row with every key masked has top -inf; raised to the lowest finite value, it
            # still gives exp(-inf - top) = 0 there, and changes no other row (one ufunc call
            # instead of a comparison and a masked store).
            xp.maximum(top, np.finfo(top.dtype).min, out=top)
        with np.errstate(invalid="ignore"):
            xp.subtract(scores, top, out=scores)
        xp.exp(scores, out=scores)
        total = xp.add.reduce(scores, axis=-1, keepdims=True)
        if masked_rows == "zero":
            # Only an all-masked row sums to 0 (elsewhere the top key adds exp(0) = 1): its
            # zeros divided by the smallest normal number stay zeros, as SDPA gives.
            xp.maximum(total, np.finfo(total.dtype).tiny, out=total)
        xp.divide(scores, total, out=scores)
        return scores
        # course:end 12/attention-weights

    @staticmethod
    def backward(ctx, g):
        weights = ctx.output
        query, key, mask = ctx.input(0), ctx.input(1), ctx.input(2)
        needs = ctx.needs_input_grad
        scale = ctx.attrs.get("scale", 1.0)
        mask_grad = mask is not None and needs[2]
        # The mask's gradient is the scores' gradient itself; otherwise the scale is folded in
        # once here instead of into both the query's and the key's gradients.
        scores_grad = apply(SoftmaxScoresGrad, g, weights, scale=1.0 if mask_grad else scale)
        if mask_grad and scale != 1.0:
            grad_query = apply(Matmul, scores_grad, key) * scale if needs[0] else None
            grad_key = apply(Matmul, scores_grad.mT, query) * scale if needs[1] else None
        else:
            grad_query = apply(Matmul, scores_grad, key) if needs[0] else None
            grad_key = apply(Matmul, scores_grad.mT, query) if needs[1] else None
        return grad_query, grad_key, (scores_grad if mask_grad else None)


class SoftmaxScoresGrad(Op):
    """``scale * w * (g - sum(g * w, -1))``: the gradient of the scores behind softmax
    weights ``w`` (..., L, S), given the weights' gradient ``g``, times ``scale``.

    It is linear in ``g`` and self-adjoint there, so its derivative w.r.t. ``g`` is the op
    again; w.r.t. ``w`` it is ``scale * (h * (g - sum(g * w)) - g * sum(h * w))``.
    """
    promote = None
    pointwise = False  # softmax's backward: row-major, as torch's
    infer = classmethod(elementwise_rule)

    @staticmethod
    def forward(g, weights, scale=1.0):
        out = g * weights
        row = out.sum(axis=-1, keepdims=True)
        _backend.namespace(out).subtract(g, row, out=out)
        out *= weights
        if scale != 1.0:
            out *= out.dtype.type(scale)
        return out

    @staticmethod
    def backward(ctx, h):
        g, weights = ctx.input(0), ctx.input(1)
        needs = ctx.needs_input_grad
        scale = ctx.attrs.get("scale", 1.0)
        grad_g = apply(SoftmaxScoresGrad, h, weights, scale=scale) if needs[0] else None
        grad_weights = None
        if needs[1]:
            grad_weights = (h * (g - (g * weights).sum(-1, keepdim=True))
                            - g * (h * weights).sum(-1, keepdim=True)) * scale
        return grad_g, grad_weights
