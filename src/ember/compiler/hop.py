"""Control-flow operators (``ember.cond``, ``switch``, ``while_loop``, ``scan``, ``map``) captured
as single graph nodes.

While a function is recorded (``ember.compile``, ``make_fx``, ``export``), a control-flow
operator does not leave its branch or body's ops in the graph. Each function it takes is traced
once, on the real operands, into a nested :class:`~.graph.Graph`: its placeholders are the
operands' tensors, then the tensors the function reads from outside (parameters, earlier
values), which are *lifted* into args of the node. The node is one ``call_op`` whose target is
the operator's :class:`HigherOrderOp` and whose kwargs hold the subgraphs; its results are
``getitem`` nodes. Replayed, the node evaluates the predicate, index or loop condition at run
time and runs the chosen subgraph, so a data-dependent branch or trip count needs neither a
recompile nor a graph break.

As torch does (with fake tensors), every branch is traced, also the one not taken, so each
branch's Python side effects happen during the recording. What cannot be captured inside a
branch or body (``.item()``, a Python ``if`` on a tensor), or a function raising on the real
operands (a branch not taken may: torch's fake tensors hold no values to fail on), is a graph
break of the whole function, or the ``fullgraph=True`` error naming the line.

Gradients: an operator with a ``vjp`` (cond, switch, scan) records its node with an autograd
node whose backward is written with control-flow operators again (cond's: a cond over each
branch's vector-Jacobian product, the branch's ops then their backward traced into a
subgraph; scan's: a reverse scan), so a backward recorded with the forward (``ember.compile``
of a training step, or of a forward whose gradients are wanted) holds those nodes as well. The
other operators' gradients come from replaying their node with autograd.
"""
import contextlib
import contextvars
import re
import threading

import numpy as np

from .._ops import core as _core
from .._tensor import Tensor
from .._creation import zeros_like
from ..autograd import grad
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad, is_grad_enabled
from . import replay
from .capture import Tracer, _meta, flatten
from .exc import TorchDynamoException, UncapturedHigherOrderOpError
from .graph import bind_subgraphs

__all__ = ["HigherOrderOp", "Traced", "refuse_step", "tracer", "trace", "add_node", "captured", "untraced", "branch_vjp", "vjp_of"]


class HigherOrderOp:
    """The target of a control-flow node: ``run(tensors, **kwargs)`` gives the node's results
    (a list of tensors), each :class:`~.graph.Subgraph` of the kwargs arriving as a function
    ``f(*tensors) -> list of tensors``. ``forward`` runs it on arrays (the node's kernel, as an
    op entry's), ``dispatch`` on tensors with autograd. ``vjp(kwargs, tensors, grads, needs)``,
    if the operator has one, gives a gradient per tensor (None where ``needs`` is false) with
    ops and control-flow operators (recorded while a graph is: see :func:`branch_vjp`)."""
    name = None
    vjp = None

    @classmethod
    def forward(cls, *arrays, **kwargs):
        """The node's kernel: :meth:`run` on arrays (as tensors, without autograd), the results
        as a tuple of arrays."""
        kwargs = {k: _on_arrays(v) if callable(v) else v for k, v in kwargs.items()}
        with no_grad():
            outs = cls.run([Tensor._make(np.asarray(a)) for a in arrays], **kwargs)
        return tuple(t._data for t in outs)

    @classmethod
    def dispatch(cls, *tensors, **kwargs):
        """:meth:`run` on tensors, with autograd: the results as a tuple of tensors."""
        kwargs = {k: _on_tensors(v) if callable(v) else v for k, v in kwargs.items()}
        return tuple(cls.run(list(tensors), **kwargs))


def _on_arrays(run):
    return lambda *tensors: [Tensor._make(np.asarray(a)) for a in run([t._data for t in tensors])]


def _on_tensors(run):
    return lambda *tensors: list(run(list(tensors)))


# ---- capture --------------------------------------------------------------------------------
class _Broke(Exception):
    """A graph break inside a branch: the operator runs eagerly (the function is not replayed)."""


def tracer():
    """The tracer recording now on this thread (the innermost, inside a branch being traced), or None."""
    for o in reversed(_core.OBSERVERS):
        if isinstance(o, Tracer) and o.thread == threading.get_ident():
            return o
    return None


@contextlib.contextmanager
def _swapped(old, new):
    observers = _core.OBSERVERS
    at = observers.index(old)
    if new is None:
        observers.pop(at)
    else:
        observers[at] = new
    try:
        yield
    finally:
        if new is None:
            observers.insert(at, old)
        else:
            observers[observers.index(new)] = old


def untraced(outer):
    """A context in which ops run without being recorded by ``outer``."""
    return _swapped(outer, None)


