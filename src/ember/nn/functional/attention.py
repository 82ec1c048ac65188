"""Attention as functions: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (https://pytorch.org/docs/stable/nn.functional.html#attention-mechanisms).

Both end in the fused :class:`~ember._ops.attention.AttentionWeights` op (scores, scale,
mask and softmax in one pass) and a product with the values. Masks follow each function's
PyTorch convention: for SDPA a bool mask is True where a key *takes part*; for multi-head
attention a bool mask is True where a key is *ignored*. Float masks are added to the scores
in both.
"""
import math
import warnings

from ... import _dtype
from ...backends import cuda as _kernels
from ..._ops.attention import AttentionWeights
from ..._ops.join import cat
from ..._ops.linalg import Matmul
from ..._ops.core import apply, named
from ..._tensor import Tensor
from .dropout import dropout
from .linear import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

# PyTorch's C++ names for dtypes in its SDPA messages.
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool"}


def _attention(query, key, value, mask, dropout_p, is_causal, scale, masked_rows="zero"):
    """(output, weights) of ``dropout(AttentionWeights(query, key, mask)) @ value``; inputs
    already checked, ``mask`` None, bool (True = take part) or of the query's dtype."""
    weights = apply(AttentionWeights, query, key, mask, scale=scale, is_causal=is_causal,
                    masked_rows=masked_rows)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return apply(Matmul, weights, value), weights


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value``, with dropout on the weights
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html).

    Shapes: query (N, ..., Hq, L, E), key (N, ..., H, S, E), value (N, ..., H, S, Ev); any
    number of leading dimensions (at least two dimensions in all), broadcasting like
    ``matmul``; output (N, ..., Hq, L, Ev). ``attn_mask`` is bool (True = the key takes part),
    or floating (added to the scores) of the query's dtype or float32, broadcastable to
    (N, ..., Hq, L, S). ``is_causal`` lets query i see keys 0..i (top-left aligned when
    L != S). ``scale`` defaults to ``1/sqrt(E)``. ``enable_gqa`` lets H divide Hq: each key
    and value head serves ``Hq/H`` consecutive query heads (grouped-query attention). A query
    whose keys are all masked gets zeros and no gradient, as in PyTorch. Dropout applies
    whenever ``dropout_p > 0``: pass ``dropout_p=0.0`` in evaluation.

    Raises TypeError for non-tensor inputs; RuntimeError for fewer than two dimensions,
    integer inputs, differing dtypes, a mask of another dtype, a mask that does not
    broadcast to the scores (naming the sizes), both ``attn_mask`` and ``is_causal``
    on inputs of other than 4 dimensions or with a mask that requires grad (otherwise both
    apply, as in torch 2.13's CPU kernel), mismatched E or S, heads that GQA cannot group, or
    ``dropout_p`` outside [0, 1], or when ``backends.cuda``'s math and flash switches (or
    ``nn.attention.sdpa_kernel``) allow neither CPU kernel. Masks of fewer than two dimensions broadcast like any
    other, except on 4-D inputs without dropout and with a mask that needs no gradient, where
    torch 2.13's CPU kernel reads the mask's dim -2 and raises IndexError (so does ember).
    """
    for name, x in (("query", query), ("key", key), ("value", value)):
        if not isinstance(x, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be Tensor, "
                            f"not {type(x).__name__}")
    if not (_kernels.math_sdp_enabled() or _kernels.flash_sdp_enabled()):  # the CPU's two kernels
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    # Shapes read from the arrays: a Size per look would cost more than the checks (a
    # decoder calls this once per layer per token).
    query_shape, key_shape, value_shape = query._data.shape, key._data.shape, value._data.shape
    if len(query_shape) < 2 or len(key_shape) < 2 or len(value_shape) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got "
                           f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} "
                           f"instead.")
    if not query.dtype is key.dtype is value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_C_NAMES[query.dtype.name]} key.dtype: {_C_NAMES[key.dtype.name]} and "
                           f"value.dtype: {_C_NAMES[value.dtype.name]} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {_SCALAR_NAMES[query.dtype.name]}")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if is_causal and attn_mask is not None and (query.ndim != 4 or attn_mask.requires_grad):
        # torch 2.13's 4-D CPU kernel applies both masks; its other paths (other ranks, a mask
        # that needs a gradient) refuse the pair.
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                           "is_causal=True")
    if (attn_mask is not None and attn_mask.ndim < 2 and len(query_shape) == 4 and dropout_p == 0
            and not attn_mask.requires_grad):
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if attn_mask.ndim == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if key_shape[-1] != query_shape[-1]:
        raise RuntimeError(f"Expected key's embedding size to match query's: query {list(query.shape)}, "
                           f"key {list(key.shape)}")
    if value_shape[-2] != key_shape[-2]:
        raise RuntimeError(f"Expected value's sequence length to match key's: key {list(key.shape)}, "
                           f"value {list(value.shape)}")
    if enable_gqa:
        key, value = _group_heads(query, key), _group_heads(query, value)
    mask = None if attn_mask is None else _sdpa_mask(attn_mask, query, key)
    if scale is None:
        scale = 1.0 / math.sqrt(query_shape[-1])
    out = _attention(query, key, value, mask, dropout_p, is_causal, scale)[0]
    # torch's CPU picks its flash kernel for 4-d inputs without dropout, and shows its node
    return named(out, "ScaledDotProductFlashAttentionForCpuBackward0") if query.ndim == 4 and not dropout_p else out


def _group_heads(query, x):
    """``x`` with each of its heads (dim -3) repeated for the query heads it serves."""
    if query.ndim < 3 or x.ndim < 3 or query.shape[-3] % x.shape[-3]:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
    groups = query.shape[-3] // x.shape[-3]
    return x if groups == 1 else x.repeat_interleave(groups, -3)


def _sdpa_mask(mask, query, key):
    """The mask checked against the scores' shape and cast to the query's dtype if float."""
    if mask.dtype is not _dtype.bool and mask.dtype is not _dtype.float32 and mask.dtype is not query.dtype:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_C_NAMES[mask.dtype.name]} and  query.dtype: "
                           f"{_C_NAMES[query.dtype.name]} instead.")
    scores = _broadcast(query.shape[:-2], key.shape[:-2]) + (query.shape[-2], key.shape[-2])
    together = _broadcast(scores, tuple(mask.shape))
    if together != scores:
        raise RuntimeError(f"output with shape {list(scores)} doesn't match the broadcast shape "
                           f"{list(together)}")
    if mask.dtype is not _dtype.bool and mask.dtype is not query.dtype:
        mask = mask.to(query.dtype)
    return mask


def _broadcast(a, b):
    """The broadcast of shapes ``a`` (tensor a) and ``b`` (tensor b), or PyTorch's RuntimeError."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for d in reversed(range(n)):  # PyTorch names the last mismatching dimension
        x, y = a[d], b[d]
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {d}")
    return tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b))


