"""Higher-order control-flow operators (``torch._higher_order_ops``): functions that take
functions. Eagerly they run their functions; while a function is recorded they become single graph nodes.

``cond`` and ``switch`` pick a branch, ``while_loop`` repeats a body, ``scan``, ``map`` and
``associative_scan`` run a function along a dimension. ``Cond``, ``Switch``, ``WhileLoop``,
``Scan``, ``Map`` and ``AssociativeScan`` are their graph nodes' targets (see
:mod:`ember.compiler.hop`).
"""
from .associative_scan import AssociativeScan, associative_scan
from .cond import Cond, cond
from .map import Map, map
from .scan import Scan, scan
from .switch import Switch, switch
from .while_loop import WhileLoop, while_loop

__all__ = ["associative_scan", "cond", "map", "scan", "switch", "while_loop",
           "AssociativeScan", "Cond", "Map", "Scan", "Switch", "WhileLoop"]
