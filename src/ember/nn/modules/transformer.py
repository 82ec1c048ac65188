"""The Transformer of Vaswani et al., 2017 (https://arxiv.org/abs/1706.03762), with PyTorch's
layers and parameter names (https://pytorch.org/docs/stable/nn.html#transformer-layers).

Each layer is self-attention (and, in the decoder, attention over the encoder's output)
followed by a two-layer feed-forward block, each wrapped in a residual connection with
LayerNorm after it (``norm_first=False``, the paper's "post-norm") or before it
(``norm_first=True``, "pre-norm"). Shapes use S for the source length, T for the target
length, N for the batch and E for ``d_model``; inputs are (S, N, E), (N, S, E) with
``batch_first``, or unbatched (S, E).
"""
import copy
import warnings

from ... import _creation
from ..._ops.core import OBSERVERS
from ..._ops.join import triu
from .. import functional as F
from .. import init
from ..functional.attention import _check_mask_type
from .activation import GELU, ReLU
from .activation import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The (sz, sz) float mask with -inf above the diagonal and 0 elsewhere: position i may
    attend to positions 0..i."""
    return triu(_creation.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _activation(activation):
    """``activation`` as a callable: "relu", "gelu" or a callable (RuntimeError otherwise).
    The default ``F.relu``, bound when this module loaded, is the namespace's current one (a
    wrapper once a Tensor subclass turned ``__torch_function__`` overrides on), as torch's."""
    if activation == "relu" or activation == F.relu:
        return F.relu
    if activation == "gelu" or activation == F.gelu:
        return F.gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _seq_len(x, batch_first):
    return x.shape[0] if x.ndim == 2 else x.shape[1 if batch_first else 0]


def _is_causal_mask(mask, is_causal, size):
    """PyTorch's ``_detect_is_causal_mask``: ``is_causal`` if given, else whether ``mask`` is
    exactly the square subsequent mask of the sequence's length. While ``ember.compile`` records
    (an observer that breaks graphs), False: the attention then adds the mask, which gives what the
    causal path gives where the mask is causal, and reading its values would be a graph break
    (torch's dynamo breaks there)."""
    if is_causal is not None:
        return bool(is_causal)
    if mask is None or OBSERVERS and any([hasattr(o, "graph_break") for o in OBSERVERS]):
        return False
    causal = _generate_square_subsequent_mask(size, dtype=mask.dtype)
    return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())


def _check_masks(padding_mask, padding_name, mask, mask_name):
    """PyTorch's mask rules at a layer's entry: bool or floating only, and a deprecation
    warning when the two kinds differ."""
    _check_mask_type(padding_mask, padding_name)
    if padding_mask is not None and mask is not None and padding_mask.dtype is not mask.dtype:
        warnings.warn(f"Support for mismatched {padding_name} and {mask_name} is deprecated. Use same type "
                      f"for both instead.", stacklevel=3)
    _check_mask_type(mask, mask_name)


