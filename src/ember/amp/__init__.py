"""``ember.amp``: automatic mixed precision (``torch.amp``): :class:`autocast` runs matrix
products in a lower-precision dtype and loss-like ops in float32; :class:`GradScaler` scales
losses so small gradients survive float16 and skips steps whose gradients overflow."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "GradScaler"]
