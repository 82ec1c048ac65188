"""Running a captured graph without code generation: the reference runners.

``interpret(graph)`` calls each node's ``target.forward`` on NumPy arrays (no dispatcher, no
autograd; NumPy's floating-point warnings off, as the dispatcher's), then performs the
mutations: the stand-in for the code generator's ``compile_graph`` and the ``aot_eager``
backend. ``dispatch(graph)`` runs each node through ``ember._ops.apply`` on tensors, so results carry autograd history: the ``eager`` backend, and
what runs a forward-only graph whose outputs need gradients; a node the call ran under
``enable_grad`` or ``no_grad`` inside it (``meta["grad_enabled"]``) runs so again. A control-flow node runs its
subgraphs with the same runner as its graph (``dispatch`` on tensors through ``target.dispatch``).
"""
import operator

import numpy as np

from .._backend import quiet, restore
from .._ops.core import apply, reads_indices, write_into
from .._tensor import Tensor
from ..autograd.grad_mode import set_grad_enabled
from .graph import Node, bind_subgraphs, kwarg_nodes, nodes_in
from .symbolic import evaluate, free_symbols

__all__ = ["interpret", "dispatch", "unfollowed_writes"]


def _plan(graph, compile):
    """(node index, target, args with node slots, kwargs) per call, and the slot of each node;
    subgraphs in kwargs become ``compile(subgraph)``."""
    slot = {n: i for i, n in enumerate(graph.placeholders)}
    steps = []
    for n in graph.nodes:
        if n.op == "call_op":
            slot[n] = len(slot)
            kwargs = bind_subgraphs(n.kwargs, compile)
            if kwarg_nodes(n):  # index arrays: values of the graph
                kwargs = _KwargSlots({k: _slots(v, slot) for k, v in kwargs.items()})
            steps.append((slot[n], n.target, _slots(n.args, slot), kwargs,
                          bool(free_symbols((n.args, n.kwargs))), n.meta.get("grad_enabled")))
    outputs = [_slots(v, slot) for v in graph.outputs]
    mutations = [(slot[p], slot[v]) for p, v in graph.mutations]
    return len(slot), steps, outputs, mutations


class _KwargSlots(dict):
    """The kwargs of a node with values in them (index arrays): read per call."""


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _slots(value, slot):
    if isinstance(value, Node):
        return _Slot(slot[value])
    if isinstance(value, tuple):
        return tuple(_slots(v, slot) for v in value)
    if isinstance(value, list):
        return [_slots(v, slot) for v in value]
    return value


def _read(value, env):
    if type(value) is _Slot:
        return env[value.i]
    if isinstance(value, (tuple, list)):
        return type(value)(_read(v, env) for v in value)
    return value


def _arrays(value):
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, (tuple, list)):
        return type(value)(_arrays(v) for v in value)
    return value


def _tensors(values):
    """The tensors in ``values`` (and in the tuples and lists there)."""
    found = []
    for v in values:
        if isinstance(v, Tensor):
            found.append(v)
        elif isinstance(v, (tuple, list)):
            found += _tensors(v)
    return found


def interpret(graph):
    """A callable ``run(arrays) -> list of arrays`` that executes ``graph`` node by node
    (``run(arrays, sizes)`` for a graph with size symbols: ``sizes`` gives their values)."""
    size, steps, outputs, mutations = _plan(graph, interpret)
    n_inputs = len(graph.placeholders)

    def run(arrays, sizes=None):
        token = quiet()  # no NumPy RuntimeWarnings (log(0) is -inf), as the dispatcher's ops
        try:
            return steps_run(arrays, sizes)
        finally:
            restore(token)

    def steps_run(arrays, sizes):
        env = list(arrays) + [None] * (size - n_inputs)
        for i, target, args, kwargs, symbolic, _ in steps:
            args = [_read(a, env) for a in args]
            if type(kwargs) is _KwargSlots:
                kwargs = {k: _read(v, env) for k, v in kwargs.items()}
            if symbolic:
                args, kwargs = evaluate((args, kwargs), sizes)
            if target is operator.getitem:
                env[i] = args[0][args[1]]
                continue
            out = target.forward(*args, **kwargs)
            env[i] = out if type(out) is np.ndarray or type(out) is tuple else np.asarray(out)
        results = [_read(v, env) for v in outputs]
        for p, v in mutations:
            np.copyto(env[p], env[v], casting="unsafe")
        return results
    return run


