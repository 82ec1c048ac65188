"""Quantized element types, quantization schemes and the quantized tensor that
``DynamicQuantizedLinear.weight()`` returns (the parts of PyTorch's quantized tensors that
dynamic quantization needs: https://pytorch.org/docs/stable/quantization-support.html).

A quantized tensor stores integers ``q`` and affine parameters; its real value is
``(q - zero_point) * scale``, with one (scale, zero_point) for the whole tensor
(``per_tensor_affine``) or one per slice along ``axis`` (``per_channel_affine``). Quantizing
rounds half to even and clamps to the integer type's range:
``q = clamp(round(x * (1 / scale)) + zero_point, qmin, qmax)`` in float32.
"""
import numpy as np

from ..._creation import from_numpy
from ..._dtype import _INT, PRINTED_MODULE, dtype
from ..._tensor import Tensor

__all__ = ["qint8", "quint8", "qint32", "qscheme", "per_tensor_affine", "per_channel_affine",
           "per_tensor_symmetric", "per_channel_symmetric", "QuantizedTensor",
           "quantize_per_tensor", "quantize_per_channel"]

qint8 = dtype("qint8", np.int8, _INT)
quint8 = dtype("quint8", np.uint8, _INT)
quint8.is_signed = False
qint32 = dtype("qint32", np.int32, _INT)
_RANGE = {qint8: (-128, 127), quint8: (0, 255), qint32: (-2 ** 31, 2 ** 31 - 1)}


