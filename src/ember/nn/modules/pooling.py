"""Pooling layers (https://pytorch.org/docs/stable/nn.html#pooling-layers). Each one holds
its arguments and calls the function of the same name in :mod:`ember.nn.functional`, where
the output-size formulas, index convention and errors are documented."""
from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Maximum over windows along L.

    Args: kernel_size, stride (default kernel_size), padding (implicit -inf, at most half
    the kernel), dilation, return_indices (also return the int64 argmax positions along L),
    ceil_mode (keep a last partial window).

    Shape: input (N, C, L_in) or (C, L_in); output (N, C, L_out) or (C, L_out) with
    ``L_out = floor((L_in + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.MaxPool1d.html

    Example::

        >>> import ember
        >>> ember.nn.MaxPool1d(3, stride=2)(ember.randn(20, 16, 50)).shape
        torch.Size([20, 16, 24])
    """

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """Maximum over (kH, kW) windows.

    Args: kernel_size, stride (default kernel_size), padding, dilation, as an int or an
    (H, W) pair; return_indices (also return the int64 flat argmax index ``h * W + w``, for
    :class:`MaxUnpool2d`); ceil_mode.

    Shape: input (N, C, H_in, W_in) or (C, H_in, W_in); output (N, C, H_out, W_out) with
    ``H_out = floor((H_in + 2 * padding[0] - dilation[0] * (kernel_size[0] - 1) - 1) /
    stride[0] + 1)``, likewise W_out.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.MaxPool2d.html

    Example::

        >>> import ember
        >>> ember.nn.MaxPool2d((3, 2), stride=(2, 1))(ember.randn(20, 16, 50, 32)).shape
        torch.Size([20, 16, 24, 31])
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """Maximum over (kD, kH, kW) windows.

    Args: as :class:`MaxPool2d`, with ints or (D, H, W) triples; ``return_indices`` gives the
    int64 flat argmax index ``(d * H + h) * W + w``, for :class:`MaxUnpool3d`.

    Shape: input (N, C, D_in, H_in, W_in) or (C, D_in, H_in, W_in); output
    (N, C, D_out, H_out, W_out), each size as H_out of :class:`MaxPool2d`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.MaxPool3d.html

    Example::

        >>> import ember
        >>> ember.nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2))(ember.randn(20, 16, 50, 44, 31)).shape
        torch.Size([20, 16, 24, 43, 15])
    """

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    """Base of the average poolings (PyTorch's class of the same name)."""

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over windows along L.

    Args: kernel_size, stride (default kernel_size), padding (implicit zeros, at most half
    the kernel), ceil_mode, count_include_pad (count padding zeros in the divisor).

    Shape: input (N, C, L_in) or (C, L_in); output (N, C, L_out) with
    ``L_out = floor((L_in + 2 * padding - kernel_size) / stride + 1)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AvgPool1d.html
    """
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """Mean over (kH, kW) windows.

    Args: kernel_size, stride (default kernel_size), padding; ceil_mode; count_include_pad;
    divisor_override (divide every window by this instead of its size).

    Shape: input (N, C, H_in, W_in) or (C, H_in, W_in); output (N, C, H_out, W_out) with
    ``H_out = floor((H_in + 2 * padding[0] - kernel_size[0]) / stride[0] + 1)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AvgPool2d.html
    """
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        Module.__init__(self)  # (not super(): AvgPool3d shares this __init__)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolNd):
    """Mean over (kD, kH, kW) windows.

    Args: as :class:`AvgPool2d`, with ints or (D, H, W) triples.

    Shape: input (N, C, D_in, H_in, W_in) or (C, D_in, H_in, W_in); output
    (N, C, D_out, H_out, W_out) with ``D_out = floor((D_in + 2 * padding[0] - kernel_size[0]) /
    stride[0] + 1)`` and likewise H, W. dtypes as :func:`ember.nn.functional.avg_pool3d`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AvgPool3d.html
    """
    __constants__ = AvgPool2d.__constants__
    __init__ = AvgPool2d.__init__  # the same arguments, kept as given

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptivePoolNd):
    """Base of the adaptive average poolings (PyTorch's class of the same name)."""


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Mean over L_out windows that tile L: window i is
    ``[floor(i * L / L_out), ceil((i + 1) * L / L_out))``.

    Shape: input (N, C, L) or (C, L); output (N, C, L_out) or (C, L_out).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AdaptiveAvgPool1d.html
    """

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Mean over an H_out x W_out grid of windows tiling the input; ``output_size`` is an
    int or (H_out, W_out), None keeping that input size.

    Shape: input (N, C, H, W) or (C, H, W); output (N, C, H_out, W_out).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AdaptiveAvgPool2d.html

    Example::

        >>> import ember
        >>> ember.nn.AdaptiveAvgPool2d((5, None))(ember.randn(1, 64, 8, 9)).shape
        torch.Size([1, 64, 5, 9])
    """

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Mean over a D_out x H_out x W_out grid of windows tiling the input; ``output_size`` is
    an int or (D_out, H_out, W_out), None keeping that input size.

    Shape: input (N, C, D, H, W) or (C, D, H, W); output (N, C, D_out, H_out, W_out).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AdaptiveAvgPool3d.html
    """

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Maximum over the windows of :class:`AdaptiveAvgPool1d`; ``return_indices`` also
    returns the int64 argmax positions along L.

    Shape: input (N, C, L) or (C, L); output (N, C, L_out) or (C, L_out).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AdaptiveMaxPool1d.html
    """

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Maximum over the windows of :class:`AdaptiveAvgPool2d`; ``return_indices`` also
    returns the int64 flat argmax indices ``h * W + w``.

    Shape: input (N, C, H, W) or (C, H, W); output (N, C, H_out, W_out).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AdaptiveMaxPool2d.html
    """

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Maximum over the windows of :class:`AdaptiveAvgPool3d`; ``return_indices`` also
    returns the int64 flat argmax indices ``(d * H + h) * W + w``.

    Shape: input (N, C, D, H, W) or (C, D, H, W); output (N, C, D_out, H_out, W_out).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.AdaptiveMaxPool3d.html
    """

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool1d`: each value goes to its index, zeros elsewhere.

    Shape: input and indices (N, C, L_in) or (C, L_in); output (N, C, L_out) with
    ``L_out = (L_in - 1) * stride - 2 * padding + kernel_size`` or ``output_size`` given
    to ``forward``. Source: https://pytorch.org/docs/stable/generated/torch.nn.MaxUnpool1d.html
    """

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool2d` (built with ``return_indices=True``): each
    value goes to its flat index, zeros elsewhere.

    Shape: input and indices (N, C, H_in, W_in) or (C, H_in, W_in); output
    (N, C, H_out, W_out) with ``H_out = (H_in - 1) * stride[0] - 2 * padding[0] +
    kernel_size[0]`` or ``output_size`` given to ``forward``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.MaxUnpool2d.html

    Example::

        >>> import ember
        >>> pool, unpool = ember.nn.MaxPool2d(2, return_indices=True), ember.nn.MaxUnpool2d(2)
        >>> x = ember.tensor([[[[1., 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]]])
        >>> unpool(*pool(x))[0, 0, 1]
        tensor([0., 6., 0., 8.])
    """

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride if stride is not None else kernel_size)
        self.padding = _pair(padding)

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool3d` (built with ``return_indices=True``): each value
    goes to its flat index, zeros elsewhere.

    Shape: input and indices (N, C, D_in, H_in, W_in) or (C, D_in, H_in, W_in); output
    (N, C, D_out, H_out, W_out) with ``D_out = (D_in - 1) * stride[0] - 2 * padding[0] +
    kernel_size[0]``, likewise H, W, or ``output_size`` given to ``forward``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.MaxUnpool3d.html
    """

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _triple(kernel_size)
        self.stride = _triple(stride if stride is not None else kernel_size)
        self.padding = _triple(padding)

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(sum of x ** p over the window) ** (1 / p)`` along L.
    Shape: input (N, C, L_in) or (C, L_in); output (N, C, L_out) as :class:`AvgPool1d`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.LPPool1d.html"""

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (kH, kW) windows. Shape: input (N, C, H_in, W_in) or
    (C, H_in, W_in); output as :class:`AvgPool2d`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.LPPool2d.html"""

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over (kD, kH, kW) windows. Shape: input (N, C, D_in, H_in, W_in)
    or (C, D_in, H_in, W_in); output as :class:`AvgPool3d`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.LPPool3d.html"""

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _FractionalMaxPoolNd(Module):
    """Holds a d-D fractional max pooling's arguments (``_tuple`` makes them d-tuples) and checks
    them as torch does: ValueError for neither or both of ``output_size`` and ``output_ratio``,
    or a ratio outside (0, 1)."""
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size = self._tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = self._tuple(output_size) if output_size is not None else None
        self.output_ratio = self._tuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max over (kH, kW) windows at pseudo-random fractional strides (Graham, 2014): (N, C, H, W)
    or (C, H, W) -> (N, C, oH, oW), see :func:`ember.nn.functional.fractional_max_pool2d`. Give
    ``output_size`` (oH, oW) or ``output_ratio`` in (0, 1) (ValueError for neither, both, or a
    ratio outside); ``_random_samples`` (N, C, 2) fixes the windows, drawn afresh per call otherwise.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.FractionalMaxPool2d.html"""
    _tuple = staticmethod(_pair)

    def forward(self, input):
        return F.fractional_max_pool2d(input, self.kernel_size, self.output_size, self.output_ratio,
                                       self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max over (kT, kH, kW) windows at pseudo-random fractional strides (Graham, 2014):
    (N, C, T, H, W) or (C, T, H, W) -> (N, C, oT, oH, oW), see
    :func:`ember.nn.functional.fractional_max_pool3d`. Give ``output_size`` (oT, oH, oW) or
    ``output_ratio`` in (0, 1) (ValueError for neither, both, a ratio outside, or a kernel size
    below 1); ``_random_samples`` (N, C, 3) fixes the windows, drawn afresh per call otherwise.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.FractionalMaxPool3d.html"""
    _tuple = staticmethod(_triple)

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        if (isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples)

    def forward(self, input):
        return F.fractional_max_pool3d(input, self.kernel_size, self.output_size, self.output_ratio,
                                       self.return_indices, _random_samples=self._random_samples)
