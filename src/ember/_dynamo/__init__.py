"""``torch._dynamo``'s names where real programs reach for them: ``reset``, ``explain``,
``config.recompile_limit``, ``utils.counters``, ``disable``, ``list_backends``, ``exc``,
``mark_dynamic``, ``maybe_mark_dynamic``, ``mark_static``, ``graph_break``, ``allow_in_graph``,
``mark_static_address``, ``eval_frame.OptimizedModule``, ``export``."""
from ..compiler.dynamic import mark_dynamic, mark_static, maybe_mark_dynamic
from ..compiler.eval_frame import OptimizedModule, config, reset
from ..compiler.markers import allow_in_graph, disable, graph_break, mark_static_address
from ..compiler.options import list_backends
from . import eval_frame, exc, testing, utils
from .eval_frame import export
from .explain import explain

__all__ = ["reset", "explain", "config", "disable", "list_backends", "OptimizedModule", "exc", "testing", "utils",
           "mark_dynamic", "maybe_mark_dynamic", "mark_static", "graph_break", "allow_in_graph",
           "mark_static_address", "eval_frame", "export"]

