"""In-place writes through a view: ``CopySlices``.

When an in-place op changes a view of a tensor whose history is recorded, the base tensor's
new value is "the old base with the view's region replaced". The view remembers how it was
made from its base (``_view_chain``: the view ops and their arguments), so the same chain
addresses the region in the forward kernel, in the gradient, and in the rebuilt view.
"""
from .core import Op, apply


def replay(x, chain):
    """Applies a view chain to a backend array or a Tensor (the view ops accept both)."""
    from .._tensor import Tensor
    for op, attrs in chain:
        x = apply(op, x, **attrs) if isinstance(x, Tensor) else op.forward(x, **attrs)
    return x


class CopySlices(Op):
    """``base`` with the region that ``chain`` selects replaced by ``value``."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(base, value, chain):
        out = base.copy()
        region = replay(out, chain)
        if not region.flags.writeable:
            raise RuntimeError("unsupported operation: this view cannot be written to in place "
                               "while its history is recorded (clone() it first)")
        region[...] = value
        return out

    @staticmethod
    def backward(ctx, g):
        chain = ctx.attrs["chain"]
        gbase = apply(CopySlices, g, g.new_zeros(()), chain=chain) if ctx.needs_input_grad[0] else None
        gvalue = replay(g, chain) if ctx.needs_input_grad[1] else None
        return gbase, gvalue
