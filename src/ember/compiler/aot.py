"""A compiled forward whose outputs need gradients: forward and backward captured together.

When the captured function returns tensors that require grad without running backward itself
(``model = ember.compile(model)`` in a training loop), the capture also records the backward:
``autograd.grad`` of those outputs, with grad_output placeholders, w.r.t. the placeholders that
require grad (the op entries' derivatives run through the same dispatcher). :func:`split` cuts
that joint graph in two: the forward graph returns the outputs and the values the backward reads
(saved activations); the backward graph takes those and the output gradients. On replay one
autograd node (a custom Function) runs the forward graph and, when the engine reaches it, the
backward graph: ``loss.backward()`` after a compiled forward runs compiled code both ways.
"""
import numpy as np

from .._tensor import Tensor
from ..autograd import grad as _grad
from ..autograd.function import Function
from .graph import Graph, Node, nodes_in

__all__ = ["record_backward", "split", "Joint", "CompiledGraph"]


def record_backward(tracer, outputs, placeholder_tensors):
    """Runs ``autograd.grad`` of ``outputs`` under ``tracer``; returns ``(forward node ids,
    [(placeholder index, grad Node)])`` or None when nothing is differentiable."""
    diff = [(k, t) for k, t in placeholder_tensors if t.requires_grad]
    if not diff:
        return None
    forward = {id(n) for n in tracer.graph.nodes}
    grad_outputs = []
    for i, out in enumerate(outputs):
        g = Tensor._make(np.ones_like(out._data))
        tracer.known[id(g._data)] = (("grad_output", i), f"grad_output_{i}")
        tracer.keep.append(g._data)
        grad_outputs.append(g)
        # placeholders in output order, used or not: the backward graph takes them so, and a
        # backward may read a later output's gradient first (scan's moves its ys' gradient first)
        tracer.node(g)
    # A leaf's gradient hooks (DDP's averaging) stay out of the graph: the replayed backward
    # flows into the leaves' AccumulateGrad nodes, where the engine runs them on every call.
    hooked = [t._node for _, t in diff if t.grad_fn is None and t._node is not None and t._node._pre_hooks]
    suspended = [(node, node._pre_hooks) for node in hooked]
    for node in hooked:
        node._pre_hooks = type(node._pre_hooks)()
    try:
        grads = _grad(outputs, [t for _, t in diff], grad_outputs=grad_outputs, retain_graph=True,
                      allow_unused=True)
    finally:
        for node, hooks in suspended:
            node._pre_hooks = hooks
    tracer.ran_backward = False
    return forward, [(k, tracer.node(g)) for (k, _), g in zip(diff, grads) if g is not None]


class Joint:
    """The two halves of a joint graph and how their inputs and outputs line up."""

    def __init__(self, forward, backward, forward_sources, n_outputs, grad_slots):
        self.forward, self.backward, self.forward_sources = forward, backward, forward_sources
        self.n_outputs = n_outputs          # the forward's first outputs are the user's
        self.grad_slots = grad_slots        # (placeholder index, backward output index)


def split(graph, sources, forward_ids, grads):
    """Cuts a joint graph (its output node holds the user's outputs) into a :class:`Joint`, or
    returns None when it cannot be (a backward node mutates, a saved input is mutated)."""
    if any(id(v) not in forward_ids for _, v in graph.mutations):
        return None
    is_grad_output = {n: s[0] == "grad_output" for n, s in zip(graph.placeholders, sources)}
    backward_nodes = [n for n in graph.nodes if n.op == "call_op" and id(n) not in forward_ids]
    in_backward = set(backward_nodes)
    saved = []
    for n in backward_nodes:
        for a in nodes_in((n.args, n.kwargs)):
            if a not in in_backward and not is_grad_output.get(a) and a not in saved:
                saved.append(a)
    # a gradient the backward did not compute (a piecewise-constant op's zeros, made from a
    # constant) reaches the backward graph as a saved value
    saved += [g for _, g in grads if g not in in_backward and not is_grad_output.get(g) and g not in saved]
    if set(saved) & {p for p, _ in graph.mutations}:
        return None
    fwd, env = Graph(), {}
    fwd_sources, fwd_index = [], {}
    for k, (p, s) in enumerate(zip(graph.placeholders, sources)):
        if not is_grad_output[p]:
            env[p] = fwd.placeholder(p.name, p.meta)
            fwd_index[k] = len(fwd_sources)
            fwd_sources.append(s)
    for n in graph.nodes:
        if n.op == "call_op" and n not in in_backward:
            env[n] = fwd.call_op(n.target, _remap(n.args, env), _remap(n.kwargs, env), n.meta)
    for p, v in graph.mutations:
        fwd.mutate(env[p], env[v])
    fwd.output([_remap(v, env) for v in graph.outputs] + [env[n] for n in saved])
    bwd, benv = Graph(), {}
    fwd.symbols = bwd.symbols = graph.symbols
    for n in saved:
        benv[n] = bwd.placeholder(n.name, n.meta)
    for p in graph.placeholders:
        if is_grad_output[p]:
            benv[p] = bwd.placeholder(p.name, p.meta)
    for n in backward_nodes:
        benv[n] = bwd.call_op(n.target, _remap(n.args, benv), _remap(n.kwargs, benv), n.meta)
    bwd.output([benv[g] for _, g in grads])
    slots = [(fwd_index[k], j) for j, (k, _) in enumerate(grads)]
    return Joint(fwd, bwd, fwd_sources, len(graph.outputs), slots)


def _remap(value, env):
    if isinstance(value, Node):
        return env[value]
    if isinstance(value, tuple):
        return tuple(_remap(v, env) for v in value)
    if isinstance(value, list):
        return [_remap(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _remap(v, env) for k, v in value.items()}
    return value


class CompiledGraph(Function):
    """The autograd node of a replayed joint graph: ``forward`` runs the forward graph on the
    placeholders' arrays, ``backward`` the backward graph on the saved arrays and the output
    gradients, giving one gradient per placeholder (None where none flows). ``sizes`` holds
    the values of a dynamic graph's size symbols for this call (None for a static graph)."""

    @staticmethod
    def forward(ctx, runner, sizes, *tensors):
        results = runner.invoke(runner.run_forward, [t._data for t in tensors], sizes)
        for i in runner.mutated:
            tensors[i]._versions[0] += 1
        n = runner.joint.n_outputs
        ctx.runner, ctx.saved_arrays, ctx.sizes = runner, results[n:], sizes
        return tuple(Tensor._make(np.asarray(a)) for a in results[:n])

    @staticmethod
    def backward(ctx, *grads):
        runner = ctx.runner
        # the backward graph takes the gradients of the outputs that require grad only
        wanted = [g._data for g, o in zip(grads, runner.joint.forward.outputs) if o.meta.get("requires_grad")]
        arrays = runner.invoke(runner.run_backward, list(ctx.saved_arrays) + wanted, ctx.sizes)
        result = [None] * (2 + runner.n_inputs)
        for k, j in runner.joint.grad_slots:
            result[2 + k] = Tensor._make(np.asarray(arrays[j]))
        return tuple(result)
