"""``DynamicQuantizedLinear``: a Linear layer whose weight is stored quantized
(``torch.ao.nn.quantized.dynamic.Linear``,
https://pytorch.org/docs/stable/generated/torch.ao.nn.quantized.dynamic.Linear.html).

The weight is kept as int8 integers with a float scale (per tensor or per output row) and
zero point, a quarter of the float32 bytes, or as float16, half of them. The forward pass is a
reference kernel: ``y = x dequant(W)^T + b`` in float32. PyTorch's fbgemm kernel also rounds
the input to 7-bit unsigned integers (scale ``s_x = (max(x, 0) - min(x, 0)) / 127``) before an
integer matrix product, so its outputs differ from ember's by at most
``s_x / 2 * sum_k |dequant(W)_jk|`` in output feature j.
"""
from ..... import nn
from ....._creation import tensor, zeros
from ....._dtype import float16, float32, float64, int64
from .....nn import functional as F
from ....quantization.qconfig import default_dynamic_qconfig
from ....quantization.qtensor import (QuantizedTensor, per_tensor_affine, per_tensor_symmetric,
                                     qint8, quantize_per_channel, quantize_per_tensor)

__all__ = ["Linear", "LinearPackedParams"]


def quantize_weight(weight, observer):
    """``weight`` (float Tensor) quantized with the parameters a fresh ``observer`` chooses after
    seeing it: a :class:`QuantizedTensor` for int8 observers, a float16 Tensor for float16 ones."""
    observer(weight)
    if observer.dtype is float16:
        return weight.detach().to(float16)
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme in (per_tensor_affine, per_tensor_symmetric):
        return quantize_per_tensor(weight.detach().float(), float(scale), int(zero_point), qint8)
    return quantize_per_channel(weight.detach().float(), scale.double(), zero_point, observer.ch_axis, qint8)


def weight_observer(module):
    """A fresh weight observer from ``module.qconfig`` (the default dynamic one when unset).
    Its dtype is not checked here: each ``from_float`` rejects unsupported ones with its own
    PyTorch error."""
    qconfig = getattr(module, "qconfig", None)
    return (qconfig.weight if qconfig is not None and qconfig.weight is not None
            else default_dynamic_qconfig.weight)()


def pack_weight_bias(weight, bias, dtype):
    """A :class:`LinearPackedParams` of ``dtype`` holding ``weight`` (already quantized, see
    :func:`quantize_weight`) and the float ``bias`` (or None)."""
    pack = LinearPackedParams(dtype)
    pack.set_weight_bias(weight, bias)
    return pack


def repr_without_packed_params(module):
    """``Name(extra_repr)`` on one line: the packed weights are storage, not submodules a
    reader of the model needs to see (PyTorch hides them too)."""
    return f"{module._get_name()}({module.extra_repr()})"


class LinearPackedParams(nn.Module):
    """A quantized weight and its float bias, as buffers (so state_dict, ``ember.save`` and
    ``load_state_dict`` carry them): ``qweight`` (int8 integers, or the float16 weight),
    ``scale`` (float64: 0-d per tensor, one per row per channel), ``zero_point`` (int64, same
    shape) and ``bias`` (float32 or None)."""

    def __init__(self, dtype=qint8):
        super().__init__()
        self.dtype = dtype
        self.axis = None

    def set_weight_bias(self, weight, bias):
        """Stores ``weight`` (a QuantizedTensor for qint8, a float Tensor for float16) and ``bias``."""
        if self.dtype is qint8:
            self.axis = None if weight.qscheme() is per_tensor_affine else weight.q_per_channel_axis()
            if self.axis is None:
                scale = tensor(weight.q_scale(), dtype=float64)
                zero_point = tensor(weight.q_zero_point(), dtype=int64)
            else:
                scale, zero_point = weight.q_per_channel_scales(), weight.q_per_channel_zero_points()
            self.register_buffer("qweight", weight.int_repr().clone())
            self.register_buffer("scale", scale)
            self.register_buffer("zero_point", zero_point)
        else:
            self.register_buffer("qweight", weight.detach().to(float16))
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())

    def _weight_bias(self):
        """``(weight, bias)``: the weight as a QuantizedTensor (qint8) or float32 Tensor (float16)."""
        if self.dtype is qint8:
            weight = QuantizedTensor(self.qweight, self.scale.numpy(), self.zero_point.numpy(), qint8,
                                     self.axis)
        else:
            weight = self.qweight.to(float32)
        return weight, self.bias

    def dequantized_weight(self):
        """The weight the reference kernels multiply by, float32."""
        weight = self._weight_bias()[0]
        return weight.dequantize() if self.dtype is qint8 else weight


