"""Utilities (``torch.utils``): ``ember.utils.data`` holds datasets, samplers and the DataLoader;
``ember.utils.memory_footprint`` reports where a training step's memory goes.

Submodules load on first attribute access, so ``ember.utils.data`` works after ``import ember``
without importing every utility up front.
"""
import importlib

from .memory import memory_footprint

__all__ = ["data", "memory_footprint"]


def __getattr__(name):
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'") from None
