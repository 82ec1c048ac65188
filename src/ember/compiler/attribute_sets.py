"""A module attribute set to a tensor the graph computes (``self.src_mask = mask`` in
word_language_model's ``TransformerModel.forward``): a side effect each replay repeats.

torch's dynamo records such a write as a side effect and replays it after the graph runs, the
attribute then holding the compiled graph's output (one graph; the next call's guards see a
tensor there). ember's recording notes the modules' attributes before the call
(:func:`attributes_before`); one the call set to a tensor made by an op of the graph that needs
no gradient is no Python side effect breaking the graph (:func:`tensor_attributes_set`,
:func:`as_before` while the recording compares the Python state) but an extra output of the graph,
set on the module after each replay (:func:`set_attributes`). One holding a tensor with autograd
history, an input or anything else still breaks the graph.

One set to a float (or an int made of one) computed from the call's float arguments (``self.scale
= lr * 2 + 1``, a traced float: :mod:`.traced_floats`), or to an int computed from its int
arguments taken as symbols (``self.n = k + 1``, a traced int), is set after each replay to the value
computed from that call's arguments (:func:`float_attributes_set`, :func:`set_floats`), as torch
sets a symbolic float; where every user code naming it stores it before any other use, no guard
keeps its value (:func:`~.side_effects.names_read`): the next call reads only what it wrote.
"""
import contextlib
import weakref

from .._tensor import Tensor
from .read_floats import REPLAYED
from .traced_floats import _how, _of_arguments, _value
from .traced_ints import FloatInt, TracedFloat, TracedInt, plain

__all__ = ["attributes_before", "tensor_attributes_set", "float_attributes_set", "unguarded_names", "as_before", "noted",
           "extra", "set_attributes", "noted_floats", "set_floats"]

_ABSENT = object()


def attributes_before(world):
    """``[(module, its attributes)]``: the modules' own attributes (``vars``) before a call."""
    return [(m, dict(vars(m))) for m in world.all_modules]


def tensor_attributes_set(before, made):
    """``[(module, name, tensor, old value)]``: the attributes the call set (``before``:
    :func:`attributes_before`) to a tensor needing no gradient for which ``made(tensor)`` (an op
    of the graph computed it)."""
    found = []
    for m, old in before:
        for name, value in vars(m).items():
            was = old.get(name, _ABSENT)
            if value is not was and isinstance(value, Tensor) and not value.requires_grad and made(value):
                found.append((m, name, value, was))
    return found


def float_attributes_set(before):
    """``[(module, name, value, old value, how)]``: the attributes the call set (``before``:
    :func:`attributes_before`) to a traced float or int computed from its arguments (``how``: its
    computation, :func:`~.traced_floats._how`), each set back to the plain ``value``, as eager's."""
    found = []
    for m, old in before:
        for name, value in vars(m).items():
            if type(value) in (TracedFloat, FloatInt, TracedInt) and old.get(name, _ABSENT) is not value and _of_arguments(value):
                found.append((m, name, plain(value), old.get(name, _ABSENT), _how(value)))
                object.__setattr__(m, name, found[-1][2])
                REPLAYED.add(id(found[-1][2]))  # (a float read there written: no use, read_floats.restore_reads)
    return found


def unguarded_names(sets, modules):
    """The names of ``sets`` (:func:`float_attributes_set`) that every one of ``modules`` holding
    such an attribute was set (another module's ``scale`` stays guarded)."""
    done = {(id(m), name) for m, name, *_ in sets}
    return frozenset(name for _, name, *_ in sets if all((id(m), name) in done for m in modules if name in vars(m)))


def noted_floats(sets):
    """The capture's ``float_sets`` of ``sets`` (:func:`float_attributes_set`): ``(weak
    reference to the module, its id, name, how)``."""
    return [(weakref.ref(m), id(m), name, how) for m, name, _, _, how in sets]


def set_floats(float_sets, args, kwargs, reads=()):
    """Sets each module attribute of ``float_sets`` (a capture's: ``(weak reference to the
    module, its id, name, how)``) to the float ``how`` computes from this call's arguments (and
    the floats it read, ``reads``: :mod:`.read_floats`)."""
    arguments = (*args, *kwargs.values(), *reads)
    for ref, _, name, how in float_sets:
        m = ref()
        if m is not None:
            setattr(m, name, _value(how, arguments.__getitem__))


@contextlib.contextmanager
def as_before(sets):
    """The attributes ``sets`` (:func:`tensor_attributes_set`) hold their old values while it runs
    (``object``'s ``__setattr__``: the module's own does not run)."""
    for m, name, _, was, *_ in sets:
        if was is _ABSENT:
            object.__delattr__(m, name)
        else:
            object.__setattr__(m, name, was)
    try:
        yield
    finally:
        for m, name, value, *_ in sets:
            object.__setattr__(m, name, value)


def noted(sets, returned, first_output):
    """The capture's ``attr_sets``: ``(weak reference to the module, its id, name, output index)``
    of each of ``sets``: a tensor the call returns too is that result (``returned``: the flat
    results), the others the outputs from ``first_output`` on (:func:`extra`)."""
    noted, k = [], first_output
    for m, name, t, _ in sets:
        j = next((j for j, r in enumerate(returned) if r is t), None)
        noted.append((weakref.ref(m), id(m), name, k if j is None else j))
        k += j is None
    return noted


def extra(sets, returned):
    """The tensors of ``sets`` the graph outputs after the others (those not ``returned``)."""
    return [t for _, _, t, _ in sets if not any(r is t for r in returned)]


def set_attributes(attr_sets, results):
    """Sets each module attribute of ``attr_sets`` (a capture's) to its output in ``results``."""
    for ref, _, name, i in attr_sets:
        m = ref()
        if m is not None:
            setattr(m, name, results[i])
