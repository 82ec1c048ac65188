"""GELU's gradient computed by its forward: a graph pass before code generation.

A training step compiled as one graph (forward, backward and optimizer) computes GELU's
forward ``y = Gelu(x)`` in a product's epilogue and, later, its gradient
``GeluBackward(g, x, y) = g * (Phi(x) + x phi(x))`` in another product's epilogue, which
evaluates Phi and phi of ``x`` again (an exponential, a division or erf: 0.6-0.7 ms a layer of
the tiny GPT's step on an AMD EPYC, session 27). This pass rewrites the gradient as
``g * D`` with ``D = GeluBackward(1.0, x, None)`` (the bracket alone) placed right after the
forward's node, so that the scheduler fuses it into the forward's loop, where the C compiler
shares its work with ``x * Phi(x)`` (``em_normal_cdff_pdf``); the backward's epilogue becomes
one product. ``D`` is kept from the forward to the backward, as ``x`` was (which the
gradient no longer reads). float32 graphs without size symbols or control flow; the values
are the same to rounding (Phi(x) from ``x`` rather than read back as ``y / x``).
"""
import numpy as np

from ..._ops.core import OPS
from ..graph import Graph, Node
from .kernels import _dtype

__all__ = ["gelu_gradient_in_forward"]


def _name(node):
    return getattr(node.target, "name", None)


def _float32(node):
    return "dtype" in node.meta and _dtype(node) == np.float32


def _rewritten(graph):
    """{GeluBackward node: its forward's Gelu node} for the gradients this pass moves."""
    forwards = {n.args[0]: n for n in graph.nodes if _name(n) == "Gelu" and isinstance(n.args[0], Node)
                and n.kwargs.get("approximate", "none") == "none" and _float32(n)}
    return {n: forwards[n.args[1]] for n in graph.nodes if _name(n) == "GeluBackward" and len(n.args) > 1
            and n.args[1] in forwards and _float32(n) and isinstance(n.args[0], Node)}


def gelu_gradient_in_forward(graph):
    """``graph`` with each float32 ``GeluBackward(g, x, y)`` whose ``Gelu(x)`` it also computes
    rewritten as ``g * GeluBackward(1.0, x, None)``, the latter placed after ``Gelu(x)`` (a new
    Graph, the same placeholders, outputs and mutations); ``graph`` itself when there is none."""
    if graph.symbols or graph.any_shape or graph.subgraphs():
        return graph
    moved = _rewritten(graph)
    if not moved:
        return graph
    after = {gelu: None for gelu in moved.values()}  # forward node -> its D in the new graph
    new, env = Graph(), {}
    for p in graph.placeholders:
        env[p] = new.placeholder(p.name, p.meta)
    for n in graph.nodes:
        if n.op != "call_op":
            continue
        if n in moved:
            d = after[moved[n]]
            env[n] = new.call_op(OPS["Mul"], (env[n.args[0]], d), {}, n.meta)
            continue
        env[n] = new.call_op(n.target, _remap(n.args, env), _remap(n.kwargs, env), n.meta)
        if n in after:
            x = n.args[0]
            after[n] = new.call_op(OPS["GeluBackward"], (1.0, env[x], None), {}, dict(x.meta, requires_grad=False))
    for p, v in graph.mutations:
        new.mutate(env[p], _remap(v, env))
    new.output([_remap(v, env) for v in graph.outputs])
    new.traced_operands = {env[n]: k for n, k in graph.traced_operands.items() if n in env}
    if hasattr(graph, "complex_counts"):
        new.complex_counts = graph.complex_counts
    return new


def _remap(value, env):
    if isinstance(value, Node):
        return env[value]
    if isinstance(value, (tuple, list)):
        return type(value)(_remap(v, env) for v in value)
    if isinstance(value, dict):
        return {k: _remap(v, env) for k, v in value.items()}
    return value
