"""``torch._inductor``'s names real scripts reach for: ``config`` (:mod:`.config`)."""
from . import config

__all__ = ["config"]