class qscheme:
    """A quantization scheme (PyTorch's ``torch.qscheme``): how scale and zero point are shared."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"{PRINTED_MODULE}.{self.name}"

    def __reduce__(self):
        return self.name


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")


def quant_range(qdtype):
    """``(qmin, qmax)`` of a quantized dtype; RuntimeError for any other dtype."""
    try:
        return _RANGE[qdtype]
    except KeyError:
        raise RuntimeError(f"Expected a quantized dtype (ember.qint8, ember.quint8 or ember.qint32), "
                           f"got {qdtype}") from None


class QuantizedTensor:
    """Integers of a quantized dtype with their affine parameters (immutable).

    ``int_repr()`` is an ember Tensor of the underlying integer dtype (int8 for qint8, uint8
    for quint8, int32 for qint32): that is the storage, ``element_size()`` bytes per element.
    ``axis`` is None per tensor; otherwise ``scale`` (float64) and ``zero_point`` (int64) are
    arrays with one entry per slice along ``axis``.
    """
    is_quantized = True

    def __init__(self, int_repr, scale, zero_point, qdtype, axis=None):
        self._int_repr = int_repr
        self._scale = scale
        self._zero_point = zero_point
        self.dtype = qdtype
        self._axis = axis

    @property
    def shape(self):
        return self._int_repr.shape

    def size(self, dim=None):
        """The shape (as ``Tensor.size``), or the size along ``dim``."""
        return self._int_repr.size() if dim is None else self._int_repr.size(dim)

    def dim(self):
        """The number of dimensions."""
        return self._int_repr.ndim

    ndim = property(dim)

    def numel(self):
        """The number of elements."""
        return self._int_repr.numel()

    def element_size(self):
        """Bytes per element of the stored integers (1 for qint8 and quint8)."""
        return self._int_repr.element_size()

    @property
    def nbytes(self):
        return self.numel() * self.element_size()

    def int_repr(self):
        """The stored integers as a Tensor (int8 or uint8), without dequantizing."""
        return self._int_repr

    def qscheme(self):
        """``per_tensor_affine`` or ``per_channel_affine``."""
        return per_tensor_affine if self._axis is None else per_channel_affine

    def _per_tensor(self, what):
        if self._axis is not None:
            raise RuntimeError(f"Expected quantizer->qscheme() == kPerTensorAffine to be true, but got "
                               f"false. ({what} is only defined for per-tensor quantized tensors)")

    def _per_channel(self, what):
        if self._axis is None:
            raise RuntimeError(f"Expected quantizer->qscheme() == kPerChannelAffine to be true, but "
                               f"got false. ({what} is only defined for per-channel quantized tensors)")

    def q_scale(self):
        """The scale of a per-tensor quantized tensor (RuntimeError for per-channel), a float."""
        self._per_tensor("q_scale")
        return float(self._scale)

    def q_zero_point(self):
        """The zero point of a per-tensor quantized tensor (RuntimeError for per-channel), an int."""
        self._per_tensor("q_zero_point")
        return int(self._zero_point)

    def q_per_channel_scales(self):
        """The float64 scales, one per channel (RuntimeError for per-tensor)."""
        self._per_channel("q_per_channel_scales")
        return from_numpy(np.array(self._scale, np.float64))

    def q_per_channel_zero_points(self):
        """The int64 zero points, one per channel (RuntimeError for per-tensor)."""
        self._per_channel("q_per_channel_zero_points")
        return from_numpy(np.array(self._zero_point, np.int64))

    def q_per_channel_axis(self):
        """The channel dim of a per-channel quantized tensor (RuntimeError for per-tensor)."""
        self._per_channel("q_per_channel_axis")
        return self._axis

    def _affine_params(self):
        """Scale and zero point as float32, shaped to broadcast against the integers."""
        if self._axis is None:
            return np.float32(self._scale), np.float32(self._zero_point)
        shape = [1] * self.dim()
        shape[self._axis] = -1
        return (self._scale.astype(np.float32).reshape(shape),
                self._zero_point.astype(np.float32).reshape(shape))

    def dequantize(self):
        """The float32 Tensor ``(q - zero_point) * scale``."""
        scale, zero_point = self._affine_params()
        # q - zero_point is exact in float32 (|q - zero_point| < 2^24 for 8-bit types)
        out = np.subtract(self._int_repr._data, zero_point, dtype=np.float32)
        out *= scale
        return from_numpy(out)

    def __repr__(self):
        body = repr(self.dequantize())[:-1].rstrip()
        if self._axis is None:
            params = f" scale={self.q_scale()}, zero_point={self.q_zero_point()}"
        else:
            params = (f"\n       scale={self.q_per_channel_scales()!r},\n       zero_point="
                      f"{self.q_per_channel_zero_points()!r}, axis={self._axis}")
        return (f"{body}, size={tuple(self.shape)}, dtype={self.dtype},\n"
                f"       quantization_scheme={self.qscheme()},{params})")


def _quantize(x, scale, zero_point, qdtype):
    qmin, qmax = quant_range(qdtype)
    # times the float32 reciprocal, not divided by the scale: PyTorch's kernels do so, and the
    # two round differently for the extreme weights that land on a half (-127.5)
    q = np.rint(x.astype(np.float32) * (np.float32(1) / scale)) + zero_point
    return np.clip(q, qmin, qmax).astype(qdtype.np)


def _check_float(input, fn):
    if not isinstance(input, Tensor) or not input.dtype.is_floating_point:
        kind = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"{fn}: expected a floating-point Tensor to quantize, got {kind}")


def quantize_per_tensor(input, scale, zero_point, dtype):
    """Quantizes a float Tensor with one ``scale`` (float > 0) and ``zero_point`` (int)
    (``torch.quantize_per_tensor``). Returns a :class:`QuantizedTensor`; RuntimeError for a
    non-float input or a dtype that is not quantized."""
    _check_float(input, "quantize_per_tensor")
    quant_range(dtype)
    scale, zero_point = float(scale), int(zero_point)
    q = _quantize(input.detach().cpu().numpy(), np.float32(scale), zero_point, dtype)
    return QuantizedTensor(from_numpy(q), np.float64(scale), np.int64(zero_point), dtype)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """Quantizes a float Tensor with one scale and zero point per slice along ``axis``
    (``torch.quantize_per_channel``): ``scales`` and ``zero_points`` are 1-D Tensors of length
    ``input.size(axis)``. RuntimeError for a wrong length, a non-float input or a dtype that is
    not quantized."""
    _check_float(input, "quantize_per_channel")
    quant_range(dtype)
    axis = axis % input.ndim
    scales = np.asarray(scales.detach().cpu().numpy() if isinstance(scales, Tensor) else scales, np.float64)
    zero_points = np.asarray(zero_points.detach().cpu().numpy() if isinstance(zero_points, Tensor)
                             else zero_points, np.int64)
    n = input.shape[axis]
    if scales.shape != (n,) or zero_points.shape != (n,):
        raise RuntimeError(f"quantize_per_channel: expected {n} scales and zero points (size of axis "
                           f"{axis} of input {list(input.shape)}), got {list(scales.shape)} and "
                           f"{list(zero_points.shape)}")
    shape = [1] * input.ndim
    shape[axis] = n
    q = _quantize(input.detach().cpu().numpy(), scales.astype(np.float32).reshape(shape),
                  zero_points.reshape(shape), dtype)
    return QuantizedTensor(from_numpy(q), scales, zero_points, dtype, axis)
