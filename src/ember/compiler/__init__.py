"""ember's compiler (``torch.compiler``): ``ember.compile`` captures what a function or module
does into a :class:`~.graph.Graph` (capture.py), guards it (guards.py) and runs it through a
backend (replay.py, or the code generator in backends/)."""
from .eval_frame import compile, reset, set_stance
from .markers import allow_in_graph, cudagraph_mark_step_begin, disable, is_compiling, is_dynamo_compiling
from .options import list_backends
from .graph import Graph, Node

__all__ = ["compile", "disable", "is_compiling", "reset", "set_stance", "Graph", "Node", "allow_in_graph",
           "cudagraph_mark_step_begin", "is_dynamo_compiling", "list_backends"]
