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

    def _pack(self, source, new_observer):
        """Quantizes the float weights of ``source`` (a float RNN, or self during __init__)."""
        packs = []
        for names in source._all_weights:
            w = dict((name.split("_l")[0], getattr(source, name)) for name in names)
            matrices = [("weight_ih", "bias_ih"), ("weight_hh", "bias_hh")]
            if self.proj_size:
                matrices.append(("weight_hr", None))
            for weight, bias in matrices:
                pack = LinearPackedParams(self.dtype)
                pack.set_weight_bias(quantize_weight(w[weight], new_observer()), w.get(bias))
                packs.append(pack)
        self._all_weight_values = nn.ModuleList(packs)

    def _packed_by_name(self):
        """``(weight name, bias name or None, LinearPackedParams)`` in storage order."""
        per_layer = 3 if self.proj_size else 2
        packs = list(self._all_weight_values)
        for i, names in enumerate(self._all_weights):
            suffix = names[0][len("weight_ih"):]
            kinds = [("weight_ih", "bias_ih"), ("weight_hh", "bias_hh"), ("weight_hr", None)]
            for (weight, bias), pack in zip(kinds, packs[i * per_layer:(i + 1) * per_layer]):
                yield weight + suffix, bias and bias + suffix, pack

    def _weight_bias(self):
        """``{"weight": {name: quantized weight}, "bias": {name: float bias}}`` as PyTorch's
        dynamic RNNs return it (qint8 weights are QuantizedTensors, float16 ones float32 Tensors)."""
        out = {"weight": {}, "bias": {}}
        for weight, bias, pack in self._packed_by_name():
            w, b = pack._weight_bias()
            out["weight"][weight] = w
            if bias is not None and b is not None:
                out["bias"][bias] = b
        return out

    def get_weight(self):
        return self._weight_bias()["weight"]

    def get_bias(self):
        return self._weight_bias()["bias"]

    def _layer_weights(self):
        per_layer = 3 if self.proj_size else 2
        packs = list(self._all_weight_values)
        out = []
        for k in range(0, len(packs), per_layer):
            ih, hh = packs[k], packs[k + 1]
            hr = packs[k + 2].dequantized_weight() if self.proj_size else None
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
