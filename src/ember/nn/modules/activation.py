"""Activation layers (https://pytorch.org/docs/stable/nn.html#non-linear-activations-weighted-sum-nonlinearity).

Each module holds its settings and calls the function of the same name in
:mod:`ember.nn.functional`, where the formulas, sources and errors are documented. Unless
stated otherwise the shape is input (*), any number of dimensions, and output (*), the same
shape. ``inplace=True`` writes the result into the input, as in PyTorch.
"""
from ... import _creation
from ..._creation import empty
from .. import functional as F
from .. import init
from ..functional.attention import _multi_head_attention
from ..parameter import Parameter
from ...autograd.grad_mode import is_grad_enabled
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
           "Mish", "Softplus", "Softsign", "Sigmoid", "Tanh", "Hardtanh", "Hardswish", "Hardsigmoid",
           "LogSigmoid", "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "Softmax",
           "LogSoftmax", "Softmin", "Softmax2d", "GLU", "MultiheadAttention"]


def _inplace_suffix(inplace):
    return ", inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation whose only setting is ``inplace``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """``max(0, x)``."""

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class SELU(_Inplace):
    """``scale * elu(x, alpha)`` with the self-normalizing constants (Klambauer et al., 2017)."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class SiLU(_Inplace):
    """``x * sigmoid(x)``."""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``."""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(Module):
    """``x * relu6(x + 3) / 6`` (Howard et al., 2019)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``; AssertionError (as PyTorch) unless ``max_val > min_val``."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` for ``x > 0``, else ``negative_slope * x``."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class PReLU(Module):
    """Leaky ReLU with a learned slope ``weight`` of ``num_parameters`` elements (1, or the
    number of channels C = input.shape[1]), initialised to ``init`` (He et al., 2015).
    Shape: input (*) with C at dim 1 when ``num_parameters > 1``; output the same."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Sets every slope back to ``init`` (the constructor's value, 0.25 by default)."""
        self.weight.data.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Leaky ReLU with a random slope from [lower, upper] per element in training, their mean
    in evaluation (Xu et al., 2015)."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class ELU(Module):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)`` (Clevert et al., 2015)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (Barron, 2017)."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """``x * Phi(x)``; ``approximate="tanh"`` uses the tanh approximation."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input):
        return F.softsign(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input):
        return F.tanh(input)


class LogSigmoid(Module):
    """``log(sigmoid(x))``, finite for any finite input."""

    def forward(self, input):
        return F.logsigmoid(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input):
        return F.tanhshrink(input)


class Softshrink(Module):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Softshrink):
    """``x`` where ``|x| > lambd``, else 0."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class _SoftmaxNd(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxNd):
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim`` (values in [0, 1] summing to 1)."""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxNd):
    """``log(softmax(x))`` along ``dim``, finite for logits of any size."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxNd):
    """``softmax(-x)`` along ``dim``."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels at each location. Shape: input (N, C, H, W) or (C, H, W);
    output the same. ValueError for other ranks."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class GLU(Module):
    """``a * sigmoid(b)`` for the halves ``a``, ``b`` of the input along ``dim``.
    Shape: input (*1, N, *2) with N even at ``dim``; output (*1, N / 2, *2)."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


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
        (torch.Size([2, 5, 16]), torch.Size([2, 5, 5]))
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
        out, weights = _multi_head_attention(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
            self.out_proj.bias, self.training, key_padding_mask, need_weights, attn_mask, separate,
            self.q_proj_weight, self.k_proj_weight, self.v_proj_weight, None, None, average_attn_weights,
            is_causal, batch_first=self.batch_first)
        if self._fast_path(query, key, value):
            out = out.contiguous()  # torch's fused inference kernel writes (N, L, E) directly
        return out, weights

    def _fast_path(self, query, key, value):
        """Whether torch would run its fused inference kernel (the main conditions of its
        ``MultiheadAttention.forward``): self-attention on a batch_first 3-D input in eval
        mode without autograd, no bias_k/bias_v or zero attention, equal embedding dims."""
        return (self.batch_first and not self.training and query is key is value and query.ndim == 3
                and not (is_grad_enabled() and any(p.requires_grad for p in (query, *self.parameters())))
                and self.bias_k is None and not self.add_zero_attn and self._qkv_same_embed_dim)
