"""Outputs that are views of an input: remade from the input after each replay, as torch's are.

torch.compile returns a view of an input (``x[:, ::2]``, ``x.t()``, ``x[:1].expand(3, -1)``, a
view of a view, the input itself) as that view: the input's storage, strides and
storage_offset, ``_base`` the input's base, writes through it reaching the input, and its
gradient flowing through the view's own node (``SliceBackward0``): AOTAutograd leaves such
outputs out of the compiled graph and regenerates them from the input after it runs, replaying
the view ops (torch/_functorch/_aot_autograd/runtime_wrappers.py, ``gen_alias_from_base``).

ember does the same. The capture notes each returned tensor that eagerly shares memory with a
tensor the graph reads (an argument, a parameter or its ``.grad``, a closure's or global's
tensor) and is made from that placeholder by view ops alone (``view_as_real``, ``conj`` among them;
:func:`input_views`); the joint graph records no backward for those outputs; the graph the
backends compile leaves them out (:func:`without_views`); and every replay applies the view ops to the call's own tensor
through the dispatcher (:func:`remake`), so the result is what eager gives: a view with eager's
strides, version counter and autograd node. A dynamic graph's view ops carry their fitted
sizes (``View(x, shape=(2, 3*s0))``), evaluated per call.

A returned tensor that is another result (``return y, y``) or eager's view of one made by view
ops alone (``return y, y[1]``, ``return y.t(), y``) is remade the same way from that result after
each replay (:func:`output_views`), as AOTAutograd regenerates an output aliasing another: the
same object twice, or a view whose ``_base`` is the other result, writes through one seen in the
other, gradients flowing through the view's node into the compiled graph's.

The views' nodes stay in the captured graph (``Capture.graph``: what the logs print, what a
dynamic fit compares). A view of a value written into an input (``x.add_(1); return x[::2]``)
is remade from the input after the write.
"""
import copy

import numpy as np

from .._backend import is_view_of
from .._ops.core import apply, named
from .._ops.complex import Conj, conj
from .._ops.shape import Detach
from .graph import Node, kwarg_nodes
from .sources import fetcher
from .symbolic import evaluate, free_symbols

__all__ = ["View", "input_views", "output_views", "returned_views", "hidden_bases", "without_views", "remake"]

_VIEWED = ("input", "param", "tensor", "grad", "input_grad")  # the placeholders a returned view may be remade from
_DETACH = Node("call_op", "detach", Detach)  # (a returned detach() the graph holds as its base's node)


class View:
    """Output ``position`` (in the flattened return value): the view ops ``chain`` (nodes,
    applied in order) of placeholder ``placeholder`` (its index in the captured graph), or of
    output ``base`` (a position, with ``placeholder`` None); ``name``: the class name of eager's
    ``grad_fn`` (``TBackward0`` for ``t()``, which the graph holds as a ``Permute``), None
    without one."""

    __slots__ = ("position", "placeholder", "chain", "name", "base")

    def __init__(self, position, placeholder, chain, name, base=None):
        self.position, self.placeholder, self.chain, self.name = position, placeholder, chain, name
        self.base = base


def _is_view_node(node):
    """Whether ``node`` is a one-input view op (``detach`` and ``conj`` among them)."""
    target = node.target
    return node.op == "call_op" and (getattr(target, "is_view", False) or target is Detach or target is Conj) \
        and len(node.args) == 1 and isinstance(node.args[0], Node) and not kwarg_nodes(node)


def _chain(node, graph):
    """``(placeholder, [view nodes from it to node])`` when ``node`` is made from a placeholder
    by one-input view ops only (``detach`` among them; or is the placeholder), else None. A node written into a
    placeholder as its last write stands for that placeholder (the replay writes it first)."""
    written = {id(v): p for p, v in graph.mutations}
    chain = []
    while node.op == "call_op" and id(node) not in written:
        if not _is_view_node(node):
            return None
        chain.append(node)
        node = node.args[0]
    node = written.get(id(node), node)
    return (node, chain[::-1]) if node.op == "placeholder" else None


def input_views(graph, sources, world, tensors, nodes):
    """The :class:`View` of each of ``tensors`` (the returned tensors, whose graph values are
    ``nodes``; None: not in the graph) that eager made as a view of a placeholder's tensor."""
    views = []
    for position, (t, node) in enumerate(zip(tensors, nodes)):
        found = None if node is None or any(t is u for u in tensors[:position]) else _chain(node, graph)
        if found is None:  # (a tensor returned twice is the earlier one again: output_views)
            continue
        placeholder, chain = found
        k = graph.placeholders.index(placeholder)
        source = sources[k]
        if source[0] not in _VIEWED:
            continue
        viewed = fetcher(source)(world.inputs, None)
        if not is_view_of(t._data, viewed._data) and not _conj_view(t, chain, viewed):  # a reshape that copied
            continue
        name = None if t.grad_fn is None else type(t.grad_fn).__name__
        views.append(View(position, k, chain, name))
    return views