# ---- multi-head attention ---------------------------------------------------------------------
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True, key_padding_mask=None,
                                 need_weights=True, attn_mask=None, use_separate_proj_weight=False,
                                 q_proj_weight=None, k_proj_weight=None, v_proj_weight=None,
                                 static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention (Vaswani et al., 2017, https://arxiv.org/abs/1706.03762) on
    sequence-first inputs, as ``torch.nn.functional.multi_head_attention_forward``.

    Shapes (E = embed_dim, H = num_heads, N batch, L target and S source lengths):
    query (L, N, E) or unbatched (L, E); key (S, N, Ek), value (S, N, Ev) or unbatched;
    key_padding_mask (N, S) or (S), True (or a float added) where a key is padding;
    attn_mask (L, S) or (N*H, L, S), True where attention is not allowed, or float (added);
    static_k/static_v (N*H, S, E/H). Returns (output (L, N, E), weights) where weights are
    (N, L, S) averaged over heads, (N, H, L, S) per head, unbatched without N, or None when
    ``need_weights`` is False.

    Raises AssertionError for inconsistent ranks or sizes, masks that are neither bool nor
    floating, a key/value mismatch, or separate projection weights that do not fit the inputs;
    RuntimeError for wrongly shaped masks (naming the sizes), a key batch size other than the
    query's, and for ``is_causal`` without ``attn_mask``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.multi_head_attention_forward.html
    """
    return _multi_head_attention(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
        add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
        need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight,
        v_proj_weight, static_k, static_v, average_attn_weights, is_causal, batch_first=False)


def _multi_head_attention(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                          in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                          out_proj_bias, training, key_padding_mask, need_weights, attn_mask,
                          use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
                          static_k, static_v, average_attn_weights, is_causal, batch_first):
    """``multi_head_attention_forward`` for either layout: with ``batch_first`` the batched
    inputs are (N, L, E), and the heads are cut from that layout directly rather than after a
    transpose, which saves two copies per call."""
    batched = _check_ranks(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
        batch_first = False
    seq, batch = (1, 0) if batch_first else (0, 1)
    tgt_len, bsz, embed_dim = query.shape[seq], query.shape[batch], query.shape[2]
    src_len = key.shape[seq]
    _check_mask_type(key_padding_mask, "key_padding_mask")
    key_padding_mask = _taking_part(key_padding_mask)
    if key_padding_mask is not None and attn_mask is not None \
            and key_padding_mask.dtype is not attn_mask.dtype:
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use same "
                      "type for both instead.", stacklevel=3)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint says the mask is causal: let the kernel build it
    else:
        _check_mask_type(attn_mask, "attn_mask")
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        _check_projections(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias)
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if key.shape[batch] != bsz:
        raise RuntimeError(f"key and value batch size {key.shape[batch]} does not match query batch size "
                           f"{bsz} (query {list(query.shape)}, key {list(key.shape)})")

    def heads(x):
        """(L, N, H*D) or (N, L, H*D) -> (N, H, L, D)."""
        x = x.reshape(x.shape[0], x.shape[1], num_heads, head_dim)
        return x.permute(0, 2, 1, 3) if batch_first else x.permute(1, 2, 0, 3)

    if not use_separate_proj_weight and query is key and key is value:
        # Self-attention: one product for q, k and v, cut into heads in one reshape.
        packed = linear(query, in_proj_weight, in_proj_bias)
        packed = packed.reshape(packed.shape[0], packed.shape[1], 3, num_heads, head_dim)
        q, k, v = packed.permute(2, 0, 3, 1, 4) if batch_first else packed.permute(2, 1, 3, 0, 4)
    else:
        if use_separate_proj_weight:
            weights = (q_proj_weight, k_proj_weight, v_proj_weight)
        else:
            weights = in_proj_weight.chunk(3)
        biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = (heads(linear(x, w, b)) for x, w, b in zip((query, key, value), weights, biases))

    mask = _mha_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _append_key(k, bias_k.reshape(1, num_heads, 1, head_dim).expand(bsz, -1, -1, -1))
        v = _append_key(v, bias_v.reshape(1, num_heads, 1, head_dim).expand(bsz, -1, -1, -1))
        mask, key_padding_mask = _pad_key(mask), _pad_key(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    k = _static(static_k, "static_k", k, bsz, num_heads, head_dim)
    v = _static(static_v, "static_v", v, bsz, num_heads, head_dim)
    if add_zero_attn:
        zeros = k.new_zeros((bsz, num_heads, 1, head_dim))
        k, v = _append_key(k, zeros), _append_key(v, zeros)
        mask, key_padding_mask = _pad_key(mask), _pad_key(key_padding_mask)
    src_len = k.shape[2]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        mask = _merge(mask, key_padding_mask.reshape(bsz, 1, 1, src_len), query.dtype)
    if not training:
        dropout_p = 0.0
    out, weights = _attention(q, k, v, mask, dropout_p, is_causal and mask is None, 1.0 / math.sqrt(head_dim),
                              masked_rows="nan" if need_weights else "zero")
    out = out.permute(2, 0, 1, 3)
    out = linear(out.reshape(out.shape[0], out.shape[1], embed_dim), out_proj_weight, out_proj_bias)
    if batch_first:  # torch's output is this transposed view of (L, N, E): ``view`` refuses it
        out = out.transpose(0, 1)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = weights.mean(1)
    return out, (weights if batched else weights.squeeze(0))


def _check_ranks(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched; AssertionError naming the ranks when they disagree."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                                 f"but found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                 f"but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or "
                                 f"1-D but found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                                     f"3-D but found {attn_mask.ndim}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
                         f"query tensor")


def _check_projections(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias):
    """AssertionError, naming the shapes, unless the separate projection weights are
    (E, E), (E, Ek), (E, Ev) for the inputs' last sizes and the packed bias is (3 E)."""
    embed_dim = query.shape[-1]
    for name, weight, x in (("query", q_proj_weight, query), ("key", k_proj_weight, key),
                            ("value", v_proj_weight, value)):
        if tuple(weight.shape) != (embed_dim, x.shape[-1]):
            raise AssertionError(f"expecting {name} weights shape of {(embed_dim, x.shape[-1])}, but got "
                                 f"{weight.shape}")
    if in_proj_bias is not None and tuple(in_proj_bias.shape) != (3 * embed_dim,):
        raise AssertionError(f"expecting in_proj_bias shape of {(3 * embed_dim,)}, but got {in_proj_bias.shape}")


def _check_mask_type(mask, name):
    if mask is not None and mask.dtype is not _dtype.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported, got {mask.dtype}")


def _taking_part(mask):
    """A multi-head-attention mask (bool True = ignored, or float) in the attention op's terms
    (bool True = takes part, or float)."""
    return ~mask if mask is not None and mask.dtype is _dtype.bool else mask


def _mha_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    """``attn_mask`` (L, S) or (N*H, L, S) checked and shaped to broadcast against
    (N, H, L, S), in the attention op's terms."""
    if attn_mask is None:
        return None
    if attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
    elif attn_mask.ndim == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        attn_mask = attn_mask.reshape(bsz, num_heads, tgt_len, src_len)
    else:
        raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    return _taking_part(attn_mask)


def _append_key(x, extra):
    """(N, H, S, D) with (N, H, 1, D) appended as one more key."""
    return cat([x, extra], 2)


def _pad_key(mask):
    """A mask (..., S) extended by one key that takes part (the appended bias or zero key)."""
    if mask is None:
        return None
    fill = mask.new_ones(tuple(mask.shape[:-1]) + (1,)) if mask.dtype is _dtype.bool \
        else mask.new_zeros(tuple(mask.shape[:-1]) + (1,))
    return cat([mask, fill], -1)


def _static(static, name, x, bsz, num_heads, head_dim):
    """``static_k``/``static_v`` (N*H, S, D) in place of the projected keys/values."""
    if static is None:
        return x
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static.reshape(bsz, num_heads, static.shape[1], head_dim)


def _merge(mask, key_padding_mask, dtype):
    """Both masks at once, in the attention op's terms: bool masks combine with ``and``,
    float masks add, and a bool mask meeting a float one becomes 0/-inf first."""
    if mask is None:
        return key_padding_mask
    if mask.dtype is _dtype.bool and key_padding_mask.dtype is _dtype.bool:
        return mask & key_padding_mask
    return _additive(mask, dtype) + _additive(key_padding_mask, dtype)


def _additive(mask, dtype):
    if mask.dtype is not _dtype.bool:
        return mask
    return mask.new_zeros(mask.shape, dtype=dtype).masked_fill(~mask, float("-inf"))
