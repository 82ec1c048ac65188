"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``, ``ConvTranspose2d``,
``ConvTranspose3d``
(https://pytorch.org/docs/stable/nn.html#convolution-layers).

Attributes, ``state_dict`` keys, ``repr`` and default initialisation are PyTorch's: the weight
is (out_channels, in_channels/groups, *kernel_size) for a convolution and (in_channels,
out_channels/groups, *kernel_size) for a transposed one, drawn by ``kaiming_uniform_(a=sqrt(5))``,
i.e. U(-k, k) with ``k = 1/sqrt(fan_in)``, ``fan_in = weight.shape[1] * prod(kernel_size)``;
the bias (out_channels) is drawn from the same U(-k, k).
"""

from ..._creation import empty
from .. import functional as F
from .. import init
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value, dims):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims


class _ConvNd(Module):
    """What every convolution layer holds; ``dims`` (1, 2 or 3) is set by each subclass."""
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]
    dims = None

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        n = self.dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = _tuple(kernel_size, n), _tuple(stride, n), _tuple(dilation, n)
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _tuple(padding, n)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {{'zeros', 'reflect', 'replicate', 'circular'}}, "
                             f"but got padding_mode={padding_mode!r}")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _tuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-zero padding modes: (left, right) pairs, last dim first.
        if padding == "valid":
            pairs = [(0, 0)] * n
        elif padding == "same":
            totals = [d * (k - 1) for d, k in zip(dilation, kernel_size)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        else:
            pairs = [(p, p) for p in padding]
        flat = [p for pair in reversed(pairs) for p in pair]
        # a list for string padding, a tuple otherwise, as PyTorch keeps it
        self._reversed_padding_repeated_twice = flat if isinstance(padding, str) else tuple(flat)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(shape + kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Re-draws the weight and bias with PyTorch's default initialisation."""
        init._default_weight_and_bias_(self.weight, self.bias)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

class _Conv(_ConvNd):
    """Convolution layers: ``padding_mode`` other than 'zeros' pads with ``F.pad`` first."""
    _function = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0,
                         groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._function
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over an input of several channels.

    Args:
        in_channels, out_channels: channels of the input and of the output.
        kernel_size: int or 1-tuple.
        stride, dilation: int or 1-tuple (default 1).
        padding: int, 1-tuple, 'valid' or 'same' (default 0; 'same' needs stride 1).
        groups: independent channel groups; both channel counts must be divisible by it.
        bias: add a learnable bias (default True).
        padding_mode: 'zeros', 'reflect', 'replicate' or 'circular'.
        device, dtype: where and in which dtype the parameters are created.

    Shape: input (N, C_in, L_in) or (C_in, L_in); output (N, C_out, L_out) or (C_out, L_out),
    ``L_out = (L_in + 2 padding - dilation (kernel_size - 1) - 1) // stride + 1``.

    Raises ValueError for bad constructor arguments and RuntimeError from
    :func:`ember.nn.functional.conv1d` for inputs that do not fit, as PyTorch does.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.Conv1d.html
    """
    dims = 1
    _function = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over an input of several channels.

    Args: as :class:`Conv1d`, with ``kernel_size``, ``stride``, ``padding``, ``dilation`` an
    int or an (H, W) pair.

    Shape: input (N, C_in, H_in, W_in) or (C_in, H_in, W_in); output (N, C_out, H_out, W_out)
    or (C_out, H_out, W_out), ``H_out = (H_in + 2 padding[0] - dilation[0] (kernel_size[0] - 1)
    - 1) // stride[0] + 1`` and likewise W.

    Source: https://pytorch.org/docs/stable/generated/torch.nn.Conv2d.html

    Example::

        >>> import ember
        >>> m = ember.nn.Conv2d(1, 6, 5)
        >>> m
        Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
        >>> m(ember.randn(4, 1, 28, 28)).shape
        torch.Size([4, 6, 24, 24])
    """
    dims = 2
    _function = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution over an input of several channels (volumes, video).

    Args: as :class:`Conv1d`, with ``kernel_size``, ``stride``, ``padding``, ``dilation`` an
    int or a (D, H, W) triple.

    Shape: input (N, C_in, D_in, H_in, W_in) or (C_in, D_in, H_in, W_in); output
    (N, C_out, D_out, H_out, W_out), ``D_out = (D_in + 2 padding[0] - dilation[0]
    (kernel_size[0] - 1) - 1) // stride[0] + 1`` and likewise H, W.

    Source: https://pytorch.org/docs/stable/generated/torch.nn.Conv3d.html

    Example::

        >>> import ember
        >>> m = ember.nn.Conv3d(3, 8, 3, stride=(1, 2, 2), padding=1)
        >>> m(ember.randn(2, 3, 4, 16, 16)).shape
        torch.Size([2, 8, 4, 8, 8])
    """
    dims = 3
    _function = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolution layers; ``forward`` takes an optional ``output_size``."""
    _function = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims,
                        dilation=None):
        """The ``output_padding`` that makes the output ``output_size`` (its last
        ``num_spatial_dims`` entries); the layer's own when ``output_size`` is None. ValueError
        for a size of the wrong length or one no output padding reaches."""
        if output_size is None:
            return self.output_padding
        batch_and_channels = 2 if input.ndim == num_spatial_dims + 2 else 1
        sizes = list(output_size)
        if len(sizes) == batch_and_channels + num_spatial_dims:
            sizes = sizes[batch_and_channels:]
        if len(sizes) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.ndim}D input, output_size must have "
                             f"{num_spatial_dims} or {batch_and_channels + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        in_sizes = input.shape[input.ndim - num_spatial_dims:]
        dilation = dilation or (1,) * num_spatial_dims
        smallest = [(i - 1) * s - 2 * p + d * (k - 1) + 1
                    for i, s, p, d, k in zip(in_sizes, stride, padding, dilation, kernel_size)]
        largest = [m + s - 1 for m, s in zip(smallest, stride)]
        if any(not lo <= o <= hi for o, lo, hi in zip(sizes, smallest, largest)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                             f"{smallest} to {largest} (for an input of {input.shape[2:]})")
        output_size = sizes
        return tuple(o - lo for o, lo in zip(output_size, smallest))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, self.dims, self.dilation)
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding,
                                    output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution, the gradient of :class:`Conv1d` with respect to its input.

    Args: as :class:`Conv1d` (``padding`` an int or 1-tuple, ``padding_mode`` 'zeros' only),
    plus ``output_padding`` (int or 1-tuple, smaller than stride or dilation): extra length
    added on one side of the output.

    Shape: input (N, C_in, L_in) or (C_in, L_in); output (N, C_out, L_out) or (C_out, L_out),
    ``L_out = (L_in - 1) stride - 2 padding + dilation (kernel_size - 1) + output_padding + 1``.
    ``forward(input, output_size)`` picks the output padding that gives ``output_size``.

    Source: https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose1d.html
    """
    dims = 1
    _function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution, the gradient of :class:`Conv2d` with respect to its input.

    Args: as :class:`ConvTranspose1d`, with (H, W) pairs.

    Shape: input (N, C_in, H_in, W_in) or (C_in, H_in, W_in); output (N, C_out, H_out, W_out) or
    (C_out, H_out, W_out), ``H_out = (H_in - 1) stride[0] - 2 padding[0] + dilation[0]
    (kernel_size[0] - 1) + output_padding[0] + 1`` and likewise W.

    Source: https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose2d.html

    Example::

        >>> import ember
        >>> m = ember.nn.ConvTranspose2d(16, 8, 3, stride=2)
        >>> m(ember.randn(1, 16, 12, 12), output_size=[25, 25]).shape
        torch.Size([1, 8, 25, 25])
    """
    dims = 2
    _function = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution, the gradient of :class:`Conv3d` with respect to its input.

    Args: as :class:`ConvTranspose1d`, with (D, H, W) triples.

    Shape: input (N, C_in, D_in, H_in, W_in) or (C_in, D_in, H_in, W_in); output
    (N, C_out, D_out, H_out, W_out), ``D_out = (D_in - 1) stride[0] - 2 padding[0] + dilation[0]
    (kernel_size[0] - 1) + output_padding[0] + 1`` and likewise H, W; ``forward(input,
    output_size)`` picks the output padding that gives ``output_size``.

    Source: https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose3d.html
    """
    dims = 3
    _function = staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` is its first input's channel count (dimension 1
    of a batched input, 0 of an unbatched one); it becomes its ``cls_to_become`` then.
    RuntimeError for an input of another rank, ValueError when ``groups`` does not divide
    the channel count."""

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        """The layer's initialisation, once the parameters have a shape (a no-op before)."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """Materializes weight and bias from ``input``'s channel count, then re-draws them."""
        if not self.has_uninitialized_params():
            return
        spatial = len(self.kernel_size)
        if input.ndim not in (spatial + 1, spatial + 2):
            raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        self.in_channels = input.shape[1] if input.ndim == spatial + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        shape = ((self.in_channels, self.out_channels // self.groups) if self.transposed
                 else (self.out_channels, self.in_channels // self.groups))
        with no_grad():
            self.weight.materialize(shape + self.kernel_size)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """:class:`Conv1d` with ``in_channels`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyConv1d.html)."""
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """:class:`Conv2d` with ``in_channels`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyConv2d.html)."""
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """:class:`Conv3d` with ``in_channels`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyConv3d.html)."""
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """:class:`ConvTranspose1d` with ``in_channels`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyConvTranspose1d.html)."""
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """:class:`ConvTranspose2d` with ``in_channels`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyConvTranspose2d.html)."""
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """:class:`ConvTranspose3d` with ``in_channels`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyConvTranspose3d.html)."""
    cls_to_become = ConvTranspose3d
