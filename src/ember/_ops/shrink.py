"""Hardshrink and softshrink as op entries (PyTorch's ``hardshrink``/``softshrink``,
https://pytorch.org/docs/stable/generated/torch.nn.Hardshrink.html and ``Softshrink``): zero
on ``[-lambd, lambd]``, else ``x`` (hard) or ``x`` moved ``lambd`` towards zero (soft); NaN
stays NaN. Their gradient is ``g`` outside the interval (NaN included) and 0 inside; as in
PyTorch, under ``create_graph`` it is tied to ``x`` (``zero_link``), so a second derivative
is zeros rather than an error."""
from .._backend import namespace
from .core import Op, apply, like_input, zero_link
from .pointwise_binary import Where
from .refusals import check_attribute, float_only

__all__ = ["HardshrinkForward", "SoftshrinkForward", "hardshrink"]


def _inside(x, lambd):
    return (x >= -lambd) & (x <= lambd)


class HardshrinkForward(Op):
    name = "Hardshrink"
    promote = None
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, lambd=0.5):
        return namespace(x).where(_inside(x, lambd), x.dtype.type(0), x)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        return (zero_link(apply(Where, _inside(x, ctx.attrs.get("lambd", 0.5)), 0, g), x),)


class SoftshrinkForward(Op):
    name = "Softshrink"
    promote = None
    infer = classmethod(like_input)
    at_float32 = True  # (torch's opmath)

    @staticmethod
    def forward(x, lambd=0.5):
        xp, step = namespace(x), x.dtype.type(lambd)
        # (inside: ``x * 0``, -0.0 below 0, as torch's)
        return xp.where(_inside(x, lambd), x * x.dtype.type(0), xp.where(x < -lambd, x + step, x - step))

    backward = HardshrinkForward.backward


def hardshrink(input, lambd=0.5):
    """``input`` where ``|input| > lambd`` (or NaN), else 0. RuntimeError for a finite
    ``lambd`` beyond the range of a float32, float16 or bfloat16 input's dtype.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.hardshrink.html"""
    float_only(input, "hardshrink_cpu")
    lambd = check_attribute(lambd, input.dtype)
    return apply(HardshrinkForward, input, lambd=lambd)
