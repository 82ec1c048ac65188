"""``ember.distributed.nn``: collectives that autograd differentiates through
(https://pytorch.org/docs/stable/distributed.html#autograd-enabled-communication-primitives)."""
from .functional import all_reduce

__all__ = ["all_reduce"]
