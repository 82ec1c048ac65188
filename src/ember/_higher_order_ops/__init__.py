"""Higher-order control-flow operators (``torch._higher_order_ops``): functions that take
functions. These are their eager halves; the compiler captures them as single graph nodes.

``cond`` and ``switch`` pick a branch, ``while_loop`` repeats a body, ``scan``, ``map`` and
``associative_scan`` run a function along a dimension.
"""
from .associative_scan import associative_scan
from .cond import cond
from .map import map
from .scan import scan
from .switch import switch
from .while_loop import while_loop

__all__ = ["associative_scan", "cond", "map", "scan", "switch", "while_loop"]
