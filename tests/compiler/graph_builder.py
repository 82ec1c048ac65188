"""Builds graphs of the compiler's IR (:class:`ember.compiler.graph.Graph`) node by node while
running each kernel on example arrays, so a test has the graph and the reference values (each
node's ``forward``) side by side, without going through capture."""
import operator

import numpy as np

from ember._dtype import from_numpy_dtype
from ember._ops import OPS
from ember.compiler.graph import Graph


class Builder:
    """``b.input(name, array)``, ``b.call("Add", x, y, alpha=2)``, ``b.mutate(placeholder,
    value)``, ``b.output(*nodes) -> graph``; ``b.values[node]`` holds the reference arrays.
    Nodes are named as capture names them (``add``, ``add_1``, ...)."""

    def __init__(self):
        self.graph, self.values = Graph(), {}

    def _meta(self, value):
        return {"shape": value.shape, "dtype": from_numpy_dtype(value.dtype), "requires_grad": False}

    def input(self, name, array):
        array = np.asarray(array)
        node = self.graph.placeholder(name, self._meta(array))
        self.values[node] = array
        return node

    def call(self, op_name, *args, **kwargs):
        target = operator.getitem if op_name == "getitem" else OPS[op_name]
        arrays = [self.values.get(a, a) if hasattr(a, "users") else a for a in args]
        with np.errstate(all="ignore"):
            value = arrays[0][arrays[1]] if op_name == "getitem" else target.forward(*arrays, **kwargs)
        if isinstance(value, tuple):  # several results, picked by getitem nodes
            node = self.graph.call_op(target, args, kwargs, {"num_outputs": len(value)})
            self.values[node] = value
            return node
        value = np.asarray(value)
        node = self.graph.call_op(target, args, kwargs, self._meta(value))
        self.values[node] = value
        return node

    def mutate(self, placeholder, value):
        self.graph.mutate(placeholder, value)

    def output(self, *nodes):
        self.graph.output(nodes)
        return self.graph
