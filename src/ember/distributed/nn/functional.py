"""Differentiable collectives, PyTorch's ``torch.distributed.nn.functional``
(https://pytorch.org/docs/stable/distributed.html#autograd-enabled-communication-primitives).

The adjoint of a sum over ranks is a sum over ranks: when every rank feeds the reduced tensor
into its own part of one loss, each rank's input gets the sum of all ranks' gradients of the
output, so the backward of ``all_reduce(SUM)`` is one more ``all_reduce(SUM)`` (and of AVG, an AVG).
"""
from ...autograd.function import Function
from .. import _collectives
from ..distributed_c10d import ReduceOp

__all__ = ["all_reduce"]


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        out = tensor.clone()
        _collectives.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise RuntimeError(f"all_reduce backward is implemented for SUM and AVG only, not {ctx.op}")
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad_output.contiguous())


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """A new tensor: ``tensor`` reduced over ``group`` (the default group when None) with ``op``;
    the input is left as it was. Same shape and dtype as ``tensor``. Differentiable for SUM and
    AVG (the backward reduces the gradient the same way; RuntimeError in the backward of other
    ops). Raises as :func:`ember.distributed.all_reduce` (ValueError before
    ``init_process_group``; RuntimeError when ranks disagree on shape, dtype or op).
    Source: https://pytorch.org/docs/stable/distributed.html#torch.distributed.nn.functional.all_reduce"""
    return _AllReduce.apply(op, group, tensor)
