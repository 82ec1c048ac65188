"""Floats (and ints) a compiled graph returns that Python computed from its arguments
(``return loss, lr``, ``lr * 2``, ``round(lr)``): marked in the recorded output as
:class:`ReturnedFloat`, computed again from each call's arguments, as torch returns a symbolic
float. Split from :mod:`.traced_floats`, whose ``how`` records they evaluate."""
from .traced_floats import _TRACED, _how, _of_arguments, _spell, _value
from .graph import instances_in
from .structure import map_leaves

__all__ = ["ReturnedFloat", "mark_returned", "has_returned_floats", "returned_floats"]


class ReturnedFloat:
    """In a graph's returned structure, a float (or an int) Python computed from float arguments,
    or int arguments the graph takes as symbols, and numbers (``return loss, lr``, ``lr * 2``,
    ``round(lr)``, ``k * 0.5``): ``how`` (:func:`_how`), computed again from each call's arguments
    (:func:`returned_floats`), as torch returns a symbolic float."""
    __slots__ = ("how",)

    def __init__(self, how):
        self.how = how

    def __eq__(self, other):
        return type(other) is ReturnedFloat and other.how == self.how

    def __hash__(self):
        return hash(ReturnedFloat)

    def __repr__(self):
        return f"ReturnedFloat({_spell(self.how)})"


def mark_returned(value):
    """``value`` (a returned structure: tuples, named tuples, lists, dicts) with each traced float
    or :class:`~.traced_ints.FloatInt` computed from arguments a :class:`ReturnedFloat`; each other
    traced float in it a use (its value returned as recorded: a graph per value)."""
    return map_leaves(value, _marked)


def _marked(value):
    if type(value) in _TRACED:
        if _of_arguments(value):
            return ReturnedFloat(_how(value))
        for seen in value.uses:
            seen.append(("returned", "(the function's result)"))
    return value


def has_returned_floats(output):
    """Whether a graph's returned structure holds a :class:`ReturnedFloat`."""
    return next(instances_in(output, ReturnedFloat), None) is not None


def returned_floats(value, marked, args, kwargs, reads=()):
    """``value`` (a replay's returned structure) with each :class:`ReturnedFloat` the float it
    computes from this call's arguments (and floats read: ``reads``, see :func:`fill_floats`);
    ``value`` itself unless ``marked`` (the graph's structure holds one)."""
    if not marked:
        return value
    numbers = (*args, *kwargs.values(), *reads).__getitem__
    return map_leaves(value, lambda v: _value(v.how, numbers) if type(v) is ReturnedFloat else v)
