"""``while_loop(cond_fn, body_fn, carried_inputs)``: a loop with a data-dependent trip count
(torch._higher_order_ops.while_loop)."""
from .._creation import tensor
from .._tensor import Tensor
from ..compiler import hop
from ..compiler.capture import LoopInt
from ..compiler.exc import UncapturedHigherOrderOpError
from .utils import as_tuple_of_operands

__all__ = ["while_loop", "WhileLoop"]


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)``; return ``carried``.

    Args:
        cond_fn: callable on the carry returning a Python bool or a one-element bool tensor.
        body_fn: callable on the carry returning a new carry: a tuple of as many items, each a
            tensor of the input's shape and dtype, or an int where the input was an int
            (for a carry of one item, that item alone).
            It must neither write into its inputs nor return them (or views of them).
        carried_inputs: a tuple or list of tensors and ints.

    Gradients flow to the carry and the tensors the functions read through every iteration
    run (recorded op by op, as torch 2.13's eager while_loop differentiates). Inside a compiled
    function, the loop is one ``WhileLoop`` node holding ``cond_fn`` and ``body_fn`` as
    subgraphs (each traced once, on the initial carry), so the trip count is decided at run
    time. An int in the carry is a 0-d int64 tensor inside the node (the functions see it as
    one while traced); the loop returns it as an int the replay computes
    (:class:`~ember.compiler.capture.LoopInt`): returning it is captured, using its value in
    Python is a graph break.

    Raises:
        RuntimeError: ``carried_inputs`` is not a tuple or list, or holds something else than
            tensors and ints; ``cond_fn`` returns a tensor of more than one element.
        UncapturedHigherOrderOpError (a RuntimeError): the body mutates or aliases an input, or
            returns a carry of another length, shape or dtype (the message names which item).

    Source: https://pytorch.org/docs/main/higher_order_ops/while_loop.html
    """
    carried = as_tuple_of_operands(carried_inputs, "while_loop")
    for i, value in enumerate(carried):
        if not isinstance(value, (Tensor, int)):
            raise RuntimeError(f"carried_inputs must be a tuple of tensors and ints, got "
                               f"{type(value).__name__} at carried_inputs[{i}]")
    tracer = hop.tracer()
    if tracer is not None:
        return hop.captured(lambda: _capture(tracer, cond_fn, body_fn, carried),
                            lambda: _loop(cond_fn, body_fn, carried))
    return _loop(cond_fn, body_fn, carried)


def _loop(cond_fn, body_fn, carried):
    while _truth(cond_fn(*carried)):
        versions = [v._versions[0] if isinstance(v, Tensor) else None for v in carried]
        out = _as_carry(body_fn(*carried), carried)
        _check_carry(carried, versions, out)
        carried = tuple(out)
    return carried


def _truth(pred):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a bool, got a tensor "
                               f"of shape {tuple(pred.shape)}")
        return bool(pred._data.item())  # the array itself: Tensor.item is a graph break while recording
    return bool(pred)


class WhileLoop(hop.HigherOrderOp):
    """The graph node of :func:`while_loop`: args ``(*carried, *lifted)``; ``n_carried``."""
    name = "WhileLoop"

    @staticmethod
    def run(tensors, cond_graph, body_graph, n_carried):
        carried, lifted = tensors[:n_carried], tensors[n_carried:]
        while _truth(cond_graph(*carried, *lifted)[0]):
            carried = body_graph(*carried, *lifted)
        return carried


def _capture(tracer, cond_fn, body_fn, carried):
    ints = [i for i, v in enumerate(carried) if not isinstance(v, Tensor)]
    if ints:  # the ints become 0-d tensors of the graph; the results become ints again
        tensors = tuple(v if isinstance(v, Tensor) else v.tensor if isinstance(v, LoopInt)
                        else tensor(int.__int__(v)) for v in carried)
        outs = _capture(tracer, cond_fn, lambda *c: _tensor_ints(_as_carry(body_fn(*c), c)), tensors)
        return tuple(LoopInt(t, tracer) if i in ints else t for i, t in enumerate(outs))
    condition = hop.trace(tracer, cond_fn, carried, "while_loop's cond_fn")
    pred = condition.result
    if not isinstance(pred, Tensor):  # a Python bool: the same on every iteration
        return _loop(cond_fn, body_fn, carried)
    if pred.numel() != 1:
        raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a bool, got a tensor "
                           f"of shape {tuple(pred.shape)}")
    versions = [v._versions[0] for v in carried]
    body = hop.trace(tracer, body_fn, carried, "while_loop's body_fn")
    _check_carry(carried, versions, _as_carry(body.result, carried))
    return tuple(hop.add_node(tracer, WhileLoop, carried, {"cond_graph": condition, "body_graph": body},
                              n_carried=len(carried)))


def _tensor_ints(out):
    return tuple(tensor(v) if type(v) is int else v for v in out) if isinstance(out, (tuple, list)) else out


def _as_carry(out, carried):
    # torch flattens body_fn's output: a lone tensor or int is a carry of one item
    return (out,) if len(carried) == 1 and isinstance(out, (Tensor, int)) else out


def _check_carry(carried, versions, out):
    if not isinstance(out, (tuple, list)) or len(out) != len(carried):
        n = len(out) if isinstance(out, (tuple, list)) else 1
        raise UncapturedHigherOrderOpError(
            f"Expected body_fn_output and carried_inputs to have same number of outputs but got "
            f"{n} and {len(carried)}")
    for i, (before, version, after) in enumerate(zip(carried, versions, out)):
        if not isinstance(before, Tensor):
            if not isinstance(after, (int, Tensor)) or (isinstance(after, Tensor) and after.numel() != 1):
                raise UncapturedHigherOrderOpError(
                    f"body_fn output {i} must be an int like carried_inputs[{i}], got {after!r}")
            continue
        if before._versions[0] != version:
            raise UncapturedHigherOrderOpError(
                f"while_loop's body_fn mutated its input carried_inputs[{i}]: higher order ops do "
                f"not support input mutation")
        if not isinstance(after, Tensor):
            raise UncapturedHigherOrderOpError(
                f"body_fn output {i} must be a tensor like carried_inputs[{i}], got {type(after).__name__}")
        if any(after._versions is b._versions for b in carried if isinstance(b, Tensor)):
            raise UncapturedHigherOrderOpError(
                f"while_loop's body_fn output {i} aliases an input: higher order ops do not support "
                f"aliasing (return a copy, e.g. x.clone())")
        differ = ([f"shape {tuple(after.shape)} vs {tuple(before.shape)}"] if after.shape != before.shape else []) + \
                 ([f"dtype {after.dtype} vs {before.dtype}"] if after.dtype is not before.dtype else [])
        if differ:
            raise UncapturedHigherOrderOpError(
                f"Expected body_fn_output and carried_inputs to have same metadata but found: "
                f"pair[{i}] differ in {', '.join(differ)}")
