"""ember's compiler (``torch.compiler``): ``ember.compile`` captures what a function or module
does into a :class:`~.graph.Graph` (capture.py), guards it (guards.py) and runs it through a
backend (replay.py, or the code generator in backends/)."""
from .eval_frame import compile, disable, is_compiling, reset, set_stance
from .graph import Graph, Node

__all__ = ["compile", "disable", "is_compiling", "reset", "set_stance", "Graph", "Node"]
