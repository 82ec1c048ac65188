"""ember's compiler: ``ember.compile`` captures a function into a :class:`~.graph.Graph` and runs it."""
from .graph import Graph, Node

__all__ = ["Graph", "Node"]
