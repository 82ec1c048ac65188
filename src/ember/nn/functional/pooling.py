"""Pooling functions of ``ember.nn.functional``
(https://pytorch.org/docs/stable/nn.functional.html#pooling-functions).

Shapes: 1-D forms take (N, C, L) or (C, L); 2-D forms (N, C, H, W) or (C, H, W); 3-D forms
(N, C, D, H, W) or (C, D, H, W). The window
kernels are the ops of :mod:`ember._ops.pool`; this file turns PyTorch's arguments into
tuples and raises PyTorch's errors (RuntimeError naming the sizes, as its ATen checks do).
Max-pool indices follow PyTorch: flat positions in each input plane (``h * W + w``; in 3-D
``(d * H + h) * W + w``).
"""
from ..._backend import namespace
from ..._ops.linalg import matmul
from ..._ops import pool as _pool
from ..._ops.core import _type_name, apply, named, reads_indices
from ..._tensor import Tensor
from ...autograd.grad_mode import STATE
from ..._result_layout import in_input_format

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "max_unpool1d", "max_unpool2d", "lp_pool1d", "lp_pool2d",
    "max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "max_unpool3d", "lp_pool3d",
]

def _tuple(value, name, what, n, default=None):
    """``value`` as an n-tuple, (H, W) or (D, H, W) (``default`` when omitted); PyTorch's
    RuntimeError for any other length."""
    if default is not None and (value is None or (isinstance(value, (tuple, list)) and not value)):
        return default
    if isinstance(value, (tuple, list)):
        if len(value) not in (1, n):
            rule = {"stride": "must either be omitted, a single int",
                    "dilation": "must be either a single int"}.get(what, "must either be a single int")
            if name == "avg_pool3d":  # (its messages say "must be", not "must either be")
                rule = rule.replace("either ", "")
            raise RuntimeError(f"{name}: {what} {rule}, or a tuple of {('two', 'three')[n - 2]} ints")
        return tuple(int(v) for v in value) * (n // len(value))
    return (int(value),) * n


def _single(value, name, what, default=None):
    """``value`` as a 1-tuple (``default`` when omitted); PyTorch's RuntimeError for any
    other length."""
    if default is not None and (value is None or (isinstance(value, (tuple, list)) and not value)):
        return default
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(f"{name}() argument '{what}' should contain one int (got {len(value)})")
        return (int(value[0]),)
    return (int(value),)


def _output_sizes(shape, kernel, stride, padding, dilation, ceil_mode, name=None):
    """PyTorch's ``pooling_output_shape`` and ``pool2d_shape_check``/``pool3d_shape_check``
    for 2-D/3-D windows, in its order of checks (``name``: the 3-D function, for its
    messages)."""
    n = len(kernel)
    axes = ("T", "H", "W")[-n:]
    sizes = []
    for size, k, s, p, d in zip(shape[-n:], kernel, stride, padding, dilation):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        effective = (k - 1) * d + 1
        if p > int(effective / 2):  # C++ division: truncates towards zero
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
        sizes.append(_pool.pooled_size(size, k, s, p, d, ceil_mode))
    for what, prefix, values in (("kernel size", "k", kernel), ("stride", "d", stride),
                                 ("dilation", "dilation", dilation)):
        if min(values) <= 0:
            shown = " ".join(f"{prefix}{a}: {v}" for a, v in zip(axes, values))
            raise RuntimeError(f"{what} should be greater than zero, but got {shown}")
    if n == 2 and (len(shape) not in (3, 4) or 0 in shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{list(shape)}")
    if n == 3 and 0 in shape[-4:]:  # (torch prints the zero length where it means its dimension)
        fn = "avg_pool3d()" if name == "avg_pool3d" else "max_pool3d_with_indices_out_cpu_template()"
        raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length, but input "
                           f"has a shape of {list(shape)} and non-batch dimension 0 has length zero!")
    if name == "avg_pool3d" and any(size < k for size, k in zip(shape[-3:], kernel)):
        raise RuntimeError("input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})"
                           .format(*shape[-3:], *kernel))
    if min(sizes) < 1:
        channels = shape[-n - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (channels, *shape[-n:])))}). "
                           f"Calculated output size: ({'x'.join(map(str, (channels, *sizes)))}). "
                           "Output size is too small")
    return sizes


