"""``torch._dynamo``'s names where real programs reach for them: ``reset``, ``explain``,
``config.recompile_limit``, ``utils.counters``, ``disable``, ``list_backends``, ``exc``,
``mark_dynamic``, ``maybe_mark_dynamic``, ``mark_static``."""
from ..compiler.dynamic import mark_dynamic, mark_static, maybe_mark_dynamic
from ..compiler.eval_frame import BACKENDS, OptimizedModule, config, disable, reset
from . import exc, testing, utils
from .explain import explain

__all__ = ["reset", "explain", "config", "disable", "list_backends", "OptimizedModule", "exc", "testing", "utils",
           "mark_dynamic", "maybe_mark_dynamic", "mark_static"]


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names ``ember.compile(backend=...)`` accepts."""
    return sorted(BACKENDS)
