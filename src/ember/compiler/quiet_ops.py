"""A recording's side-effect hook, off while ember's own ops run.

A recording (:func:`.capture.capture`) watches the user's code for input and output, computed
attribute reads and the globals it touches through a profile function
(:func:`.side_effects.breaking_io`), which Python calls on every call and return of a Python
function and of a C one. Inside an op the dispatcher applies (its shape rule, its kernel, the
tracer's bookkeeping) and inside the backward of an op entry's autograd node, only ember's and
NumPy's code runs, whose calls the hook looks at and ignores: there :class:`QuietOps`, an
observer of op dispatch and of the backward engine listed before the tracer, takes the hook off,
and puts it back after. What may run the user's Python stays watched: a custom
``autograd.Function``'s backward, a node unpacking its saved tensors through the user's
``saved_tensors_hooks``, a control-flow operator's node (its backward traces the branches), and
everything between ops. Recording the tiny GPT step's training step spent 105 of its 195 ms of
CPU in the hook (session 27, AMD EPYC).
"""
import sys
import threading

from .._ops.core import Observer, Op
from .._tensor_subclass import OwnReads
from ..autograd.graph import AccumulateGrad, OpNode

__all__ = ["QuietOps", "unwatched"]


class QuietOps(Observer):
    """The observer taking the profile function ``hook`` off inside each op and each backward
    node of an op entry (or a leaf's accumulation), where it is the profile function: the
    recording thread's (the observer list is every thread's; a profile function, a thread's own)."""

    def __init__(self, hook):
        self.hook, self.off = hook, []  # off: per op or node entered, whether it took the hook off
        self.thread = threading.get_ident()

    # (each call the hook sees costs a Python call: the hook goes off first, then the rest)
    def op_enter(self, op, inputs, attrs):
        """Takes the hook off while ``op`` runs and the tracer records it."""
        if threading.get_ident() != self.thread:
            return
        off = sys.getprofile() is self.hook
        if off:
            sys.setprofile(None)
        self.off.append(off)

    def op_exit(self, op, inputs, attrs, output):
        """Puts the hook back after ``op`` (also when it raised)."""
        if threading.get_ident() == self.thread:
            self._back()

    def node_enter(self, node):
        """Takes the hook off while ``node`` runs, if it runs ember's code alone."""
        if threading.get_ident() != self.thread:
            return
        off = sys.getprofile() is self.hook
        if off:
            sys.setprofile(None)
            off = type(node) is AccumulateGrad or isinstance(node, OpNode) and not node._packed \
                and isinstance(node.op, type) and issubclass(node.op, Op)
            if not off:
                sys.setprofile(self.hook)
        self.off.append(off)

    def node_exit(self, node):
        """Puts the hook back after ``node``."""
        if threading.get_ident() == self.thread:
            self._back()

    def _back(self):
        if self.off and self.off.pop():
            sys.setprofile(self.hook)


def unwatched(hook, fn, *args):
    """``fn(*args)`` with the profile function ``hook`` off, where it is the one on: ember's own
    checks of a recorded call (:func:`.side_effects.python_state` after it: 3.7 -> 1.3 ms of
    the tiny GPT step's recording), and with ``__torch_function__`` overrides and modes off (its
    reads of ``t.requires_grad`` are no calls a logging mode or subclass should see)."""
    with OwnReads():
        if sys.getprofile() is not hook:
            return fn(*args)
        sys.setprofile(None)
        try:
            return fn(*args)
        finally:
            sys.setprofile(hook)
