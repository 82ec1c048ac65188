"""A small stand-in for the capture's graph IR (docs: /work/brief/COMPILER_IR.md shapes):
builds Graphs node by node while running each kernel on example arrays, so a test has the
graph and the reference values (each node's ``forward``) side by side."""
import operator

import numpy as np

from ember._dtype import from_numpy_dtype
from ember._ops import OPS


class Node:
    def __init__(self, op, name, target, args=(), kwargs=None):
        self.op, self.name, self.target = op, name, target
        self.args, self.kwargs = tuple(args), dict(kwargs or {})
        self.meta, self.users = {}, []

    def __repr__(self):
        return self.name


class Graph:
    def __init__(self):
        self.nodes, self.placeholders, self.outputs, self.mutations = [], [], [], []


class Builder:
    """``b.input(name, array)``, ``b.call("Add", x, y, alpha=2)``, ``b.output(...)``,
    ``b.mutate(placeholder, value)``; ``b.values[node]`` holds the reference arrays."""

    def __init__(self):
        self.graph, self.values, self._count = Graph(), {}, {}

    def _add(self, node, value):
        value = np.asarray(value)
        node.meta = {"shape": value.shape, "dtype": from_numpy_dtype(value.dtype), "requires_grad": False}
        for a in node.args:
            if isinstance(a, Node):
                a.users.append(node)
        self.graph.nodes.append(node)
        self.values[node] = value
        return node

    def input(self, name, array):
        node = self._add(Node("placeholder", name, name), array)
        self.graph.placeholders.append(node)
        return node

    def call(self, op_name, *args, **kwargs):
        target = operator.getitem if op_name == "getitem" else OPS[op_name]
        k = self._count[op_name] = self._count.get(op_name, 0) + 1
        node = Node("call_op", f"{op_name.lower()}_{k}", target, args, kwargs)
        arrays = [self.values[a] if isinstance(a, Node) else a for a in args]
        with np.errstate(all="ignore"):
            value = arrays[0][arrays[1]] if op_name == "getitem" else target.forward(*arrays, **kwargs)
        return self._add(node, value)

    def mutate(self, placeholder, value):
        self.graph.mutations.append((placeholder, value))

    def output(self, *nodes):
        out = Node("output", "output", "output", (tuple(nodes),))
        for n in nodes:
            n.users.append(out)
        self.graph.nodes.append(out)
        self.graph.outputs = list(nodes)
        return self.graph