class Linear(nn.Module):
    """``y = x dequant(W)^T + b`` with W stored quantized (see the module docstring).

    Args:
        in_features, out_features: as :class:`ember.nn.Linear`.
        bias_: if False, no bias.
        dtype: ember.qint8 (int8 weight) or ember.float16.

    Shape: input (*, in_features) float32; output (*, out_features) float32.

    ``weight()`` returns the stored weight (a quantized tensor for qint8, a float32 Tensor of
    the float16 values for float16), ``bias()`` the bias. Built by :meth:`from_float` (which
    :func:`ember.ao.quantization.quantize_dynamic` calls); constructing directly gives a zero
    weight and bias. Raises RuntimeError for another dtype.

    Example::

        >>> import ember
        >>> from ember.ao.nn.quantized.dynamic import Linear
        >>> Linear(4, 2)
        DynamicQuantizedLinear(in_features=4, out_features=2, dtype=torch.qint8, qscheme=torch.per_tensor_affine)
    """
    _FLOAT_MODULE = (nn.Linear,)

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__()
        if dtype not in (qint8, float16):
            raise RuntimeError(f"Unsupported dtype specified for quantized Linear: {dtype}")
        self.in_features = in_features
        self.out_features = out_features
        weight = zeros(out_features, in_features)
        if dtype is qint8:
            weight = quantize_per_tensor(weight, 1.0, 0, qint8)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(weight, zeros(out_features) if bias_ else None)

    def forward(self, x):
        return F.linear(x, self._packed_params.dequantized_weight(), self._packed_params.bias)

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        """The weight as stored: a QuantizedTensor (qint8) or a float16 Tensor, (out_features, in_features).
        """
        return self._weight_bias()[0]

    def bias(self):
        """The float bias, (out_features), or None."""
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        """Stores ``w`` and ``b`` in the packed parameters (as ``_packed_params.set_weight_bias``)."""
        self._packed_params.set_weight_bias(w, b)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    __repr__ = repr_without_packed_params

    def extra_repr(self):
        s = (f"in_features={self.in_features}, out_features={self.out_features}, "
             f"dtype={self._packed_params.dtype}")
        if self._packed_params.dtype is qint8:
            s += f", qscheme={self.weight().qscheme()}"
        return s

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized copy of the float Linear ``mod``, its weight quantized as
        ``mod.qconfig.weight`` says (the default dynamic qconfig when unset). AssertionError (as
        PyTorch) for a module that is not an ember.nn.Linear (subclasses included) or a weight
        observer whose dtype is neither ember.qint8 nor ember.float16."""
        if type(mod) not in cls._FLOAT_MODULE:
            raise AssertionError(f"nn.quantized.dynamic.Linear.from_float only works for nn.Linear, got "
                            f"{type(mod).__name__}")
        observer = weight_observer(mod)
        if observer.dtype not in (qint8, float16):
            raise AssertionError("The only supported dtypes for dynamic quantized linear are qint8 "
                                 f"and float16, got: {observer.dtype}")
        qlinear = cls(mod.in_features, mod.out_features, dtype=observer.dtype)
        qlinear.set_weight_bias(quantize_weight(mod.weight, observer), mod.bias)
        return qlinear
