"""``torch.fx``: symbolic tracing of modules and functions into graphs that print and run as
Python (``symbolic_trace``, ``Tracer``, ``Graph``, ``Node``, ``Proxy``, ``GraphModule``,
``wrap``, ``replace_pattern``), ``Interpreter``/``Transformer`` for passes, and
``passes.shape_prop.ShapeProp``; the compiler's captured graphs run as
:class:`~ember.fx.graph_module.CapturedGraphModule`; ``ember.fx.experimental.dynamic_spec``
(declared dynamic shapes)."""
from ._symbolic_trace import Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer", "Transformer", "map_arg", "replace_pattern",
           "symbolic_trace", "wrap"]
