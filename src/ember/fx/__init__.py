"""``torch.fx``'s names over ember's graph IR (:mod:`ember.compiler.graph`): ``GraphModule``;
``ember.fx.experimental.dynamic_spec`` (declared dynamic shapes)."""
from .graph_module import GraphModule

__all__ = ["GraphModule"]