def _apply(target, args, kwargs, indices):
    """One node through the dispatcher (a control-flow node through its ``dispatch``)."""
    if hasattr(target, "dispatch"):
        return target.dispatch(*args, **kwargs)
    # an index tensor written in place before the backward raises, as eagerly
    return reads_indices(apply(target, *args, **kwargs), indices)


def dispatch(graph):
    """A callable ``run(tensors) -> list of tensors`` that replays ``graph`` through ``apply``
    (with autograd), writing the mutations with ``write_into`` after it, but a value without
    history into a tensor requiring grad (an optimizer's step), written as it is computed
    (:func:`_early_writes`); ``run(tensors, sizes)`` for a graph with size symbols."""
    size, steps, outputs, mutations = _plan(graph, dispatch)
    n_inputs = len(graph.placeholders)
    early = _early_writes(steps, mutations, n_inputs)

    def run(tensors, sizes=None):
        env = list(tensors) + [None] * (size - n_inputs)
        for i, target, args, kwargs, symbolic, grad_enabled in steps:
            args = [_read(a, env) for a in args]
            indices = ()
            if type(kwargs) is _KwargSlots:  # an op's attrs are arrays, not tensors
                kwargs = {k: _read(v, env) for k, v in kwargs.items()}
                indices = _tensors(kwargs.values())
                kwargs = {k: _arrays(v) for k, v in kwargs.items()}
            if symbolic:
                args, kwargs = evaluate((args, kwargs), sizes)
            if target is operator.getitem:
                env[i] = operator.getitem(*args)
            elif grad_enabled is not None:  # an op the call ran under enable_grad / no_grad
                with set_grad_enabled(grad_enabled):
                    env[i] = _apply(target, args, kwargs, indices)
            else:
                env[i] = _apply(target, args, kwargs, indices)
            if i in early and not env[i].requires_grad and env[early[i]].requires_grad:
                # A value without history written into a tensor requiring grad (an optimizer's
                # step into its parameters, under no_grad: a leaf refuses a recorded write) is
                # written at once, and the ops after read the tensor, as eagerly: gradients
                # flow into the parameter, not into a value that requires none.
                written = env[early[i]]
                with set_grad_enabled(False):
                    write_into(written, env[i])
                env[i] = written
        results = [_read(v, env) for v in outputs]
        for p, v in mutations:
            value = env[v]
            if v in early and value is env[p]:  # (written above)
                continue
            # without history, written so, the target keeps its own, where a recorded write
            # would tie it to the value with a zero gradient
            with set_grad_enabled(value.requires_grad):
                write_into(env[p], value)
        return results
    return run


def _early_writes(steps, mutations, n_inputs):
    """``{value slot: placeholder slot}`` of the ``mutations`` a dispatched replay may write as
    soon as the value is computed: no op after it reads the placeholder's old value (nor is the
    value written into another)."""
    last_read = {}
    for i, _, args, kwargs, *_ in steps:
        for slot in _slots_in((args, list(kwargs.values()))):
            last_read[slot] = i
    values = [v for _, v in mutations]
    return {v: p for p, v in mutations if v >= n_inputs and last_read.get(p, -1) <= v and values.count(v) == 1}


def _slots_in(value):
    if type(value) is _Slot:
        return [value.i]
    if isinstance(value, (tuple, list)):
        return [i for v in value for i in _slots_in(v)]
    return []


def unfollowed_writes(graph):
    """Whether a replay on tensors (:func:`dispatch`) may not follow a write of ``graph`` into a
    placeholder requiring grad, whose readers after it must read the tensor: one value written
    into two placeholders (``w1.copy_(src); w2.copy_(src)``: which one an op read is lost), or
    the placeholder's old value read by an op after the value (``new = w * 0.5; y = w * 3;
    w.copy_(new)``: the write cannot come first)."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    last_read = {}
    for n in graph.nodes:
        if n.op == "call_op":
            for a in nodes_in((n.args, n.kwargs)):
                last_read[a] = order[n]
    values = [v for _, v in graph.mutations]
    return any(p.meta.get("requires_grad") and (values.count(v) > 1 or last_read.get(p, -1) > order.get(v, -1))
               for p, v in graph.mutations)
