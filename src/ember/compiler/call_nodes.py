"""The autograd nodes of what a compiled call that ran a backward returns, as torch.compile's.

torch's dynamo breaks at ``loss.backward()``: what the function computed before it is an output of
its forward graph, whose node (``CompiledFunctionBackward`` under aot_eager and inductor) the
backward freed; what it computed after it an output of the next graph, with that graph's live
node. A replay gives a result whose history the call's backward freed one freed node
(:class:`FreedOutputs`); the first calls, which run the function eagerly, give their results the
same nodes (:func:`as_compiled`). (A replay's results computed after the backward get their live
node from the recorded backward of their own: ``aot.made_after``.)
"""
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.graph import gradient_edge
from .aot import CompiledFunction, history_of
from .structure import flatten

__all__ = ["freed_outputs", "as_compiled", "passed_on", "FreedOutputs"]


def freed_outputs(results, positions, edges):
    """Gives the replayed ``results`` (tensors without history) at ``positions`` one autograd node
    whose saved values a backward already freed, as torch's compiled step returns its loss after
    ``loss.backward()``: they require grad, their ``grad_fn`` is a ``CompiledFunctionBackward``
    (``next_functions``: ``edges``) and a backward through them raises torch's RuntimeError
    "Trying to backward through the graph a second time". One node per call, nothing saved."""
    none = (None,) * len(edges)
    node = CompiledFunction._node_cls(CompiledFunction, None, edges, none, none, (((), None),) * len(positions), freed=True)
    for k, i in enumerate(positions):
        t = results[i]
        t._grad_fn, t._requires_grad, t._output_nr = node, True, k


def as_compiled(result, freed, live, params, limit=100_000):
    """``result`` of a call that ran the function eagerly (a first call: unrecorded, as it makes
    the optimizer's state, or recording) under a backend compiling both ways (aot_eager,
    inductor), given the nodes a replay gives its tensors (positions in :func:`.structure.flatten`
    order): those at ``freed`` (the recording's ``cap.freed``; None: those whose history a
    backward freed) the freed node (:func:`freed_outputs`, ``next_functions``: ``params``
    requiring grad), those at ``live`` (computed in the recording after its backward: FGSM's
    ``x + eps * x.grad.sign()``) one live node passing their gradients on to eager's
    (:func:`passed_on`). torch.compile's first call returns its graphs' ``CompiledFunctionBackward``
    where eager's shows ``SumBackward0``, ``AddBackward0``."""
    flat = flatten(result)
    if freed is None:
        freed = [i for i, t in enumerate(flat)
                 if t.requires_grad and t.grad_fn is not None and history_of(t.grad_fn, limit) == "freed"]
    freed = [i for i in freed if i < len(flat)]  # (not a hidden base)
    if freed:
        freed_outputs(flat, freed, tuple(gradient_edge(p) for p in params if p.requires_grad))
    passed_on([flat[i] for i in live if i < len(flat) and i not in freed])
    return result


def passed_on(tensors):
    """Gives ``tensors`` (with history, requiring grad; no views) one autograd node named as a
    replay's (``CompiledFunctionBackward``) whose backward passes their gradients on to the nodes
    they had: what a backward through them computes is eager's; it frees the node, as torch's."""
    tensors = [t for t in tensors if t.requires_grad and t.grad_fn is not None and t._base is None]
    if not tensors:
        return
    shapes, dtypes = tuple(t.shape for t in tensors), tuple(t.dtype for t in tensors)
    node = _PASSING._node_cls(_PASSING, None, tuple((t.grad_fn, t._output_nr) for t in tensors),
                              shapes, dtypes, tuple(zip(shapes, dtypes)))
    for k, t in enumerate(tensors):
        t._grad_fn, t._output_nr = node, k


# what passed_on's node runs: the gradients as they come (named as a replay's Function, its node's name)
_PASSING = type(CompiledFunction)("CompiledFunction", (Function,), {
    "backward": staticmethod(lambda ctx, *grads: grads), "__module__": __name__})


class FreedOutputs:
    """A replay's outputs whose history the call's backward freed (``cap.freed``: a loss after its
    ``backward()``), at their positions among the graph's outputs (``remade``: the positions of
    the views remade apart, :mod:`.aliases`; not the inputs returned, ``passthrough``); ``fixed``:
    the entry's inputs fetched once, whose parameters' edges are the freed node's ``next_functions``."""

    def __init__(self, cap, remade, fixed, passthrough):
        kept = [i for i in range(len(cap.output_nodes)) if i not in remade]
        self.positions = [kept.index(i) for i in cap.freed if i in kept and kept.index(i) not in passthrough]
        self.ran_backward, self.fixed, self.edges = cap.ran_backward, fixed, None

    def give(self, results):
        """Gives the replayed ``results`` (without history) their freed node (:func:`freed_outputs`)."""
        if self.positions:
            if self.edges is None:
                self.edges = tuple(gradient_edge(t) for t in self.fixed if isinstance(t, Tensor) and t.requires_grad)
            freed_outputs(results, self.positions, self.edges)

    def detached(self, results, inputs, passthrough):
        """The ``results`` a graph replayed on tensors (the ``eager`` and callable backends) returns
        for a call on ``inputs``, after a backward in the call: those whose history it freed keep
        their history, freed as the call's backward freed the recording's (the nodes made by this
        replay, not those of the inputs: its backward ran as ops, not through the engine); a
        callable backend's result without history gets a freed node. The others are detached
        but the inputs returned (``passthrough``)."""
        if not self.ran_backward:
            return results
        results = [t if i in passthrough or i in self.positions else t.detach() for i, t in enumerate(results)]
        stop = {id(x.grad_fn) for x in inputs if isinstance(x, Tensor) and x.grad_fn is not None}
        todo, seen = [results[i].grad_fn for i in self.positions], set()
        while todo:
            node = todo.pop()
            if node is None or id(node) in seen or id(node) in stop:
                continue
            seen.add(id(node))
            node.release()
            todo += [n for n, _ in node.next_functions]
        plain = [i for i in self.positions if results[i].grad_fn is None]
        if plain:
            freed_outputs(results, plain, ())
        return results