class _SubTracer(Tracer):
    """Records one branch or body: its inputs are placeholders made up front; a tensor from
    outside becomes a placeholder too, lifted from the outer graph (``lifted``)."""

    def __init__(self, outer, inputs):
        super().__init__({}, outer.fullgraph)
        self.outer, self.breaks, self.lifted, self.backward = outer, outer.breaks, [], _IN_VJP.get()
        for t in inputs:
            key = id(t._data)
            name = outer.value[key].name if key in outer.value else outer.known.get(key, (None, "arg"))[1]
            node = self.graph.placeholder(name, _meta(t))
            self.value[id(t._data)] = self.placeholder_of[id(t._data)] = node
            self.keep.append(t._data)

    def node(self, t):
        key = id(t._data)
        if key in self.value or key in self.stale:
            return super().node(t)
        outer = self.outer.node(t)
        node = self.graph.placeholder(outer.name, _meta(t))
        self.lifted.append((outer, t))
        self.value[key] = self.placeholder_of[key] = node
        self.keep.append(t._data)
        return node

    def attr(self, value, op):
        """An op's index array from outside the function (a constant it made, an argument's or a
        closure's tensor, a value computed before the operator) is lifted as a tensor is: the
        outer graph finds its node (or breaks), and the subgraph takes it as a placeholder."""
        if not isinstance(value, np.ndarray) or id(value) in self.value:
            return super().attr(value, op)
        outer = self.outer.attr(value, op)
        if outer is None:  # a graph break, recorded outside
            return None
        t = Tensor._make(value)  # (known to the outer tracer by now: no constant of its own)
        node = self.graph.placeholder(outer.name, _meta(t))
        self.lifted.append((outer, t))
        self.value[id(value)] = self.placeholder_of[id(value)] = node
        self.keep.append(value)
        return node

    def node_enter(self, node):
        if self.backward:  # a vector-Jacobian product (see vjp_of)
            return super().node_enter(node)
        self.graph_break("backward run inside a control-flow operator's function")

    def op_enter(self, op, inputs, attrs):
        refuse_step(op)
        return super().op_enter(op, inputs, attrs)

    def graph_break(self, reason):
        self.outer.graph_break(reason)


def refuse_step(op):
    """Raises torch's UncapturedHigherOrderOpError where ``op`` is an optimizer's update (its
    ``hyperparameters``), before it writes: every branch of an operator runs (traced here; eagerly,
    the one not taken on copies for its reads), so the step would be taken in the branch not taken."""
    if getattr(op, "hyperparameters", None):
        raise UncapturedHigherOrderOpError(
            "This higher order operator doesn't work unless it is captured completely with torch.compile. "
            f"Got graph break/error: {op.name} (an optimizer's step) writes into the parameters inside a "
            "control-flow operator's function")


class Traced:
    """A traced function: its ``graph``, the Python ``result`` of the traced call, and the
    ``lifted`` (outer node, tensor) pairs its graph takes after the inputs."""

    def __init__(self, graph, result, lifted, n_inputs):
        self.graph, self.result, self.lifted, self.n_inputs = graph, result, lifted, n_inputs


def trace(outer, fn, args, what):
    """Runs ``fn(*args)`` recording it into a new graph whose first placeholders are the
    tensors of ``args``; returns a :class:`Traced`. Inside an operator's ``vjp``, ``fn`` may
    run autograd's backward (recorded, not a graph break).

    Raises:
        UncapturedHigherOrderOpError: ``fn`` writes into a tensor it did not make (``what``
            names the function).
    """
    inputs = flatten(args)
    breaks = len(outer.breaks)
    sub = _SubTracer(outer, inputs)
    failed = None
    with _swapped(outer, sub):
        try:
            result = fn(*args)
        except TorchDynamoException:
            raise
        except Exception as e:  # torch traces fake tensors: a branch not taken may fail on these values
            failed = e
    if failed is not None:
        try:
            outer.graph_break(f"{what} raised {type(failed).__name__} when traced on the example operands: {failed}")
        except TorchDynamoException as e:  # fullgraph=True: the branch's own error as the cause
            raise e from failed
    if len(outer.breaks) > breaks or failed is not None:
        raise _Broke
    sub.graph.output([sub.node(t) for t in flatten(result)])
    if sub.graph.mutations:
        names = ", ".join(p.name for p, _ in sub.graph.mutations)
        raise UncapturedHigherOrderOpError(f"{what} writes into its input {names}: control-flow "
                                           f"operators do not support input mutation")
    outer.keep += sub.keep  # no array id is reused while the recording lasts
    return Traced(sub.graph, result, sub.lifted, len(inputs))


