"""``torch.signal``: window functions for spectral analysis (:mod:`ember.signal.windows`)."""
from . import windows

__all__ = ["windows"]
