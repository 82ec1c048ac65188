"""``switch(index, branches, operands)``: multi-way branching (PyTorch 2.14's torch.switch)."""
from .._ops.clamp import clamp
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..compiler import hop
from ..compiler.exc import UncapturedHigherOrderOpError
from .utils import (as_tuple_of_operands, call_unmutated, check_same_meta, flatten, function_key, reads_once, skeleton,
                    unflatten, with_zero_grads)

__all__ = ["switch", "Switch"]


def switch(index, branches, operands=()):
    """Return ``branches[i](*operands)`` with ``i = min(max(index, 0), len(branches) - 1)``.

    An index past either end picks the nearest branch (7 of 3 branches picks the last, -3 the
    first), as XLA's ``Case`` does, so a computed index never fails at run time.

    Args:
        index: a Python int or a one-element integer tensor.
        branches: a non-empty tuple or list of callables taking ``*operands``; each returns a
            (nested) tuple, list or dict of tensors, ints or None.
        operands: a tuple or list of inputs to the branch.

    Gradients flow through the chosen branch; with a tensor ``index``, the tensors some
    branch reads get zeros where no gradient of the chosen one reaches them, an operand no
    branch reads None (as ``cond``), so each branch runs once more, without gradients, per
    operand shapes. Inside a compiled function a tensor ``index`` is clamped
    by a graph op, then one ``Switch`` node holds every branch as a subgraph.

    Raises:
        RuntimeError: ``branches`` is empty or holds a non-callable; ``index`` is a tensor of
            more than one element or of a floating dtype.
        UncapturedHigherOrderOpError (a RuntimeError): with a tensor ``index``, the branches
            return different structures, shapes or dtypes (eagerly too: the first call per
            operand shapes runs each other branch once, on copies); a branch writes into an
            operand.

    Source: PyTorch 2.14, ``torch._higher_order_ops.switch``.
    """
    if not isinstance(branches, (tuple, list)) or not branches or not all(callable(b) for b in branches):
        raise RuntimeError("Expected branches to be a non-empty tuple or list of callables.")
    if isinstance(index, Tensor):
        if index.numel() != 1 or index.dtype.is_floating_point or index.dtype.is_complex:
            raise RuntimeError(f"Expected index to be an int or a single-element integer tensor, but got "
                               f"a tensor of shape {tuple(index.shape)} and dtype {index.dtype}.")
    elif not isinstance(index, int):
        raise RuntimeError(f"Expected index to be an int or a single-element integer tensor, but got {index!r}.")
    operands = as_tuple_of_operands(operands, "switch")
    tracer = hop.tracer()
    if tracer is not None and isinstance(index, Tensor):
        return hop.captured(lambda: _capture(tracer, index, branches, operands),
                            lambda: call_unmutated(_pick(branches, index), operands, "switch's branch"))
    picked = _pick(branches, index)
    out = call_unmutated(picked, operands, "switch's branch")
    if isinstance(index, Tensor) and tracer is None:
        # every branch checked (torch traces them all), once per operand shapes; what any of
        # them reads gets zeros where no gradient reaches it, as the compiled switch's backward
        first, picked_key = branches.index(picked), function_key(picked)

        def check(i):  # the tensors' structure and metadata (constant leaves may differ)
            return lambda other: check_same_meta(flatten(out), flatten(other), f"switch's branches[{first}] and "
                                                 f"branches[{i}]", UncapturedHigherOrderOpError)
        grad = is_grad_enabled()
        seen = (tuple(map(function_key, branches)), first, repr(skeleton(operands)),
                tuple((t.shape, t.dtype) for t in flatten(operands)))
        if grad or seen not in _CHECKED:  # without gradients, a checked call costs one key
            # keyed by the pair: each branch is checked against each one picked
            reads = [reads_once((function_key(b), picked_key, "switch"), b, operands, "switch's branch", check(i))
                     for i, b in enumerate(branches)]
            if len(_CHECKED) > 1024:
                _CHECKED.clear()
            _CHECKED.add(seen)
            if grad:
                out = with_zero_grads(out, [t for r in reads for t in r])
    return out


_CHECKED = set()  # (branches, picked, operand structure and metadata) of the calls checked


def _pick(branches, index):
    # the array itself: Tensor.item is a graph break while recording
    index = int(index._data.item()) if isinstance(index, Tensor) else index
    return branches[min(max(index, 0), len(branches) - 1)]


class Switch(hop.HigherOrderOp):
    """The graph node of :func:`switch`: args ``(clamped index, *operand tensors, *lifted)``,
    one subgraph kwarg per branch in order."""
    name = "Switch"
    vjp = classmethod(hop.branch_vjp)

    @staticmethod
    def run(tensors, **branches):
        return _pick(list(branches.values()), tensors[0])(*tensors[1:])


def _capture(tracer, index, branches, operands):
    traced = [hop.trace(tracer, branch, operands, f"switch's branches[{i}]") for i, branch in enumerate(branches)]
    for i, other in enumerate(traced[1:], 1):
        check_same_meta(traced[0].result, other.result, f"switch's branches[0] and branches[{i}]",
                        UncapturedHigherOrderOpError)
    index = clamp(index, 0, len(branches) - 1)
    outs = hop.add_node(tracer, Switch, [index, *flatten(operands)],
                        {f"branch_graph_{i}": t for i, t in enumerate(traced)})
    return unflatten(skeleton(traced[0].result), iter(outs))
