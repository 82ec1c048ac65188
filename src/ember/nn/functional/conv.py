"""Convolution functions of ``ember.nn.functional``: ``conv1d``, ``conv2d``, ``conv3d``,
``conv_transpose1d``, ``conv_transpose2d``, ``conv_transpose3d`` (https://pytorch.org/docs/stable/nn.functional.html#convolution-functions).

This file turns PyTorch's arguments into the geometry of the ops in :mod:`ember._ops.conv`
and raises PyTorch's errors, in the order its ATen checks run (RuntimeError naming the
offending sizes). Inputs without a batch dimension are run as a batch of one.
"""
import operator

from ..._ops.conv import Conv, ConvTranspose
from ..._ops.core import _type_name, apply

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]

def _spatial(value, name, dims):
    """``value`` (an int or a sequence of 1 or ``dims`` ints) as a ``dims``-tuple."""
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    for i, v in enumerate(items):
        if isinstance(v, bool) or not hasattr(type(v), "__index__"):
            raise TypeError(f"{name} must be a tuple of ints, but found an element of type "
                            f"{type(v).__name__}")
        items[i] = operator.index(v)
    if len(items) == 1:
        items = items * dims
    if len(items) != dims:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dims} values "
                           f"to match the convolution dimensions, but got {name}={items}")
    return tuple(items)


def _batched(input, dims, name):
    """``input`` with a batch dimension, and whether one was added."""
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, "
                           f"but got input of size: {list(input.shape)}")
    return (input.unsqueeze(0), True) if input.ndim == dims + 1 else (input, False)


def _check_common(input, weight, bias, stride, padding, dilation, groups, transposed):
    """PyTorch's argument, rank, group and dtype checks shared by both directions."""
    if any(p < 0 for pair in padding for p in pair):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    w = list(weight.shape)
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{w}, but got {input.ndim}-dimensional input of size {list(input.shape)} instead")
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
                           f"but got weight of size {w} instead")
    if w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size [{w}] instead")
    if any(k <= 0 for k in w[2:]):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel size {w[2:]}")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({_tensor_type(input)}) and weight type ({_tensor_type(weight)}) "
                           "should be the same")
    expected = w[0] if transposed else w[1] * groups
    if input.shape[1] != expected:
        given = f"transposed={int(transposed)}" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {given}, weight of size {w}, expected input{list(input.shape)} to have "
                           f"{expected} channels, but got {input.shape[1]} channels instead")
    if bias is not None:
        channels = w[1] * groups if transposed else w[0]
        if bias.ndim != 1 or bias.shape[0] != channels:
            given = "transposed=1, weight" if transposed else "weight"
            raise RuntimeError(f"Given {given} of size {w}, expected bias to be 1-dimensional with "
                               f"{channels} elements, but got bias of size {list(bias.shape)} instead")
        if bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({_c_name(input)}) and bias type ({_c_name(bias)}) should be "
                               "the same")


def _tensor_type(t):
    return f"torch.{_type_name(t.dtype)}Tensor"


def _c_name(t):
    return {"float32": "float", "float64": "double", "float16": "c10::Half"}.get(t.dtype.name, t.dtype.name)


