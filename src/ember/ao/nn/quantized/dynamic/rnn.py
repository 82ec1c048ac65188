"""``DynamicQuantizedLSTM`` and ``DynamicQuantizedGRU``: recurrent layers whose weight
matrices are stored quantized (``torch.ao.nn.quantized.dynamic.LSTM``/``GRU``,
https://pytorch.org/docs/stable/generated/torch.ao.nn.quantized.dynamic.LSTM.html).

Each layer and direction keeps ``(W_ih, b_ih)`` and ``(W_hh, b_hh)`` (and ``W_hr`` with a
projection) as :class:`LinearPackedParams` in ``_all_weight_values``, each matrix with its
own scale. The recurrence is ember's float one run on the dequantized weights (a reference
kernel); PyTorch also rounds each step's input and hidden state to 8 bits inside its int8
products, so its outputs differ from ember's by that rounding, carried through the steps.
"""
from ..... import nn
from ....._dtype import float16, float32
from .....nn.modules.rnn import RNNBase as _FloatRNNBase
from ....quantization.qconfig import default_dynamic_qconfig, float16_dynamic_qconfig
from ....quantization.qtensor import qint8
from .linear import LinearPackedParams, quantize_weight, repr_without_packed_params, weight_observer

__all__ = ["LSTM", "GRU"]

_MATRICES = (("weight_ih", "bias_ih"), ("weight_hh", "bias_hh"), ("weight_hr", None))


class RNNBase(_FloatRNNBase):
    """What the dynamic LSTM and GRU share: the float layer's arguments (``proj_size`` too)
    plus ``dtype`` (ember.qint8 or ember.float16; RuntimeError otherwise), quantized weights
    and the forward of :class:`ember.nn.LSTM`/``GRU``. Input must be float32 (ValueError)."""
    _FLOAT_MODULE = None

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, dtype=qint8):
        if dtype not in (qint8, float16):
            raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size)
        self.dtype = dtype
        qconfig = default_dynamic_qconfig if dtype is qint8 else float16_dynamic_qconfig
        self._pack(self, qconfig.weight)
        for name in self._flat_weights_names:
            del self._parameters[name]

    def _matrices(self):
        """``(weight kind, bias kind or None)`` stored per layer and direction, in order."""
        return _MATRICES[:3 if self.proj_size else 2]

    def _pack(self, source, new_observer):
        """Quantizes the float weights of ``source`` (a float RNN, or self during __init__)."""
        packs = []
        for names in source._all_weights:
            suffix = names[0][len("weight_ih"):]
            for weight, bias in self._matrices():
                pack = LinearPackedParams(self.dtype)
                pack.set_weight_bias(quantize_weight(getattr(source, weight + suffix), new_observer()),
                                     getattr(source, bias + suffix) if bias and self.bias else None)
                packs.append(pack)
        self._all_weight_values = nn.ModuleList(packs)

    def _layer_packs(self):
        """Per layer and direction: its name suffix ("_l0", "_l0_reverse", ...) and
        ``{weight kind: LinearPackedParams}``."""
        packs = iter(self._all_weight_values)
        return [(names[0][len("weight_ih"):], {weight: next(packs) for weight, _ in self._matrices()})
                for names in self._all_weights]

    def _weight_bias(self):
        """``{"weight": {name: quantized weight}, "bias": {name: float bias}}`` as PyTorch's
        dynamic RNNs return it (qint8 weights are QuantizedTensors, float16 ones float32 Tensors)."""
        out = {"weight": {}, "bias": {}}
        for suffix, packs in self._layer_packs():
            for weight, bias in self._matrices():
                w, b = packs[weight]._weight_bias()
                out["weight"][weight + suffix] = w
                if b is not None:
                    out["bias"][bias + suffix] = b
        return out

    def get_weight(self):
        return self._weight_bias()["weight"]

    def get_bias(self):
        return self._weight_bias()["bias"]

    def _layer_weights(self):
        out = []
        for _, packs in self._layer_packs():
            ih, hh = packs["weight_ih"], packs["weight_hh"]
            hr = packs["weight_hr"].dequantized_weight() if self.proj_size else None
            out.append((ih.dequantized_weight(), hh.dequantized_weight(), ih.bias, hh.bias, hr))
        return out

    def _check_input(self, input, ndim):
        if input.dtype is not float32:
            raise ValueError(f"Dynamic quantized {self.mode} expects float32 input, got {input.dtype}")
        if input.ndim != ndim:
            raise RuntimeError(f"input must have {ndim} dimensions, got {input.ndim}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _get_name(self):
        return "DynamicQuantized" + type(self).__name__

    __repr__ = repr_without_packed_params

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized copy of the float ``mod`` (an ember.nn.LSTM or GRU, exact type;
        AssertionError otherwise), each weight matrix quantized by its own fresh
        ``mod.qconfig.weight`` observer (the default dynamic one when unset)."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"nn.quantized.dynamic.{cls.__name__}.from_float only works for "
                                 f"nn.{cls.__name__}, got {type(mod).__name__}")
        dtype = weight_observer(mod).dtype
        qmod = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first,
                   mod.dropout, mod.bidirectional, proj_size=mod.proj_size, dtype=dtype)
        qmod._pack(mod, lambda: weight_observer(mod))
        return qmod


class LSTM(RNNBase):
    """:class:`ember.nn.LSTM` with quantized weights; same arguments plus ``dtype``, same
    input, state and output shapes (float32).

    Example::

        >>> from ember.ao.nn.quantized.dynamic import LSTM
        >>> LSTM(4, 8)
        DynamicQuantizedLSTM(4, 8)
    """
    _FLOAT_MODULE = nn.LSTM

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """:class:`ember.nn.GRU` with quantized weights; same arguments plus ``dtype``."""
    _FLOAT_MODULE = nn.GRU

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)
