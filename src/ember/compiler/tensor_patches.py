"""Tensor's methods and the random draws a recording patches, shared by the threads recording at once.

A recording (:func:`.capture.capture`) runs the function eagerly with some of ember's attributes
replaced: Tensor's methods that need a value in Python (``.item()``: a graph break), ``.grad``
(whether the call read one), ``Tensor._make``/``_init`` (where a tensor made inside comes
from), ``Tensor._snapshot`` (an in-place op's copy of the old value), the random draws; and
:mod:`.traced_ints` puts tracing versions of ``math``'s functions and ``min``/``max`` in. Two
threads may record at once (a data-loader thread beside the training thread): each replacement
is put in by the first recording to start and the original put back by the last to end
(:func:`.patches.patch`, counted under a lock), and the replacements of ember's
attributes look up the recordings of the thread calling them (:func:`recording`; nested
recordings on one thread each see the call, the innermost first), so that each recording sees
its own thread only, and a thread not recording gets the original's result.
"""
import functools
import sys
import threading

from .. import _distributions, _random
from .._ops import core as _core
from .._tensor import Tensor
from .._tensor_subclass import GENERATION
from .breaks import VALUE_METHODS, unobserved
from .input_grads import note_hook, restore_read
from .patches import from_user, patch, unpatch
from .traced_floats import fill_node
from .traced_ints import TRACING

__all__ = ["recording", "record_on_this_thread"]

_LOCAL = threading.local()  # .tracers: the recordings under way on this thread, innermost last


def recording():
    """The tracers recording on the calling thread, innermost last (empty: none)."""
    return getattr(_LOCAL, "tracers", ())


def _breaking(name, original):
    reason = VALUE_METHODS[name]

    def method(self, *args, **kwargs):
        for tracer in reversed(recording()):
            tracer.graph_break(reason)
        return original(self, *args, **kwargs)
    method.__name__, method.__doc__ = name, getattr(original, "__doc__", None)
    return method


def _grad_watch(name, original):
    # a .grad read before set (reads_grad: whose): whether it has one is then a guard (sources.relevant); one
    # set first (zero_grad()'s None) is noted in grad_written
    def read(tensor):
        for tracer in recording():
            if id(tensor) not in tracer.grad_written:
                tracer.reads_grad = tracer.reads_grad | {id(tensor)}
            if id(tensor) in tracer.stashed:  # an input's .grad held aside (input_grads.py)
                restore_read(tracer, tensor)
        return original.fget(tensor)

    def write(tensor, value):
        for tracer in recording():
            tracer.grad_written.add(id(tensor))
            tracer.stashed.pop(id(tensor), None)  # (replaced: eager's is gone)
        original.fset(tensor, value)
    return property(read, write, doc=original.__doc__)


def _making(name, original):
    # a tensor wrapped around an array during the call: where from (Tracer.made_by)
    if name == "_make":
        make = original.__func__

        def traced_make(cls, data):
            for tracer in reversed(recording()):
                tracer.made_by(data, sys._getframe(1))
                if TRACING.value:  # (a fill value of a traced float: its node)
                    fill_node(tracer, data, sys._getframe(1))
            return make(cls, data)
        return classmethod(traced_make)
    if name == "_init":
        init = original.__func__

        def traced_init(self, data, requires_grad=False):
            for tracer in reversed(recording()):
                tracer.made_by(data, sys._getframe(1))
            return init(self, data, requires_grad)
        return staticmethod(traced_init)

    def traced_snapshot(self):
        # An in-place op on a tensor with history first copies its old value (the op may save
        # it for backward): the copy holds the value of self's node, not a new input.
        copy = original(self)
        for tracer in reversed(recording()):
            tracer.value[id(copy._data)] = tracer.node(self)
            tracer.hold(copy._data)
        return copy
    return traced_snapshot