def _conv_padding(padding, weight, stride, dilation, dims):
    """(before, after) pairs for PyTorch's ``padding`` argument: ints, 'valid', or 'same'
    (total ``dilation * (kernel - 1)``, the odd one extra after, as PyTorch pads)."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * dims
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in _spatial(padding, "padding", dims))


def _conv(input, weight, bias, stride, padding, dilation, groups, dims, name):
    input, unbatched = _batched(input, dims, name)
    stride, dilation = _spatial(stride, "stride", dims), _spatial(dilation, "dilation", dims)
    padding = _conv_padding(padding, weight, stride, dilation, dims)
    _check_common(input, weight, bias, stride, padding, dilation, groups, transposed=False)
    padded = [h + b + a for h, (b, a) in zip(input.shape[2:], padding)]
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    if any(p < s for p, s in zip(padded, spans)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                           f"Kernel size: ({' x '.join(map(str, spans))}). Kernel size can't be greater "
                           "than actual input size")
    args = (input, weight) if bias is None else (input, weight, bias)
    out = apply(Conv, *args, stride=stride, padding=padding, dilation=dilation, groups=groups)
    return out.squeeze(0) if unbatched else out


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, dims, name):
    input, unbatched = _batched(input, dims, name)
    stride, dilation = _spatial(stride, "stride", dims), _spatial(dilation, "dilation", dims)
    padding = _spatial(padding, "padding", dims)
    output_padding = _spatial(output_padding, "output_padding", dims)
    _check_common(input, weight, bias, stride, tuple((p, p) for p in padding), dilation, groups,
                  transposed=True)
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(p >= max(s, d) for p, s, d in zip(output_padding, stride, dilation)):
        q, s, d = output_padding, stride, dilation
        if dims == 1:  # PyTorch runs 1-D transposed convolutions over a unit height, and says so
            q, s, d = (0,) + q, (1,) + s, (1,) + d
        axes = ("depth", "height", "width")[-len(q):]
        shown = " ".join(f"{what}_{axis}: {v}" for what, values in
                         (("output_padding", q), ("stride", s), ("dilation", d)) for axis, v in zip(axes, values))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {shown}")
    sizes = list(input.shape[2:])
    if 0 in sizes:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{list(input.shape)}")
    out = [(i - 1) * s - 2 * p + d * (k - 1) + q + 1 for i, s, p, d, k, q in
           zip(sizes, stride, padding, dilation, weight.shape[2:], output_padding)]
    if any(o <= 0 for o in out):
        if dims == 1:
            sizes, out = [1] + sizes, [1] + out
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sizes))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, out))}). Output size is too small")
    pairs = tuple((p, p - q) for p, q in zip(padding, output_padding))
    args = (input, weight) if bias is None else (input, weight, bias)
    result = apply(ConvTranspose, *args, stride=stride, padding=pairs, dilation=dilation, groups=groups)
    return result.squeeze(0) if unbatched else result


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv1d.html).

    Shapes: input (N, C_in, L) or (C_in, L); weight (C_out, C_in/groups, kW); bias (C_out);
    output (N, C_out, L_out) with ``L_out = (L + 2 padding - dilation (kW - 1) - 1) // stride + 1``.
    ``padding`` is an int, a 1-tuple, 'valid' or 'same' (stride 1 only; an odd total padding
    puts the extra element on the right). Input, weight and bias share one dtype.

    Raises RuntimeError, with PyTorch's messages, for: an input of another rank, a channel count
    other than ``weight.shape[1] * groups``, a kernel wider than the padded input, non-positive
    stride/dilation/groups, negative padding, out channels not divisible by groups, a bias of
    the wrong size, mixed dtypes, or 'same' with stride > 1.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv2d.html).

    Shapes: input (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in/groups, kH, kW); bias
    (C_out); output (N, C_out, H_out, W_out) with
    ``H_out = (H + 2 padding[0] - dilation[0] (kH - 1) - 1) // stride[0] + 1`` and likewise W.
    ``stride``, ``padding``, ``dilation``: an int or an (H, W) pair; ``padding`` may also be
    'valid' or 'same' (stride 1 only; an odd total padding puts the extra row/column at the
    bottom/right, as PyTorch does). ``groups`` splits the channels into independent
    convolutions (``groups = C_in`` is depthwise).

    Raises RuntimeError as :func:`conv1d` does, e.g. "Given groups=1, weight of size
    [32, 16, 3, 3], expected input[32, 3, 32, 32] to have 16 channels, but got 3 channels
    instead".

    Example::

        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.conv2d(ember.randn(8, 3, 32, 32), ember.randn(16, 3, 3, 3), padding=1).shape
        torch.Size([8, 16, 32, 32])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv3d.html).

    Shapes: input (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_out, C_in/groups, kD, kH, kW);
    bias (C_out); output (N, C_out, D_out, H_out, W_out) with
    ``D_out = (D + 2 padding[0] - dilation[0] (kD - 1) - 1) // stride[0] + 1`` and likewise H, W.
    ``stride``, ``padding``, ``dilation``: an int or a (D, H, W) triple; ``padding`` may also be
    'valid' or 'same' (stride 1 only). Errors as :func:`conv2d` (RuntimeError, PyTorch's messages).

    Example::

        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.conv3d(ember.randn(2, 3, 8, 16, 16), ember.randn(4, 3, 3, 3, 3), stride=2).shape
        torch.Size([2, 4, 3, 7, 7])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution, the input gradient of :func:`conv1d`
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv_transpose1d.html).

    Shapes: input (N, C_in, L) or (C_in, L); weight (C_in, C_out/groups, kW); bias (C_out);
    output (N, C_out, L_out) with
    ``L_out = (L - 1) stride - 2 padding + dilation (kW - 1) + output_padding + 1``.

    Raises RuntimeError for the cases of :func:`conv1d` (the input must have ``weight.shape[0]``
    channels), for ``output_padding`` negative or not smaller than stride or dilation, and
    for a non-positive output size.
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution, the input gradient of :func:`conv2d`
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv_transpose2d.html).

    Shapes: input (N, C_in, H, W) or (C_in, H, W); weight (C_in, C_out/groups, kH, kW); bias
    (C_out); output (N, C_out, H_out, W_out) with
    ``H_out = (H - 1) stride[0] - 2 padding[0] + dilation[0] (kH - 1) + output_padding[0] + 1``
    and likewise W. Errors as :func:`conv_transpose1d`.

    Example::

        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.conv_transpose2d(ember.randn(1, 4, 5, 5), ember.randn(4, 2, 3, 3), stride=2).shape
        torch.Size([1, 2, 11, 11])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution, the input gradient of :func:`conv3d`
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv_transpose3d.html).

    Shapes: input (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_in, C_out/groups, kD, kH, kW);
    bias (C_out); output (N, C_out, D_out, H_out, W_out) with
    ``D_out = (D - 1) stride[0] - 2 padding[0] + dilation[0] (kD - 1) + output_padding[0] + 1``
    and likewise H, W. Errors as :func:`conv_transpose1d`.
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")
