"""``torch.autograd.variable``: old programs import ``Variable`` from here
(``from torch.autograd.variable import Variable``); it is :func:`ember.autograd.Variable`."""
from . import Variable

__all__ = ["Variable"]
