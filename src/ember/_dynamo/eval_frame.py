"""``torch._dynamo.eval_frame``'s name programs check against: ``isinstance(model, OptimizedModule)``."""
from ..compiler.eval_frame import OptimizedModule

__all__ = ["OptimizedModule"]
