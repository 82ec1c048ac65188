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

The views' nodes stay in the captured graph (``Capture.graph``: what the logs print, what a
dynamic fit compares). A view of a value written into an input (``x.add_(1); return x[::2]``)
is remade from the input after the write.
"""
import copy

from .._backend import is_view_of
from .._ops.core import apply, named
from .._ops.complex import Conj, conj
from .._ops.shape import Detach
from .graph import Node, kwarg_nodes
from .sources import fetcher
from .symbolic import evaluate, free_symbols

__all__ = ["View", "input_views", "without_views", "remake"]

_VIEWED = ("input", "param", "tensor", "grad")  # the placeholders a returned view may be remade from


class View:
    """Output ``position`` (in the flattened return value): the view ops ``chain`` (nodes,
    applied in order) of placeholder ``placeholder`` (its index in the captured graph);
    ``name``: the class name of eager's ``grad_fn`` (``TBackward0`` for ``t()``, which the graph
    holds as a ``Permute``), None without one."""

    __slots__ = ("position", "placeholder", "chain", "name")

    def __init__(self, position, placeholder, chain, name):
        self.position, self.placeholder, self.chain, self.name = position, placeholder, chain, name


def _chain(node, graph):
    """``(placeholder, [view nodes from it to node])`` when ``node`` is made from a placeholder
    by one-input view ops only (``detach`` among them; or is the placeholder), else None. A node written into a
    placeholder as its last write stands for that placeholder (the replay writes it first)."""
    written = {id(v): p for p, v in graph.mutations}
    chain = []
    while node.op == "call_op" and id(node) not in written:
        target = node.target
        if not (getattr(target, "is_view", False) or target is Detach or target is Conj) \
                or len(node.args) != 1 or not isinstance(node.args[0], Node) or kwarg_nodes(node):
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
        found = None if node is None else _chain(node, graph)
        if found is None:
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
    view), through the dispatcher; ``sizes``: a dynamic graph's symbols' values (else None)."""
    results = list(results)
    for view, k in zip(views, placeholders):
        t = tensors[k]
        for node in view.chain:
            kwargs = node.kwargs if sizes is None or not free_symbols(node.kwargs) else evaluate(node.kwargs, sizes)
            t = t.detach() if node.target is Detach else conj(t) if node.target is Conj \
                else apply(node.target, t, **kwargs)  # (eager's alias; conj's bit)
        if view.name is not None and view.chain and type(t.grad_fn).__name__ != view.name:
            named(t, view.name)
        results.insert(view.position, t)
    return results