class Transformer(Module):
    """An encoder-decoder Transformer: ``decoder(tgt, encoder(src))``, each a stack of layers
    ending in a LayerNorm.

    Args:
        d_model (E): feature size; nhead: attention heads (must divide E).
        num_encoder_layers, num_decoder_layers: stack depths.
        dim_feedforward: hidden size of the feed-forward blocks; dropout: their and the
            attention's dropout probability.
        activation: "relu", "gelu" or a callable, for the feed-forward blocks.
        custom_encoder, custom_decoder: modules used instead of the default stacks.
        layer_norm_eps: LayerNorm's epsilon; batch_first: (N, S, E) layout;
        norm_first: pre-norm layers; bias: biases in the Linear and LayerNorm layers.

    Shape: src (S, N, E), tgt (T, N, E) (batch first: (N, S, E), (N, T, E); unbatched:
    (S, E), (T, E)); src_mask (S, S) or (N*nhead, S, S); tgt_mask (T, T) or (N*nhead, T, T);
    memory_mask (T, S); *_key_padding_mask (N, S) / (N, T), True (or a float added) at
    padding. Output (T, N, E). The ``*_is_causal`` flags are hints that the matching mask is
    causal; None (encoder and decoder self-attention) checks the mask.

    Every weight with two or more dimensions is re-drawn with xavier_uniform_.
    Raises RuntimeError when src and tgt differ in batch size or their feature size is not
    d_model. Source: https://pytorch.org/docs/stable/generated/torch.nn.Transformer.html
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                      norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **factory), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **factory), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The (sz, sz) float mask with -inf above the diagonal, 0 on and below it."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` applied in turn, then ``norm`` if given.

    Args:
        encoder_layer: the layer to copy; num_layers: how many copies; norm: a final layer.
        enable_nested_tensor, mask_check: accepted for PyTorch compatibility. ember has no
            nested tensors, so padded positions are computed like any other (PyTorch's
            inference fast path returns zeros there); the warning PyTorch gives when the
            layer could never use that path is given too.

    Shape: src as the layer's input; mask (S, S) or (N*nhead, S, S);
    src_key_padding_mask (N, S); ``is_causal`` None checks whether ``mask`` is causal.
    Output: the input's shape.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.TransformerEncoder.html
    """
    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        _check_masks(src_key_padding_mask, "src_key_padding_mask", mask, "mask")
        is_causal = _is_causal_mask(mask, is_causal, _seq_len(src, self.layers[0].self_attn.batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


def _why_not_nested(layer):
    """Why PyTorch's nested-tensor fast path can never serve ``layer`` ("" if it could)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not (layer.activation is F.relu or layer.activation is F.gelu
            or isinstance(layer.activation, (ReLU, GELU))):
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` applied in turn to ``tgt`` with the
    same ``memory``, then ``norm`` if given.

    Shape: tgt (T, N, E), memory (S, N, E) (batch first or unbatched alike); masks as for
    :class:`TransformerDecoderLayer`; ``tgt_is_causal`` None checks ``tgt_mask``.
    Output: tgt's shape.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.TransformerDecoder.html
    """
    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        tgt_is_causal = _is_causal_mask(tgt_mask, tgt_is_causal, _seq_len(tgt, self.layers[0].self_attn.batch_first))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                           memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with a residual connection and LayerNorm.

    ``norm_first=False``: ``x = norm1(x + sa(x)); x = norm2(x + ff(x))``;
    ``norm_first=True``: ``x = x + sa(norm1(x)); x = x + ff(norm2(x))``, with
    ``ff(x) = dropout2(linear2(dropout(activation(linear1(x)))))`` and ``sa`` the
    ``self_attn`` output after ``dropout1``.

    Args: d_model, nhead, dim_feedforward=2048, dropout=0.1, activation (relu), layer_norm_eps,
    batch_first, norm_first, bias, as for :class:`Transformer`.

    Shape: src (S, N, E), (N, S, E) with batch_first, or (S, E); src_mask (S, S) or
    (N*nhead, S, S); src_key_padding_mask (N, S) or (S). Output: src's shape.
    Raises RuntimeError for an unknown activation name.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.TransformerEncoderLayer.html

    Example::

        >>> import ember
        >>> layer = ember.nn.TransformerEncoderLayer(d_model=16, nhead=4, batch_first=True)
        >>> layer(ember.randn(2, 10, 16)).shape
        torch.Size([2, 10, 16])
    """
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        _check_masks(src_key_padding_mask, "src_key_padding_mask", src_mask, "src_mask")
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention over ``memory`` (the encoder's output) and a
    feed-forward block, each with a residual connection and LayerNorm (after it, or before
    it with ``norm_first``), as in :class:`TransformerEncoderLayer`.

    Args: as for :class:`TransformerEncoderLayer`.

    Shape: tgt (T, N, E), memory (S, N, E) (batch first or unbatched alike); tgt_mask (T, T)
    or (N*nhead, T, T); memory_mask (T, S) or (N*nhead, T, S); tgt_key_padding_mask (N, T);
    memory_key_padding_mask (N, S). Output: tgt's shape.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.TransformerDecoderLayer.html
    """
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))
