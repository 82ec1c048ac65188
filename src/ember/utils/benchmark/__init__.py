"""Timing Python statements and comparing the results (``torch.utils.benchmark``).

``Timer(stmt, setup, globals=...).blocked_autorange()`` gives a :class:`Measurement` (median,
IQR, ...); :class:`Compare` lays many of them out as tables.
"""
from .common import Measurement, TaskSpec, select_unit, trim_sigfig, unit_to_english
from .compare import Colorize, Compare
from .timer import Language, Timer

__all__ = ["Timer", "Measurement", "Compare", "Colorize", "Language", "TaskSpec", "select_unit",
           "trim_sigfig", "unit_to_english"]