def output_views(tensors, nodes, remade=()):
    """The :class:`View` of each of ``tensors`` (returned, of graph values ``nodes``) that is an
    earlier returned tensor itself (``return y, y``), another's ``detach()`` (``y, y.detach()``,
    one array, no node of its own), or eager's view of another returned tensor made from its
    node by view ops alone (``y, y[1]``; ``y.t(), y``). ``remade``: the
    positions remade from an input (:func:`input_views`), none a base."""
    views, owner = [], {}
    for i, (t, node) in enumerate(zip(tensors, nodes)):
        if node is not None and i not in remade and all(t is not u for u in tensors[:i]):
            owner.setdefault(node, []).append(i)
    detached = {}  # one array, two tensors: the one that does not need a gradient is the other's detach()
    for positions in owner.values():
        base = next((i for i in positions if tensors[i].requires_grad), positions[0])
        for i in positions:
            if i != base and tensors[i]._data is tensors[base]._data and not tensors[i].requires_grad:
                detached[i] = base
                views.append(View(i, None, [_DETACH], None, base=base))
    for i, (t, node) in enumerate(zip(tensors, nodes)):
        same = next((j for j, u in enumerate(tensors[:i]) if u is t), None)
        if same is not None:
            views.append(View(i, None, [], None, base=same))
            continue
        if node is None or i in remade or i in detached or len([j for j in owner[node] if j not in detached]) > 1:
            continue
        chain = []
        while _is_view_node(node) and node.args[0] not in owner:
            chain.append(node)
            node = node.args[0]
        if not _is_view_node(node):
            continue
        chain.append(node)
        base = owner[node.args[0]]
        if len(base) == 1 and is_view_of(t._data, tensors[base[0]]._data):
            views.append(View(i, None, chain[::-1], None if t.grad_fn is None else type(t.grad_fn).__name__,
                              base=base[0]))
    return views


def returned_views(graph, sources, world, tensors, nodes):
    """The returned ``tensors`` (of graph values ``nodes``) a replay remakes as views: those of
    an input (:func:`input_views`), then those of another result (:func:`output_views`)."""
    views = input_views(graph, sources, world, tensors, nodes)
    return views + output_views(tensors, nodes, {v.position for v in views})


def hidden_bases(tensors, made):
    """The values a replay returns besides the returned ``tensors``, to remake those from: the
    ``_base`` of two or more of them that overlap in memory (``y[:1], y[0:]`` of a ``y`` the
    function does not return; a replay returning separate arrays would lose their overlap), none of
    them, computed by an op of the graph (``made(base)``; an input's base is no output: its views
    are remade from the input). AOTAutograd returns such an intermediate base too and regenerates
    the views from it (their ``_base`` is the graph's output)."""
    bases = []
    for t in tensors:
        base = t._base
        if base is None or any(base is u for u in (*tensors, *bases)) or not made(base):
            continue
        if any(u is not t and u._base is base and np.may_share_memory(t._data, u._data) for u in tensors):
            bases.append(base)
    return bases


def _conj_view(t, chain, viewed):
    """Whether ``t``, made by ``chain`` (a ``conj()`` among it), is eager's view of ``viewed``:
    ember's conj view holds conjugated values in memory of its own, kept in step with its base."""
    return any(n.target is Conj for n in chain) and t._base is not None \
        and t._base is (viewed if viewed._base is None else viewed._base)


def without_views(graph, views):
    """``graph`` without the outputs ``views`` remakes, nor the view nodes only those read: a
    shallow copy over the same nodes (the joint graph's split finds them by identity)."""
    if not views:
        return graph
    left = {v.position for v in views}
    outputs = [o for i, o in enumerate(graph.outputs) if i not in left]
    kept = set(n for n in outputs if isinstance(n, Node)) | {v for _, v in graph.mutations}
    dead = set()
    for view in views:
        for node in reversed(view.chain):
            if node not in kept and all(u.op == "output" or u in dead for u in node.users):
                dead.add(node)
    stripped = copy.copy(graph)
    stripped.nodes = [n for n in graph.nodes if n.op != "output" and n not in dead]
    stripped.output(outputs)
    return stripped


def remake(views, placeholders, results, tensors, sizes):
    """``results`` (the compiled graph's outputs) with each of ``views`` inserted at its position:
    its view ops applied to its tensor of this call (``tensors[placeholders[i]]`` for the i-th
    view, or the result at its ``base``), through the dispatcher; ``sizes``: a dynamic graph's
    symbols' values (else None)."""
    by_position = {v.position: (v, k) for v, k in zip(views, placeholders)}
    computed = iter(results)
    full = [None if i in by_position else next(computed) for i in range(len(results) + len(views))]

    def fill(i):
        view, k = by_position.pop(i)
        t = tensors[k] if view.base is None else full[view.base] if view.base not in by_position \
            else fill(view.base)
        for node in view.chain:
            kwargs = node.kwargs if sizes is None or not free_symbols(node.kwargs) else evaluate(node.kwargs, sizes)
            t = t.detach() if node.target is Detach else conj(t) if node.target is Conj \
                else apply(node.target, t, **kwargs)  # (eager's alias; conj's bit)
        if view.name is not None and view.chain and type(t.grad_fn).__name__ != view.name:
            named(t, view.name)
        full[i] = t
        return t
    for view in views:
        if view.position in by_position:
            fill(view.position)
    return full
