"""``torch.fx``'s names over ember's graph IR (:mod:`ember.compiler.graph`): ``GraphModule``."""
from .graph_module import GraphModule

__all__ = ["GraphModule"]
