"""``ember.backends``: ``mps.is_available()`` and friends, False on an install without them."""
from . import mps, cudnn

__all__ = ["mps", "cudnn"]
