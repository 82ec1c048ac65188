"""``DynamicQuantizedLSTM`` and ``DynamicQuantizedGRU``: recurrent layers whose weight
matrices are stored quantized (``torch.ao.nn.quantized.dynamic.LSTM``/``GRU``,
https://pytorch.org/docs/stable/generated/torch.ao.nn.quantized.dynamic.LSTM.html), and the
one-step cells ``LSTMCell``, ``GRUCell`` and ``RNNCell``
(https://pytorch.org/docs/stable/generated/torch.ao.nn.quantized.dynamic.LSTMCell.html).

Each layer and direction keeps ``(W_ih, b_ih)`` and ``(W_hh, b_hh)`` (and ``W_hr`` with a
projection) as :class:`LinearPackedParams` in ``_all_weight_values``, each matrix with its
own scale. The recurrence is ember's float one run on the dequantized weights (a reference
kernel); PyTorch also rounds each step's input and hidden state to 8 bits inside its int8
products, so its outputs differ from ember's by that rounding, carried through the steps.
A cell keeps ``_packed_weight_ih`` and ``_packed_weight_hh`` (each with its bias) and runs the
float cell's step on their dequantized weights the same way.
"""
from types import SimpleNamespace

from ..... import nn
from ....._dtype import float16, float32
from .....nn.modules.rnn import RNNBase as _FloatRNNBase
from .....nn.modules.rnn import RNNCellBase as _FloatRNNCellBase
from ....quantization.qconfig import default_dynamic_qconfig, float16_dynamic_qconfig
from ....quantization.qtensor import qint8
from .linear import pack_weight_bias, quantize_weight, repr_without_packed_params, weight_observer

__all__ = ["LSTM", "GRU", "RNNCellBase", "LSTMCell", "GRUCell", "RNNCell"]

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
                packs.append(pack_weight_bias(quantize_weight(getattr(source, weight + suffix), new_observer()),
                                              getattr(source, bias + suffix) if bias and self.bias else None,
                                              self.dtype))
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
        """``{"weight_ih_l0": w, ...}``: every layer's and direction's stored weights (quantized
        for qint8, float16 otherwise)."""
        return self._weight_bias()["weight"]

    def get_bias(self):
        """``{"bias_ih_l0": b, ...}``: every layer's and direction's float biases."""
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


