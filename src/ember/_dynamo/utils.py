"""``torch._dynamo.utils.counters``: ``counters["stats"]["unique_graphs"]`` and friends."""
from ..compiler.eval_frame import counters

__all__ = ["counters"]