# The grad_fn torch's adaptive pooling shows, by spatial rank: 1-D runs as 2-D and squeezes.
_TORCH_NODE = {1: "SqueezeBackward1", 2: "{}2DBackward0", 3: "{}3DBackward0"}


def _max_pool(input, attrs, return_indices):
    if input.dtype.name == "bool":
        rank = max(len(attrs["kernel_size"]), 2)
        raise NotImplementedError(f"\"max_pool{rank}d\" not implemented for 'Bool'")
    argmax = None
    if STATE.enabled and input.requires_grad:
        argmax = apply(_pool.MaxPoolIndices, input, **attrs, flat=False)
    out = apply(_pool.MaxPool, input, argmax, **attrs)
    if not return_indices:
        return out
    indices = apply(_pool.MaxPoolIndices, input, **attrs)
    return reads_indices(out, [indices]), indices  # torch's backward reads them: no writes before it


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum over sliding windows (https://pytorch.org/docs/stable/generated/torch.nn.functional.max_pool2d.html).

    Shapes: input (N, C, H, W) or (C, H, W); output (N, C, H_out, W_out) with
    ``H_out = floor((H + 2 * padding - dilation * (kernel_size - 1) - 1) / stride) + 1``
    (``ceil`` with ``ceil_mode``, dropping a last window that would start in the right
    padding). ``stride`` defaults to ``kernel_size``. With ``return_indices`` also the int64
    flat index ``h * W + w`` of each maximum (for :func:`max_unpool2d`). The gradient goes to
    the first maximum of each window. Any real or integer dtype but bool.

    Raises RuntimeError for padding above half the effective kernel ("pad should be at most
    half of effective kernel size"), non-positive kernel, stride or dilation, an input that
    is not 3-D/4-D or empty, and windows larger than the padded input ("Output size is too
    small").
    """
    kernel = _tuple(kernel_size, "max_pool2d", "kernel_size", 2)
    stride = _tuple(stride, "max_pool2d", "stride", 2, default=kernel)
    padding = _tuple(padding, "max_pool2d", "padding", 2)
    dilation = _tuple(dilation, "max_pool2d", "dilation", 2)
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    _output_sizes(tuple(input.shape), kernel, stride, padding, dilation, ceil_mode)
    return _max_pool(input, dict(kernel_size=kernel, stride=stride, padding=padding,
                                 dilation=dilation, ceil_mode=bool(ceil_mode)), return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum over sliding windows along L (https://pytorch.org/docs/stable/generated/torch.nn.functional.max_pool1d.html).

    Shapes: input (N, C, L) or (C, L); output (N, C, L_out) with L_out as for
    :func:`max_pool2d`. ``padding`` may be at most ``kernel_size // 2``. Indices are
    positions along L. RuntimeError for bad arguments or a too small input, with PyTorch's
    ``max_pool1d()`` messages.
    """
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{list(input.shape)}")
    (k,), (p,), (d,) = (_one(v, what) for v, what in
                        ((kernel_size, "kernel_size"), (padding, "padding"), (dilation, "dilation")))
    omitted = stride is None or isinstance(stride, (tuple, list)) and not stride
    (s,) = (k,) if omitted else _one(stride, "stride")
    for value, what in ((k, "kernel_size"), (s, "stride")):
        if value <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {value}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool.pooled_size(input.shape[-1], k, s, p, d, ceil_mode)
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    return _max_pool(input, dict(kernel_size=(k,), stride=(s,), padding=(p,), dilation=(d,),
                                 ceil_mode=bool(ceil_mode)), return_indices)


def _one(value, what):
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(f"max_pool1d() {what} must be an int, list of ints or tuple of ints of "
                               f"size 1 but got size {len(value)}")
        return (int(value[0]),)
    return (int(value),)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool1d` returning (values, indices).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.max_pool1d.html"""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool2d` returning (values, indices).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.max_pool2d.html"""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_pool(input, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, shape,
              name=None):
    """Checks on ``shape``, the input's (..., H, W) shape (or (..., D, H, W) for ``name``
    'avg_pool3d'), then pools the input itself."""
    n = len(kernel)
    if n == 2 and len(shape) < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{len(shape)}, "
                         f"{len(shape) - 1}], but got -3)")
    _output_sizes(shape, kernel, stride, padding, (1,) * n, ceil_mode, name)
    if input.dtype.name == "bool" and n == 2:
        raise NotImplementedError("\"avg_pool2d\" not implemented for 'Bool'")
    if n == 3 and input.dtype.name not in ("float32", "float64", "bfloat16", "int64"):  # torch's CPU kernel's
        raise NotImplementedError(f"\"avg_pool3d_out_frame\" not implemented for '{_type_name(input.dtype)}'")
    k = input.ndim - len(shape) + n
    return apply(_pool.AvgPool, input, kernel_size=kernel[-k:], stride=stride[-k:],
                 padding=padding[-k:], ceil_mode=bool(ceil_mode),
                 count_include_pad=bool(count_include_pad), divisor_override=divisor_override)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over sliding windows (https://pytorch.org/docs/stable/generated/torch.nn.functional.avg_pool2d.html).

    Shapes: input (N, C, H, W) or (C, H, W); output (N, C, H_out, W_out) sized as in
    :func:`max_pool2d` (no dilation). Each window is divided by its element count, zero
    padding included when ``count_include_pad``, never the ``ceil_mode`` overhang, or by
    ``divisor_override``. Integer inputs divide with truncation. Errors as
    :func:`max_pool2d`, plus RuntimeError("divisor must be not zero").
    """
    kernel = _tuple(kernel_size, "avg_pool2d", "kernel_size", 2)
    stride = _tuple(stride, "avg_pool2d", "stride", 2, default=kernel)
    padding = _tuple(padding, "avg_pool2d", "padding", 2)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _avg_pool(input, kernel, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, tuple(input.shape))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over sliding windows along L (https://pytorch.org/docs/stable/generated/torch.nn.functional.avg_pool1d.html).

    Shapes: input (N, C, L) or (C, L); output (N, C, L_out). Rules and errors as
    :func:`avg_pool2d` (messages read the input as (N, C, 1, L), as PyTorch's do).
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for "
                           "argument #1 'self' (while checking arguments for avg_pool1d)")
    (k,) = _single(kernel_size, "avg_pool1d", "kernel_size")
    (s,) = _single(stride, "avg_pool1d", "stride", default=(k,))
    (p,) = _single(padding, "avg_pool1d", "padding")
    shape = tuple(input.shape[:-1]) + (1, input.shape[-1])
    return _avg_pool(input, (1, k), (1, s), (0, p), ceil_mode, count_include_pad, None, shape)


def _check_rank3d(input):
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum over (kD, kH, kW) windows (https://pytorch.org/docs/stable/generated/torch.nn.functional.max_pool3d.html).

    Shapes: input (N, C, D, H, W) or (C, D, H, W); output (N, C, D_out, H_out, W_out), each
    size as in :func:`max_pool2d`. ``kernel_size``, ``stride`` (default ``kernel_size``),
    ``padding``, ``dilation``: an int or a (D, H, W) triple. With ``return_indices`` also the
    int64 flat index ``(d * H + h) * W + w`` of each maximum (for :func:`max_unpool3d`).
    Any real or integer dtype but bool. Errors as :func:`max_pool2d` (RuntimeError with
    PyTorch's 3-D messages).
    """
    kernel = _tuple(kernel_size, "max_pool3d", "kernel_size", 3)
    stride = _tuple(stride, "max_pool3d", "stride", 3, default=kernel)
    padding = _tuple(padding, "max_pool3d", "padding", 3)
    dilation = _tuple(dilation, "max_pool3d", "dilation", 3)
    _check_rank3d(input)
    _output_sizes(tuple(input.shape), kernel, stride, padding, dilation, ceil_mode, "max_pool3d")
    return _max_pool(input, dict(kernel_size=kernel, stride=stride, padding=padding,
                                 dilation=dilation, ceil_mode=bool(ceil_mode)), return_indices)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """:func:`max_pool3d` returning (values, indices).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.max_pool3d.html"""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over (kD, kH, kW) windows (https://pytorch.org/docs/stable/generated/torch.nn.functional.avg_pool3d.html).

    Shapes: input (N, C, D, H, W) or (C, D, H, W); output (N, C, D_out, H_out, W_out) sized as
    in :func:`max_pool3d` (no dilation); divisors as :func:`avg_pool2d`. dtypes: float32,
    float64, bfloat16 and int64 (truncating division), as PyTorch's CPU kernel; others raise
    NotImplementedError. RuntimeError as :func:`max_pool3d`, plus "input image (T: .. H: ..
    W: ..) smaller than kernel size" and "divisor must be not zero".
    """
    kernel = _tuple(kernel_size, "avg_pool3d", "kernel_size", 3)
    stride = _tuple(stride, "avg_pool3d", "stride", 3, default=kernel)
    padding = _tuple(padding, "avg_pool3d", "padding", 3)
    _check_rank3d(input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _avg_pool(input, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     tuple(input.shape), "avg_pool3d")


# ---- adaptive pooling --------------------------------------------------------------------------
def _adaptive_size(output_size, input, n, name):
    """``output_size`` as an n-tuple (None entries take the input's size)."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != n:
            if n == 1:
                raise RuntimeError(f"{name}() argument 'output_size' should contain one int "
                                   f"(got {len(output_size)})")
            if name == "adaptive_avg_pool3d":
                raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}")
        sizes = tuple(output_size)
    else:
        sizes = (output_size,) * n
    return tuple(input.shape[input.ndim - n + i] if v is None else int(v) for i, v in enumerate(sizes))


def _check_adaptive(input, n, name, sizes):
    """PyTorch's checks, with messages that read a 1-D input as (N, C, 1, L) as its do."""
    if input.ndim not in (n + 1, n + 2):
        if n == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                               f"for argument #1 'self' (while checking arguments for {name})")
        sep = ": " if "max" in name else " "
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got{sep}{list(input.shape)}")
    shape = list(input.shape) if n > 1 else list(input.shape)[:-1] + [1, input.shape[-1]]
    name2d = name if n == 3 else name[:-2] + "2d"
    for d in range(len(shape) - max(n, 2) - 1, len(shape)):
        if shape[d] == 0:
            raise RuntimeError(f"{name2d}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {shape} with dimension {d} being empty")
    if min(sizes) < 0:
        if "max" in name:
            shape = list(input.shape)[:input.ndim - n] + list(sizes)
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {shape}")
        shown = ", ".join(str(v) for v in ((1,) * (2 - n) + sizes))
        if n == 3:  # (PyTorch's spacing)
            shown = f"{sizes[0]}, {sizes[1]},{sizes[2]}"
        raise RuntimeError(f"adaptive_avg_pool{max(n, 2)}d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{shown}}}")
    if not input.dtype.is_floating_point:
        kernel = name + "_cpu" if n == 3 else name2d
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'")


def _averaging_matrix(size, out, like):
    """(out, size) matrix whose row i averages PyTorch's adaptive window i, in the dtype and
    array namespace of the tensor ``like``."""
    xp = namespace(like._data)
    start, end = _pool.adaptive_ranges(size, out, xp)
    positions = xp.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return Tensor._make((inside / (end - start)[:, None]).astype(like.dtype.np))


def _adaptive_avg(input, n, output_size, name):
    sizes = _adaptive_size(output_size, input, n, name)
    _check_adaptive(input, n, name, sizes)
    spatial = tuple(input.shape[input.ndim - n:])
    if all(o == 1 for o in sizes):
        out = input.mean(tuple(range(-n, 0)), keepdim=True)
        return named(out, "SqueezeBackward1") if n == 1 else in_input_format(out, input, ranks=(4,))
    if sizes == spatial:
        out = input.clone()
    else:  # adaptive averaging is linear and separable: one small matrix product per spatial dim
        out = matmul(input, _averaging_matrix(spatial[-1], sizes[-1], input).mT)
        if n >= 2:
            out = matmul(_averaging_matrix(spatial[-2], sizes[-2], input), out)
        if n == 3:  # depth: (D, H_out * W_out) planes
            lead = tuple(out.shape[:-3])
            planes = lead + (spatial[0], sizes[1] * sizes[2])
            out = matmul(_averaging_matrix(spatial[0], sizes[0], input), out.reshape(planes))
            out = out.reshape(lead + sizes)
    if STATE.enabled and input.requires_grad:
        out = apply(_pool.TiedToInput, out, input)
    return named(in_input_format(out, input, ranks=(4,)), _TORCH_NODE[n].format("AdaptiveAvgPool"))


def adaptive_avg_pool1d(input, output_size):
    """Mean over L_out windows that tile L (https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_avg_pool1d.html).

    Window i spans ``[floor(i * L / L_out), ceil((i + 1) * L / L_out))``. Shapes: input
    (N, C, L) or (C, L); output (N, C, L_out). Floating inputs only (NotImplementedError).
    """
    return _adaptive_avg(input, 1, output_size, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """Mean over an H_out x W_out grid of windows that tile the input
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_avg_pool2d.html).

    ``output_size`` is an int or (H_out, W_out), None keeping that input size. Shapes: input
    (N, C, H, W) or (C, H, W); output (N, C, H_out, W_out). RuntimeError for other ranks,
    empty planes or negative sizes; NotImplementedError for integer inputs.
    """
    return _adaptive_avg(input, 2, output_size, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """Mean over a D_out x H_out x W_out grid of windows that tile the input
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_avg_pool3d.html).

    ``output_size`` is an int or (D_out, H_out, W_out), None keeping that input size. Shapes:
    input (N, C, D, H, W) or (C, D, H, W); output (N, C, D_out, H_out, W_out). Errors as
    :func:`adaptive_avg_pool2d`, with PyTorch's 3-D messages.
    """
    return _adaptive_avg(input, 3, output_size, "adaptive_avg_pool3d")


def _adaptive_max(input, n, output_size, return_indices, name):
    sizes = _adaptive_size(output_size, input, n, name)
    _check_adaptive(input, n, name, sizes)
    index = apply(_pool.AdaptiveMaxPoolIndices, input, output_size=sizes)
    out = apply(_pool.GatherPlanes, input, index=index._data, spatial_ndim=n)
    out = named(reads_indices(out, [index]), _TORCH_NODE[n].format("AdaptiveMaxPool"))
    return (out, index) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Maximum over adaptive windows along L (windows as :func:`adaptive_avg_pool1d`),
    optionally with int64 indices along L
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_max_pool1d.html).
    """
    return _adaptive_max(input, 1, output_size, return_indices, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maximum over adaptive windows (as :func:`adaptive_avg_pool2d`), optionally with the
    int64 flat indices ``h * W + w`` (https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_max_pool2d.html).
    The gradient goes to the first maximum of each window.
    """
    return _adaptive_max(input, 2, output_size, return_indices, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Maximum over adaptive windows (as :func:`adaptive_avg_pool3d`), optionally with the
    int64 flat indices ``(d * H + h) * W + w``
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_max_pool3d.html).
    """
    return _adaptive_max(input, 3, output_size, return_indices, "adaptive_max_pool3d")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool3d` returning (values, indices).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_max_pool3d.html"""
    return adaptive_max_pool3d(input, output_size, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool1d` returning (values, indices).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_max_pool1d.html"""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool2d` returning (values, indices).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.adaptive_max_pool2d.html"""
    return adaptive_max_pool2d(input, output_size, True)


# ---- unpooling ---------------------------------------------------------------------------------
def _unpool_size(input, kernel, stride, padding, output_size):
    """PyTorch's ``_unpool_output_size``: the default ``(in - 1) * stride - 2 * padding +
    kernel``, or ``output_size`` checked to lie strictly within one stride of it."""
    n = len(kernel)
    default = [(input.shape[input.ndim - n + d] - 1) * stride[d] - 2 * padding[d] + kernel[d]
               for d in range(n)]
    if output_size is None:
        return tuple(default)
    output_size = list(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but "
                         f"it has a length of '{len(output_size)}'")
    for d in range(n):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between '
                             f"{low} and {high})")
    return tuple(int(v) for v in output_size)


def _max_unpool(input, indices, kernel, stride, padding, output_size, n):
    rank = max(n, 2)  # (1-D runs as 2-D in PyTorch, and says so)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{rank}d should be a {rank + 1}d or {rank + 2}d Tensor, but "
                           f"got a tensor with {input.ndim + rank - n} dimensions.")
    if indices.dtype.name != "int64":
        got = "" if n == 3 else f" but got: {_type_name(indices.dtype)}"
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    size = _unpool_size(input, kernel, stride, padding, output_size)
    # the kernel checks the indices' range (so a compiled replay does too); the backward reads
    # them: writing them in place before it raises, as torch's
    out = reads_indices(apply(_pool.ScatterPlanes, input, index=indices._data, plane_shape=size,
                              accumulate=False), [indices])
    return in_input_format(out, input, ranks=(4,))  # (torch's max_unpool3d is row-major)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool2d`: each value is put at its index in a zero plane
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.max_unpool2d.html).

    Shapes: input and indices (N, C, H, W) or (C, H, W); output (N, C, H_out, W_out) with
    ``H_out = (H - 1) * stride - 2 * padding + kernel_size`` unless ``output_size`` says
    otherwise. RuntimeError for non-int64 or misshapen indices and indices outside the
    plane; ValueError for an ``output_size`` of the wrong length or range.
    """
    kernel = _tuple(kernel_size, "max_unpool2d", "kernel_size", 2)
    stride = _tuple(stride, "max_unpool2d", "stride", 2, default=kernel)
    padding = _tuple(padding, "max_unpool2d", "padding", 2)
    return _max_unpool(input, indices, kernel, stride, padding, output_size, 2)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool1d`: input and indices (N, C, L) or (C, L); output
    (N, C, L_out) with ``L_out = (L - 1) * stride - 2 * padding + kernel_size``
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.max_unpool1d.html)."""
    kernel = _single(kernel_size, "max_unpool1d", "kernel_size")
    stride = _single(stride, "max_unpool1d", "stride", default=kernel)
    padding = _single(padding, "max_unpool1d", "padding")
    return _max_unpool(input, indices, kernel, stride, padding, output_size, 1)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool3d`: input and indices (N, C, D, H, W) or (C, D, H, W);
    output (N, C, D_out, H_out, W_out) with ``D_out = (D - 1) * stride[0] - 2 * padding[0] +
    kernel_size[0]`` and likewise H, W, unless ``output_size`` says otherwise; errors as
    :func:`max_unpool2d` (https://pytorch.org/docs/stable/generated/torch.nn.functional.max_unpool3d.html)."""
    kernel = _tuple(kernel_size, "max_unpool3d", "kernel_size", 3)
    stride = _tuple(stride, "max_unpool3d", "stride", 3, default=kernel)
    padding = _tuple(padding, "max_unpool3d", "padding", 3)
    return _max_unpool(input, indices, kernel, stride, padding, output_size, 3)


# ---- power-average pooling ---------------------------------------------------------------------
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over the window of x ** p) ** (1 / p)``, computed as PyTorch does from an
    average pool (https://pytorch.org/docs/stable/generated/torch.nn.functional.lp_pool2d.html).
    Shapes as :func:`avg_pool2d`."""
    kh, kw = _tuple(kernel_size, "lp_pool2d", "kernel_size", 2)
    out = avg_pool2d(input.pow(norm_type), (kh, kw), stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kh * kw).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The 1-D :func:`lp_pool2d`: input (N, C, L) or (C, L).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.lp_pool1d.html"""
    (k,) = _single(kernel_size, "lp_pool1d", "kernel_size")
    out = avg_pool1d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(k).pow(1.0 / norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The 3-D :func:`lp_pool2d`: input (N, C, D, H, W) or (C, D, H, W); output as
    :func:`avg_pool3d`. Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.lp_pool3d.html"""
    kd, kh, kw = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 3  # (torch's ValueError)
    out = avg_pool3d(input.pow(norm_type), (kd, kh, kw), stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kd * kh * kw).pow(1.0 / norm_type)