class RNNCellBase(_FloatRNNCellBase):
    """What the dynamic cells share: the float cell's arguments plus ``dtype`` (ember.qint8 or
    ember.float16; RuntimeError otherwise, kept as ``weight_dtype``), ``weight_ih`` and
    ``weight_hh`` quantized with their biases in ``_packed_weight_ih``/``_packed_weight_hh``,
    and the float cell's checks, shapes and step run on the dequantized weights.

    ``bias_ih``/``bias_hh`` are the stored float biases (None without bias); ``get_weight()``,
    ``get_bias()`` and ``_weight_bias()`` return them as PyTorch's cells do. Constructing
    directly quantizes freshly initialised float weights.
    """
    _FLOAT_MODULE = None

    def __init__(self, input_size, hidden_size, bias=True, num_chunks=4, dtype=qint8):
        if dtype not in (qint8, float16):
            raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
        # no float parameters of its own: the packed ones replace them
        nn.Module.__init__(self)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_dtype = dtype
        qconfig = default_dynamic_qconfig if dtype is qint8 else float16_dynamic_qconfig
        self._pack(_FloatRNNCellBase(input_size, hidden_size, bias, num_chunks), qconfig.weight)

    def _pack(self, source, new_observer):
        """Quantizes the weights of the float cell ``source``, each with a fresh observer."""
        self.set_weight_bias({"weight": {name: quantize_weight(getattr(source, name), new_observer())
                                         for name in ("weight_ih", "weight_hh")},
                              "bias": {"bias_ih": source.bias_ih, "bias_hh": source.bias_hh}})

    def set_weight_bias(self, weight_bias_dict):
        """Stores ``{"weight": {"weight_ih": w, "weight_hh": w}, "bias": {"bias_ih": b, "bias_hh": b}}``
        (quantized weights for qint8, float ones for float16; biases float or None)."""
        for kind in ("ih", "hh"):
            setattr(self, "_packed_weight_" + kind,
                    pack_weight_bias(weight_bias_dict["weight"]["weight_" + kind],
                                     weight_bias_dict["bias"]["bias_" + kind], self.weight_dtype))

    def _weight_bias(self):
        """``{"weight": {"weight_ih", "weight_hh"}, "bias": {"bias_ih", "bias_hh"}}``: QuantizedTensors
        (qint8) or float32 Tensors (float16), and the float biases (None without bias)."""
        out = {"weight": {}, "bias": {}}
        for kind in ("ih", "hh"):
            weight, bias = getattr(self, "_packed_weight_" + kind)._weight_bias()
            out["weight"]["weight_" + kind] = weight
            out["bias"]["bias_" + kind] = bias
        return out

    def get_weight(self):
        """``{"weight_ih": w, "weight_hh": w}``: the cell's stored weights."""
        return self._weight_bias()["weight"]

    def get_bias(self):
        """``{"bias_ih": b, "bias_hh": b}``: the cell's float biases (None where absent)."""
        return self._weight_bias()["bias"]

    @property
    def bias_ih(self):
        return self._packed_weight_ih.bias

    @property
    def bias_hh(self):
        return self._packed_weight_hh.bias

    def _step(self, mode, input, states):
        ih, hh = self._packed_weight_ih, self._packed_weight_hh
        dequantized = SimpleNamespace(input_size=self.input_size, hidden_size=self.hidden_size,
                                      weight_ih=ih.dequantized_weight(), weight_hh=hh.dequantized_weight(),
                                      bias_ih=ih.bias, bias_hh=hh.bias)
        return _FloatRNNCellBase._step(dequantized, mode, input, states)

    def _get_name(self):
        return "DynamicQuantized" + type(self).__name__

    __repr__ = repr_without_packed_params

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized copy of the float cell ``mod`` (exactly ``cls._FLOAT_MODULE``;
        AssertionError otherwise, and for a cell without bias, as PyTorch), each weight matrix
        quantized by its own fresh ``mod.qconfig.weight`` observer (the default dynamic one when
        unset); RuntimeError for an observer dtype other than ember.qint8 and ember.float16."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"nn.quantized.dynamic.{cls.__name__}.from_float only works for "
                                 f"nn.{cls.__name__}, got {type(mod).__name__}")
        # __constants__ names the float cell's constructor arguments (nonlinearity for RNNCell)
        qcell = cls(**{name: getattr(mod, name) for name in mod.__constants__},
                    dtype=weight_observer(mod).dtype)
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        qcell._pack(mod, lambda: weight_observer(mod))
        return qcell


class LSTMCell(RNNCellBase):
    """:class:`ember.nn.LSTMCell` with quantized weights; same arguments plus ``dtype``, same
    input, state and output shapes (float32), returns ``(h', c')``.

    Example::

        >>> import ember
        >>> from ember.ao.nn.quantized.dynamic import LSTMCell
        >>> cell = LSTMCell(4, 8)
        >>> cell
        DynamicQuantizedLSTMCell(4, 8)
        >>> h, c = cell(ember.randn(3, 4))
        >>> h.shape
        torch.Size([3, 8])
    """
    _FLOAT_MODULE = nn.LSTMCell
    forward = nn.LSTMCell.forward

    def __init__(self, input_size, hidden_size, bias=True, dtype=qint8):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)


class GRUCell(RNNCellBase):
    """:class:`ember.nn.GRUCell` with quantized weights; same arguments plus ``dtype``."""
    _FLOAT_MODULE = nn.GRUCell
    forward = nn.GRUCell.forward

    def __init__(self, input_size, hidden_size, bias=True, dtype=qint8):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)


class RNNCell(RNNCellBase):
    """:class:`ember.nn.RNNCell` with quantized weights; same arguments (``nonlinearity``
    "tanh" or "relu", RuntimeError at the first call otherwise) plus ``dtype``."""
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]
    _FLOAT_MODULE = nn.RNNCell
    forward = nn.RNNCell.forward

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", dtype=qint8):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity
