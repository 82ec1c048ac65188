"""Multi-head attention (https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html)."""
from ..._creation import empty
from .. import init
from ..functional.attention import _multi_head_attention
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of :class:`MultiheadAttention`: a plain Linear, under PyTorch's
    class name so that ``repr`` reads the same."""


class MultiheadAttention(Module):
    """``MultiHead(Q, K, V) = concat(head_1, ..., head_h) W_O`` with
    ``head_i = softmax(Q W_Q^i (K W_K^i)^T / sqrt(E/h)) V W_V^i`` (Vaswani et al., 2017,
    https://arxiv.org/abs/1706.03762).

    Args:
        embed_dim: E, the model size; num_heads: h, which must divide E.
        dropout: dropout probability on the attention weights (training only).
        bias: add biases to the input and output projections.
        add_bias_kv: learn one more key and value (``bias_k``, ``bias_v``) appended to every
            sequence.
        add_zero_attn: append a key and value of zeros to every sequence.
        kdim, vdim: sizes of the key and value features (default E). When either differs
            from E the input projection is three weights (``q_proj_weight``,
            ``k_proj_weight``, ``v_proj_weight``) instead of the packed ``in_proj_weight``.
        batch_first: inputs and output are (N, L, E) instead of (L, N, E).

    Shape: query (L, N, E) (or (N, L, E) with ``batch_first``, or unbatched (L, E)); key
    (S, N, kdim); value (S, N, vdim); key_padding_mask (N, S) or (S), True or a float added
    where a key is padding; attn_mask (L, S) or (N*h, L, S), True where attention is not
    allowed, or a float added. Output: attn_output like the query; attn_weights (N, L, S)
    averaged over heads, (N, h, L, S) with ``average_attn_weights=False``, without N when
    unbatched, or None when ``need_weights=False``. ``is_causal`` is a hint that
    ``attn_mask`` is the causal mask, which it must still be given.

    Attributes: ``in_proj_weight`` (3E, E) (xavier uniform) or the three separate weights,
    ``in_proj_bias`` (3E) and ``out_proj.bias`` (zeros), ``out_proj`` Linear(E, E),
    ``bias_k``/``bias_v`` (1, 1, E) (xavier normal).

    Raises ValueError for non-positive sizes, AssertionError when num_heads does not divide
    embed_dim ("embed_dim must be divisible by num_heads"); the forward raises as
    :func:`ember.nn.functional.multi_head_attention_forward`.

    Example::

        >>> import ember
        >>> attn = ember.nn.MultiheadAttention(16, 4, batch_first=True)
        >>> x = ember.randn(2, 5, 16)
        >>> out, weights = attn(x, x, x)
        >>> out.shape, weights.shape
        (ember.Size([2, 5, 16]), ember.Size([2, 5, 5]))
    """
    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError(f"embed_dim must be divisible by num_heads, got embed_dim={embed_dim} and "
                                 f"num_heads={num_heads}")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        separate = not self._qkv_same_embed_dim
        return _multi_head_attention(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
            self.out_proj.bias, self.training, key_padding_mask, need_weights, attn_mask, separate,
            self.q_proj_weight, self.k_proj_weight, self.v_proj_weight, None, None, average_attn_weights,
            is_causal, batch_first=self.batch_first)
