"""``torch._dynamo.utils.counters``: ``counters["stats"]["unique_graphs"]`` and friends."""
from ..compiler.counting import counters

__all__ = ["counters"]
