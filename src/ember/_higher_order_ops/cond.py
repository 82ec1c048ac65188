"""``cond(pred, true_fn, false_fn, operands)``: a data-dependent branch (torch.cond)."""
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..compiler import hop
from ..compiler.exc import UncapturedHigherOrderOpError
from .utils import (as_tuple_of_operands, call_unmutated, check_same_meta, flatten, function_key, reads_once, skeleton,
                    unflatten, with_zero_grads)

__all__ = ["cond", "Cond"]


def cond(pred, true_fn, false_fn, operands=()):
    """Return ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    Args:
        pred: a Python bool, or a tensor of one element (of any shape) read as a bool.
        true_fn, false_fn: callables taking ``*operands`` and returning a (nested) tuple, list
            or dict of tensors with the same structure, shapes and dtypes as each other.
        operands: a tuple or list of inputs to the branch.

    Gradients flow through the taken branch. With a tensor ``pred``, the branch not taken is
    checked too, as torch traces both: the first call for given branch functions, operand
    shapes and taken branch also runs it once (without gradients, on copies of the operands,
    the random stream restored) and compares its outputs; later calls run the taken branch
    only. The tensors either branch reads (operands, parameters, closure tensors) get zero
    gradients where no gradient of the taken branch reaches them, as torch's (not None);
    an operand neither branch reads gets None, as torch's. Inside
    a compiled function a tensor ``pred`` makes one ``Cond`` node holding both branches as
    subgraphs (both traced, see :mod:`ember.compiler.hop`); a Python bool picks its branch
    (and only it is checked), as torch.

    Raises:
        RuntimeError: ``pred`` is a tensor of more than one element, or not a bool/tensor;
            ``operands`` is not a tuple or list.
        UncapturedHigherOrderOpError (a RuntimeError): with a tensor ``pred``, the branches
            return different structures, shapes or dtypes (the message names the first
            difference; torch 2.13 allows shapes to differ, the issue's 2.14 contract does
            not); a branch writes into an operand or takes an optimizer's step (also eagerly,
            as torch).

    Source: https://pytorch.org/docs/stable/generated/torch.cond.html
    """
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    elif not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred!r}.")
    if not (callable(true_fn) and callable(false_fn)):
        raise RuntimeError("Expect both branches to be callable.")
    operands = as_tuple_of_operands(operands, "cond")
    tracer = hop.tracer()
    if tracer is not None and isinstance(pred, Tensor):
        return hop.captured(lambda: _capture(tracer, pred, true_fn, false_fn, operands),
                            lambda: _eager(pred, true_fn, false_fn, operands))
    return _eager(pred, true_fn, false_fn, operands)


def _eager(pred, true_fn, false_fn, operands):
    taken = _truth(pred)
    out = call_unmutated(true_fn if taken else false_fn, operands, "cond's branch")
    if isinstance(pred, Tensor) and hop.tracer() is None:
        def check(other):
            true_out, false_out = (out, other) if taken else (other, out)
            check_same_meta(true_out, false_out, "cond's true_fn and false_fn", UncapturedHigherOrderOpError)
        branch, untaken = (true_fn, false_fn) if taken else (false_fn, true_fn)
        key = (function_key(true_fn), function_key(false_fn), taken)
        extras = reads_once(key, untaken, operands, "cond's branch", check)
        if is_grad_enabled():  # what the taken branch reads without a gradient path gets zeros too
            extras += reads_once((key, "taken"), branch, operands, "cond's branch")
        out = with_zero_grads(out, extras)
    return out


def _truth(pred):
    # the array itself: Tensor.item is a graph break while recording
    return bool(pred._data.item()) if isinstance(pred, Tensor) else bool(pred)


class Cond(hop.HigherOrderOp):
    """The graph node of :func:`cond`: args ``(pred, *operand tensors, *lifted)``."""
    name = "Cond"
    vjp = classmethod(hop.branch_vjp)

    @staticmethod
    def run(tensors, true_graph, false_graph):
        return (true_graph if _truth(tensors[0]) else false_graph)(*tensors[1:])


def _capture(tracer, pred, true_fn, false_fn, operands):
    true = hop.trace(tracer, true_fn, operands, "cond's true_fn")
    false = hop.trace(tracer, false_fn, operands, "cond's false_fn")
    check_same_meta(true.result, false.result, "cond's true_fn and false_fn", UncapturedHigherOrderOpError)
    outs = hop.add_node(tracer, Cond, [pred, *flatten(operands)],
                        {"true_graph": true, "false_graph": false})
    return unflatten(skeleton(true.result), iter(outs))
