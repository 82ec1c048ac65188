"""``clamp``/``clip`` and their op entry: bounds that are numbers or broadcasting tensors
(https://pytorch.org/docs/stable/generated/torch.clamp.html)."""
import numpy as np

from .._backend import namespace
from .._tensor import Tensor
from .args import invalid_combination
from .core import Op, elementwise_rule, apply
from .pointwise_binary import Where, _check_numbers, _refuse_bool, with_out
from .parser import parsed

__all__ = ["clamp", "clip", "clamp_min", "clamp_max"]


@parsed
def clamp(input, min=None, max=None, *, out=None):
    """Limits ``input`` to [min, max] (numbers or broadcasting tensors); RuntimeError if both are None,
    NotImplementedError for bool as torch's kernels (https://pytorch.org/docs/stable/generated/torch.clamp.html)."""
    return _clamp("clamp", input, min, max, out)


def clip(input, min=None, max=None, *, out=None):
    """``clamp`` under NumPy's name (https://pytorch.org/docs/stable/generated/torch.clip.html)."""
    return _clamp("clip", input, min, max, out)


_CLAMP_SIGNATURES = (" * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                     " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")


def _clamp(name, input, min, max, out):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _mixed_bounds(min, max) or _mixed_bounds(max, min):
        # torch's parser takes both bounds as Tensors or both as Numbers (a 0-dim tensor
        # without grad passes for a Number), never one of each
        raise TypeError(invalid_combination(name, (input, min, max), _CLAMP_SIGNATURES))
    _check_numbers(input, min, max)
    if isinstance(min, Tensor) + isinstance(max, Tensor) != 1:  # one tensor bound: maximum/minimum (bool too)
        kind = "" if isinstance(min, Tensor) else f"{'_min' * (max is None)}{'_max' * (min is None)}_scalar"
        _refuse_bool(input, *(b for b in (min, max) if b is not None), kernel_name=f"clamp{kind}_cpu")
    return with_out(apply(Clamp, input, min, max), out, "clamp")


def _mixed_bounds(number, tensor):
    return (number is not None and not isinstance(number, Tensor) and isinstance(tensor, Tensor)
            and (tensor.ndim > 0 or tensor.requires_grad))


def clamp_min(input, min):
    """``clamp(input, min=min)`` (https://pytorch.org/docs/stable/generated/torch.clamp_min.html)."""
    return clamp(input, min=min)


def clamp_max(input, max):
    """``clamp(input, max=max)`` (https://pytorch.org/docs/stable/generated/torch.clamp_max.html)."""
    return clamp(input, max=max)


class Clamp(Op):
    """``clamp(x, min, max)``; each bound is None, a number or a broadcasting tensor. With
    ``min > max`` every element becomes ``max``. Gradients follow PyTorch: ``x`` gets it where
    ``min <= x <= max`` (ties included), a bound where it is the one that took effect."""
    complex_error = (NotImplementedError, "clamp is not supported for complex types")
    infer = classmethod(elementwise_rule)

    @staticmethod
    def forward(x, min, max):
        xp = namespace(x, min, max)
        # x itself on a tie (NumPy returns the second argument): -0.0 stays, as torch's; NumPy's
        # float16 loops return the first
        tie = (lambda r, x: xp.where(r == x, x, r)) if getattr(x, "dtype", None) == np.float16 else (lambda r, x: r)
        if min is not None:
            x = tie(xp.maximum(min, x), x)
        return x if max is None else tie(xp.minimum(max, x), x)

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.inputs
        need_x, need_lo, need_hi = ctx.needs_input_grad
        zero = g.new_zeros(())
        keep = None
        if lo is not None:
            keep = x >= lo
        if hi is not None:
            keep = (x <= hi) if keep is None else keep & (x <= hi)
        gx = apply(Where, keep, g, zero) if need_x else None
        glo = ghi = None
        if need_lo:
            below = x < lo if hi is None else (x < lo) & (lo < hi)
            glo = apply(Where, below, g, zero)
        if need_hi:
            above = x > hi if lo is None else (x > hi) | (hi < lo)
            ghi = apply(Where, above, g, zero)
        return gx, glo, ghi
