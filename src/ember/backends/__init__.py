"""``ember.backends``: ``mps.is_available()`` and friends, False on an install without them."""
from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