def add_node(outer, cls, tensors, subgraphs, **kwargs):
    """Adds the node ``cls(*tensors, *lifted, **subgraphs, **kwargs)`` to ``outer``'s graph,
    ``subgraphs`` mapping kwarg names to :class:`Traced` functions; computes its results on the
    real tensors (with autograd, unrecorded: through :class:`_Differentiable` for an operator
    with a ``vjp``) and returns them, bound to the node's outputs."""
    union = []
    for traced in subgraphs.values():
        union += [(n, t) for n, t in traced.lifted if all(n is not u for u, _ in union)]
    for traced in subgraphs.values():  # every subgraph takes the same args, in the same order
        g = traced.graph
        have = dict(zip((n for n, _ in traced.lifted), g.placeholders[traced.n_inputs:]))
        ordered = g.placeholders[:traced.n_inputs] + [have[n] if n in have else g.placeholder(n.name, _meta(t))
                                                      for n, t in union]
        g.placeholders[:] = ordered
        g.nodes[:len(ordered)] = ordered
    tensors = list(tensors) + [t for _, t in union]
    kwargs.update({k: outer.graph.subgraph(re.sub(r"_\d+$", "", k), traced.graph)  # branch_graph_1
                   for k, traced in subgraphs.items()})
    with untraced(outer):
        if cls.vjp is not None and is_grad_enabled() and any(t.requires_grad for t in tensors):
            outs = _Differentiable.apply(cls, kwargs, *tensors)
        else:
            outs = cls.dispatch(*tensors, **bind_subgraphs(kwargs, replay.dispatch))
    node = outer.graph.call_op(cls, [outer.node(t) for t in tensors], kwargs, {"num_outputs": len(outs)})
    outer.bind(outs, node)
    outer.control_flow_grad |= cls.vjp is None and any(t.requires_grad for t in outs)
    return list(outs)


_IN_VJP = contextvars.ContextVar("in_vjp", default=False)  # functions traced now may run backward


class _Differentiable(Function):
    """Autograd of a control-flow node recorded in a graph: the backward is its operator's ``vjp``."""

    @staticmethod
    def forward(ctx, cls, kwargs, *tensors):
        ctx.cls, ctx.kwargs = cls, kwargs
        ctx.save_for_backward(*tensors)
        return tuple(cls.dispatch(*tensors, **bind_subgraphs(kwargs, replay.dispatch)))

    @staticmethod
    def backward(ctx, *grads):
        token = _IN_VJP.set(True)
        try:
            return (None, None, *ctx.cls.vjp(ctx.kwargs, ctx.saved_tensors, grads, ctx.needs_input_grad[2:]))
        finally:
            _IN_VJP.reset(token)


def branch_vjp(cls, kwargs, tensors, grads, needs):
    """The ``vjp`` of a branching operator (cond, switch: ``tensors[0]`` picks the subgraph
    that takes ``tensors[1:]``): ``cls(tensors[0], *operands, *grads)`` over each branch's
    vector-Jacobian product. While a graph is recorded, that node is added to it (each product
    traced into a subgraph: the recorded backward holds the taken branch's backward); otherwise
    it runs."""
    branches = {k: v for k, v in kwargs.items() if hasattr(v, "graph")}
    others = {k: v for k, v in kwargs.items() if k not in branches}
    # torch.cond's gradients: zeros for what some branch reads, None for what none reads
    read = [any(b.graph.placeholders[i].users for b in branches.values()) for i in range(len(tensors) - 1)]
    needs = [needs[0]] + [need and r for need, r in zip(needs[1:], read)]
    products = {k: vjp_of(replay.dispatch(b.graph), len(b.graph.placeholders), needs[1:])
                for k, b in branches.items()}
    args = [*tensors, *grads]
    outer = tracer()
    if outer is None:
        outs = cls.run(args, **products, **others)
    else:
        traced = {k: trace(outer, f, args[1:], f"the backward of {cls.name}'s {k}") for k, f in products.items()}
        outs = add_node(outer, cls, args, traced, **others)
    got = iter(outs)
    return [None] + [next(got) if need else None for need in needs[1:]]


def vjp_of(run, n, needs):
    """``f(*inputs, *grads) -> [gradient of each of the n inputs that needs one]`` of ``run``
    (``run(list of n tensors) -> list of tensors``, replayed with autograd, then its backward
    with ``grads`` for its outputs; zeros for an input it does not use)."""
    def vjp(*args):
        leaves = [x.detach().requires_grad_() if need else x for x, need in zip(args[:n], needs)]
        with enable_grad():
            outs = run(leaves)
        pairs = [(o, g) for o, g in zip(outs, args[n:]) if o.requires_grad]
        wanted = [x for x, need in zip(leaves, needs) if need]
        got = grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True) if pairs else \
            [None] * len(wanted)
        return [zeros_like(x) if g is None else g for x, g in zip(wanted, got)]
    return vjp


def captured(capture, eager):
    """``capture()``, or ``eager()`` when a graph break inside a traced function (recorded
    on the outer tracer) means the function will not be replayed anyway."""
    try:
        return capture()
    except _Broke:
        return eager()
