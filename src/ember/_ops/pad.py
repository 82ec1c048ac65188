"""Padding: ``ConstantPad`` (any value; its adjoint is itself with the pads negated) and
``Pad`` (reflect, replicate, circular) with its adjoint ``PadTranspose``, each the other's
derivative. ``pad`` lists (before, after) pairs from the last dim, as ``F.pad`` takes them;
negative entries crop. ``pad`` is ``F.pad`` (``torch.stft`` pads with it too)."""
import numpy as np

from .. import _backend
from .._result_layout import channels_last_from
from .core import Op, apply, named, zero_link

__all__ = ["pad"]

_NUMPY_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_pairs(ndim, pad):
    """(dim, before, after) for each (before, after) pair of ``pad``, last dim first."""
    return [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def _widths(ndim, pad, sign=1):
    """np.pad widths of the positive (``sign=1``) or negative (``sign=-1``) entries of
    ``pad``."""
    widths = [(0, 0)] * ndim
    for d, before, after in _pad_pairs(ndim, pad):
        widths[d] = (max(sign * before, 0), max(sign * after, 0))
    return widths


def _padded_rule(op, x, pad, sign=1, **attrs):
    """``x``'s shape with the (before, after) pairs of ``pad`` added (``sign=-1``: removed)."""
    shape = list(x.shape)
    for d, before, after in _pad_pairs(x.ndim, pad):
        shape[d] += sign * (before + after)
    return tuple(shape), x.dtype


def _crop(x, pad):
    """``x`` with the negative entries of ``pad`` cut off (a view)."""
    index = [slice(None)] * x.ndim
    for d, before, after in _pad_pairs(x.ndim, pad):
        index[d] = slice(max(-before, 0), x.shape[d] - max(-after, 0))
    return x[tuple(index)]


def _uncrop(g, pad):
    """The adjoint of :func:`_crop`: zeros where the negative entries of ``pad`` cut."""
    widths = _widths(g.ndim, pad, -1)
    return _backend.namespace(g).pad(g, widths) if any(a or b for a, b in widths) else g


def _not_circular(x, pad, mode):
    """torch keeps a channels-last input's format in its reflection and replication kernels;
    circular padding, made of slices and copies, gives a row-major result."""
    return mode != "circular"


class ConstantPad(Op):
    """``x`` padded with ``value``; ``pad`` lists (before, after) pairs from the last dim,
    negative entries crop. Its derivative is itself with the pads negated and value 0."""
    promote = None
    infer = classmethod(_padded_rule)
    save_inputs = False

    @staticmethod
    @channels_last_from(0)
    def forward(x, pad, value):
        widths = _widths(x.ndim, pad)
        x = _crop(x, pad)
        if not any(a or b for a, b in widths):
            return x.copy()
        # (the value as a scalar of x's dtype, cast as PyTorch casts it: a metadata conversion)
        fill = np.asarray(value).astype(x.dtype)[()]
        return _backend.namespace(x).pad(x, widths, constant_values=fill)

    @staticmethod
    def backward(ctx, g):
        return (apply(ConstantPad, g, pad=tuple(-p for p in ctx.attrs["pad"]), value=0),)


class Pad(Op):
    """``x`` padded by ``pad`` ((before, after) pairs from the last dim) in ``mode``:
    "reflect" (mirror, edge not repeated), "replicate" (edge repeated) or "circular" (wrap
    around). Negative entries crop; as in PyTorch, reflection reads the uncropped input
    while wrapping reads the cropped one. Under ``create_graph`` a reflect or replicate
    gradient is tied to ``x`` (a zero second derivative, as torch's)."""
    promote = None
    infer = classmethod(_padded_rule)

    @staticmethod
    @channels_last_from(0, keep=_not_circular)
    def forward(x, pad, mode):
        widths, xp = _widths(x.ndim, pad), _backend.namespace(x)
        if mode == "circular":
            return xp.pad(_crop(x, pad), widths, mode="wrap")
        return _crop(xp.pad(x, widths, mode=_NUMPY_PAD_MODES[mode]), pad).copy()

    @staticmethod
    def backward(ctx, g):
        grad, mode = apply(PadTranspose, g, **ctx.attrs), ctx.attrs["mode"]
        if mode == "circular":
            return (grad,)
        # torch's reflection and replication pad backwards depend on the input, with derivative 0
        return (named(zero_link(grad, ctx.input(0)), _torch_name(mode, ctx.attrs["pad"]) + "BackwardBackward0"),)


class PadTranspose(Op):
    """The adjoint of :class:`Pad`: each padded position's value is added back to the input
    position it was copied from."""
    promote = None
    infer = classmethod(lambda op, g, pad, mode: _padded_rule(op, g, pad, -1))
    save_inputs = False

    @staticmethod
    @channels_last_from(0)
    def forward(g, pad, mode):
        if mode != "circular":
            g = _uncrop(g, pad)
        for d, before, after in _pad_pairs(g.ndim, pad):
            g = _fold(g, d, max(before, 0), max(after, 0), mode)
        return _uncrop(g, pad) if mode == "circular" else g

    @staticmethod
    def backward(ctx, h):
        return (apply(Pad, h, **ctx.attrs),)


def _torch_name(mode, pad):
    """torch's function for a reflect or replicate ``pad``: ``ReflectionPad2D``."""
    return ("Reflection" if mode == "reflect" else "Replication") + f"Pad{len(pad) // 2}D"


def _fold(g, d, before, after, mode):
    """``g`` cut to its core along dim ``d`` with the ``before``/``after`` margins added to
    the positions they were copied from."""
    if not before and not after:
        return g
    size = g.shape[d] - before - after

    def part(start, stop, step=1):
        index = [slice(None)] * g.ndim
        index[d] = slice(start, stop, step)
        return tuple(index)

    core = g[part(before, before + size)].copy()
    left, right = g[part(0, before)], g[part(before + size, None)]
    if mode == "reflect":
        xp = _backend.namespace(g)
        core[part(1, before + 1)] += xp.flip(left, d)
        core[part(size - 1 - after, size - 1)] += xp.flip(right, d)
    elif mode == "replicate":
        core[part(0, 1)] += left.sum(d, keepdims=True)
        core[part(size - 1, size)] += right.sum(d, keepdims=True)
    else:
        core[part(size - before, size)] += left
        core[part(0, after)] += right
    return core


def pad(input, pad, mode="constant", value=None):
    """Pads the last ``len(pad) // 2`` dims; ``pad`` lists (before, after) pairs starting
    from the last dim (https://pytorch.org/docs/stable/generated/torch.nn.functional.pad.html).

    ``mode``: "constant" (``value``, default 0; negative pads crop), "reflect" (mirror
    without repeating the edge), "replicate" (repeat the edge) or "circular" (wrap around).
    The last three pad the last 1, 2 or 3 dims of a batched or unbatched input: (N, C, L)
    or (C, L) with 2 pad entries, (N, C, H, W) or (C, H, W) with 4, and 5-D/4-D with 6.
    Raises RuntimeError for an odd-length or too long ``pad``, reflect padding not smaller
    than the dim, circular padding larger than the dim, a ``value`` with a non-constant
    mode; NotImplementedError for an unknown mode or an unsupported combination.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        _check_crop(input, pad)
        return apply(ConstantPad, input, pad=pad, value=0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    n = len(pad) // 2
    if n > 3 or input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    for i in range(n):
        d = input.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (before >= input.shape[d] or after >= input.shape[d]):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension {d} of input "
                               f"{list(input.shape)}")
        kept = input.shape[d] - max(-before, 0) - max(-after, 0)
        if mode == "circular" and (before > kept or after > kept):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    _check_crop(input, pad)
    out = apply(Pad, input, pad=pad, mode=mode)
    return out if mode == "circular" else named(out, _torch_name(mode, pad) + "Backward0")


def _check_crop(input, pad):
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        if input.shape[d] + pad[2 * i] + pad[2 * i + 1] < 0:
            raise RuntimeError(f"The input size {input.shape[d]}, plus negative padding {pad[2 * i]} and "
                               f"{pad[2 * i + 1]} resulted in a negative output size, which is invalid. "
                               f"Check dimension {d} of your input.")
