"""``replace_pattern`` (torch.fx.replace_pattern): find every non-overlapping occurrence of a
traced pattern in a GraphModule's graph and replace it with a traced replacement."""
from typing import NamedTuple

from ._symbolic_trace import symbolic_trace
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """``anchor``: the pattern's returned node; ``nodes_map``: pattern node -> matched node."""
    anchor: Node
    nodes_map: dict


def replace_pattern(gm, pattern, replacement):
    """Replaces each occurrence of ``pattern`` in ``gm.graph`` with ``replacement`` and
    recompiles ``gm``; returns the :class:`Match` list.

    ``pattern`` and ``replacement`` are functions (or modules) of the same arguments, traced
    with :func:`symbolic_trace`; ``pattern`` returns one value. An occurrence is the same
    operations on the same constants, its arguments bound to any nodes; values it computes
    inside may not be read outside it. Occurrences are taken in graph order, never overlapping.

    Raises:
        ValueError: ``pattern`` returns more than one value.
    """
    pattern_graph = symbolic_trace(pattern).graph
    replacement_graph = symbolic_trace(replacement).graph
    inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    anchor = next(n for n in pattern_graph.nodes if n.op == "output").args[0]
    if not isinstance(anchor, Node):
        raise ValueError("replace_pattern: the pattern must return a single value")
    matches, taken = [], set()
    for node in list(gm.graph.nodes):
        nodes_map = {}
        if node in taken or not _match(anchor, node, nodes_map):
            continue
        inside = {m for p, m in nodes_map.items() if p.op != "placeholder"}
        if inside & taken or any(u not in inside for m in inside - {node} for u in m.users):
            continue
        taken |= inside
        matches.append(Match(node, nodes_map))
        with gm.graph.inserting_before(next(iter(node.users), node.next)):  # as torch: before the first reader
            values = {r: nodes_map[p] for r, p in zip((n for n in replacement_graph.nodes if n.op == "placeholder"),
                                                      inputs)}
            result = gm.graph.graph_copy(_without_placeholders(replacement_graph), values)
        node.replace_all_uses_with(result)
        for m in reversed([n for n in gm.graph.nodes if n in inside]):
            gm.graph.erase_node(m)
    gm.recompile()
    return matches


class _without_placeholders:
    """A graph's nodes but its placeholders, for ``Graph.graph_copy`` with those bound."""

    def __init__(self, graph):
        self.nodes = [n for n in graph.nodes if n.op != "placeholder"]


def _match(p, g, nodes_map):
    """Whether pattern node ``p`` matches graph node ``g`` (binding ``nodes_map``)."""
    if p in nodes_map:
        return nodes_map[p] is g
    if p.op == "placeholder":
        nodes_map[p] = g
        return True
    if p.op != g.op or p.target != g.target or p.kwargs.keys() != g.kwargs.keys():
        return False
    nodes_map[p] = g
    return _match_args(p.args, g.args, nodes_map) and all(_match_args(p.kwargs[k], g.kwargs[k], nodes_map)
                                                           for k in p.kwargs)


def _match_args(p, g, nodes_map):
    if isinstance(p, Node):
        return isinstance(g, Node) and _match(p, g, nodes_map)
    if isinstance(p, (list, tuple)):
        return type(p) is type(g) and len(p) == len(g) and all(_match_args(a, b, nodes_map) for a, b in zip(p, g))
    return not isinstance(g, Node) and type(p) is type(g) and p == g
