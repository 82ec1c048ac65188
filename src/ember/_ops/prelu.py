"""PReLU's op entries: ``x`` where positive, else ``weight * x`` (He et al., 2015,
https://arxiv.org/abs/1502.01852), with its backward as an op of its own so that second
derivatives take PyTorch's values (``_prelu_kernel_backward`` in PyTorch's
``derivatives.yaml``: the first derivative uses ``x > 0``, the second ``x >= 0``, so at
exactly 0 they differ)."""
from .._backend import namespace
from .core import Op, apply
from .pointwise_binary import Where
from .refusals import float_only

__all__ = ["Prelu", "PreluBackward", "prelu"]


class Prelu(Op):
    """``input`` (N, C, *) or (*) and a ``weight`` broadcastable to it (one slope per channel)."""
    promote = None

    @staticmethod
    def forward(x, weight):
        return namespace(x, weight).where(x > 0, x, weight * x).astype(x.dtype, copy=False)

    @classmethod
    def infer(cls, x, weight):
        return tuple(x.shape), x.dtype

    @staticmethod
    def backward(ctx, g):
        return apply(PreluBackward, g, ctx.input(0), ctx.input(1))


class PreluBackward(Op):
    """``(grad_input, grad_weight)``, both of ``input``'s shape (the engine sums the weight's
    down to its shape); differentiable in ``grad``, ``input`` and ``weight``."""
    promote = None
    num_outputs = 2

    @staticmethod
    def forward(g, x, weight):
        positive, xp = x > 0, namespace(g, x, weight)
        return (xp.where(positive, g, weight * g).astype(g.dtype, copy=False),
                xp.where(positive, 0, x * g).astype(g.dtype, copy=False))

    @classmethod
    def infer(cls, g, x, weight):
        return (tuple(x.shape), x.dtype), (tuple(x.shape), x.dtype)

    @staticmethod
    def backward(ctx, gg_input, gg_weight):
        g, x, weight = ctx.input(0), ctx.input(1), ctx.input(2)
        zero = g.new_zeros(())
        gg_input = zero if gg_input is None else gg_input
        gg_weight = zero if gg_weight is None else gg_weight
        nonnegative = x >= 0
        return (apply(Where, nonnegative, gg_input, gg_input * weight + gg_weight * x),
                apply(Where, nonnegative, zero, g * gg_weight),
                apply(Where, nonnegative, zero, g * gg_input))


def prelu(input, weight):
    """Leaky ReLU with a learned slope per channel (He et al., 2015,
    https://arxiv.org/abs/1502.01852). ``weight`` has 1 or C elements, C = ``input.shape[1]``
    (1 for inputs with fewer than 2 dims). RuntimeError when the counts differ.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.prelu.html"""
    float_only(input, "prelu_cpu")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter "
                           f"numbers = {weight.numel()} and channel size = {channels}.")
    if weight.numel() != 1 or weight.ndim:
        weight = weight.reshape((-1,) + (1,) * (input.ndim - 2)) if input.ndim >= 2 else weight.reshape(())
    return apply(Prelu, input, weight.to(input.dtype))