def _drawing(name, draw):
    def traced(generator=None):
        if not getattr(_core._observing, "inside", False):  # ops drawing (DropoutMask) replay fine
            for tracer in reversed(recording()):
                tracer.graph_break("random numbers drawn outside an op (ember.rand*, randperm, ...)")
        return draw(generator)

    def setting(generator, *args):
        for tracer in reversed(recording()):
            tracer.graph_break(f"Generator.{name}: setting a random stream's state (a replay would not reset it)")
        return draw(generator, *args)
    return setting if name in _SETTING else traced


def _requiring(name, original):
    # requires_grad_() (or ``requires_grad = True``) by the user's code on an input the call has
    # not read yet: replayed before the graph (the capture's grad_required); on a tensor the call
    # made, or read before: a graph break, as torch's dynamo breaks there (a replay's would
    # require no grad)
    label = "requires_grad_()" if name == "requires_grad_" else "requires_grad = True"

    def note(tensor, requires_grad, frame):
        if requires_grad and from_user(frame) and not tensor.requires_grad and tensor.grad_fn is None:
            for tracer in reversed(recording()):
                source = tracer.known.get(id(tensor._data), ((None,),))[0]
                if source[0] == "input" and tracer.world.inputs[source[1]] is tensor \
                        and id(tensor._data) not in tracer.value:
                    tracer.grad_required.add(source[1])
                else:
                    tracer.graph_break(f"{label} on a tensor the call made or read before: a replay's would "
                                       "require no grad")

    if name == "requires_grad":
        def set_requires_grad(tensor, value):
            note(tensor, value, sys._getframe(1))
            original.fset(tensor, value)
        return property(original.fget, set_requires_grad, doc=original.__doc__)

    def requires_grad_(self, requires_grad=True):
        note(self, requires_grad, sys._getframe(1))
        return original(self, requires_grad)
    requires_grad_.__name__, requires_grad_.__doc__ = name, original.__doc__
    return requires_grad_


def _hooking(name, original):
    # a gradient hook registered on an input: registered again by each replay (input_grads.note_hook)
    def register_hook(self, hook):
        handle = original(self, hook)
        for tracer in reversed(recording()):
            note_hook(tracer, self, hook, handle)
        return handle
    register_hook.__name__, register_hook.__doc__ = name, original.__doc__
    return register_hook


# Every random draw goes through one of _random.rng and _distributions.generator_or_default:
# torch's streams, or NumPy's on them (and setting a stream's state, manual_seed: a graph break,
# as in torch's dynamo)
_SETTING = ("manual_seed", "seed", "set_state")
_PATCHES = [(Tensor, tuple(VALUE_METHODS), _breaking), (Tensor, ("grad",), _grad_watch),
            (Tensor, ("_make", "_init", "_snapshot"), _making),
            (Tensor, ("requires_grad_", "requires_grad"), _requiring), (Tensor, ("register_hook",), _hooking),
            (_random, ("rng",), _drawing),
            (_distributions, ("generator_or_default",), _drawing), (_random.Generator, _SETTING, _drawing)]


def record_on_this_thread(tracer):
    """Makes ``tracer`` the calling thread's innermost recording, with the patches above in
    place while any thread records; returns the function that ends it (and puts back what the
    last recording to end patched)."""
    tracers = getattr(_LOCAL, "tracers", None)
    if tracers is None:
        tracers = _LOCAL.tracers = []
    tracers.append(tracer)
    for name in ("op_enter", "op_exit", "node_enter"):  # (its reads are no calls a mode sees)
        setattr(tracer, name, functools.partial(unobserved, getattr(type(tracer), name), tracer))
    done = []
    GENERATION[0] += 1  # (Tensor's methods change: ``overrides.resolve_name`` lists them again)
    try:
        for owner, names, make in _PATCHES:
            done.append((owner, patch(owner, names, make)))
    except BaseException:
        _end(tracers, tracer, done)
        raise
    return lambda: _end(tracers, tracer, done)


def _end(tracers, tracer, done):
    for owner, saved in reversed(done):
        unpatch(saved, owner)
    GENERATION[0] += 1
    tracers.remove(tracer)
