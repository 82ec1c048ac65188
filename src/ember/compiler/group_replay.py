"""An optimizer's param groups in a recording: their numbers as graph inputs, and the writes
into them that a replay repeats (``g["lr"] = lr``).

A write the graph's replay can repeat is no side effect (:mod:`.group_writes` found every write
one): a number, a float argument of the call or what Python computed from it and the int
arguments (``g["lr"] = lr``, ``= base * (it + 1) / warmup``: a traced float,
:mod:`.traced_floats`), or a tuple of those (:func:`group_writes`). torch's dynamo replays such
dict writes after its graph; a replay does too (:func:`replay_writes`), each entry a plain
number as eager leaves it, and an update op after the write takes the written value
(:func:`hyperparameter_inputs`: :func:`written`), not the group's at the call's start.
"""
import numpy as np

from .._dtype import float64
from .group_writes import GroupFloat
from .read_floats import REPLAYED
from .traced_floats import _how, _node, _value
from .traced_ints import FloatInt, TracedFloat, TracedInt, plain

__all__ = ["GROUPS", "snapshot", "written", "group_writes", "replay_writes", "hyperparameter_inputs"]

GROUPS = "a param group of optimizer"  # (how group_state names its entries)
_TRACED = (TracedFloat, TracedInt, FloatInt)
_PLAIN = (float, int, bool, str, type(None))


def snapshot(optimizers):
    """The entries of the ``optimizers``' groups before a call (after :func:`group_state`'s
    stamp): ``{id(optimizer): [copy of each group]}``, compared by identity by :func:`written`."""
    return {id(opt): [dict(g) for g in opt.param_groups] for opt in optimizers}


def written(before, opt, index, key):
    """Whether ``opt.param_groups[index][key]`` (``key`` a name, or ``(name, i)``) holds another
    object than at the call's start (``before``: :func:`snapshot`)."""
    name = key if type(key) is str else key[0]
    groups = before.get(id(opt))
    if groups is None:  # (no snapshot: a recording that did not take one)
        return False
    return index >= len(groups) or groups[index].get(name, groups) is not opt.param_groups[index].get(name)


def _replayed(value):
    """How a replay computes ``value`` written into a group: ``("const", number)``, ``("how",
    computation)`` (:func:`~.traced_floats._how`) or ``("tuple", items)``; None where it cannot."""
    if type(value) in _TRACED:
        return "how", _how(value)
    if isinstance(value, GroupFloat):
        return "const", float.__float__(value)
    if type(value) in _PLAIN or isinstance(value, np.generic):
        return "const", value
    if type(value) is tuple:
        items = tuple(map(_replayed, value))
        return None if None in items else ("tuple", items)
    return None


def group_writes(optimizers, before):
    """The writes into the ``optimizers``' groups since ``before`` (:func:`snapshot`) as
    ``[(optimizer, group index, key, how)]`` (see :func:`_replayed`), or None where one is no
    number computed from the call's arguments (a tensor, a list) or a group or key came or went.
    Each traced number written is put back plain (:func:`~.traced_ints.plain`)."""
    found = []
    for opt in optimizers:
        groups = before.get(id(opt), [])
        if len(groups) != len(opt.param_groups):
            return None
        for index, (old, group) in enumerate(zip(groups, opt.param_groups)):
            if old.keys() != group.keys():
                return None
            for key, value in group.items():
                if value is not old[key]:
                    how = _replayed(value)
                    found.append((opt, index, key, how))
                    group[key] = _kept(how, value)  # (a plain number, as eager's)
                    if how is not None and how[0] == "const" and type(how[1]) is float:  # (a copy: the constant
                        group[key] = how[1] * 1.0  # written elsewhere too, ``cfg["t"] = 0.02``, is not replayed)
                    if how is not None and (how[0] == "how" or type(group[key]) is float):
                        REPLAYED.add(id(group[key]))  # (a read float overwritten, by a number too: replayed, no use)
    return None if any(how is None for *_, how in found) else found


def _kept(how, value):
    """``value`` as the group keeps it: traced numbers plain, a :class:`GroupFloat` a float."""
    if how is None or how[0] == "how":
        return plain(value)
    return how[1] if how[0] == "const" else tuple(map(_kept, how[1], value))


def _compute(how, arguments):
    kind, what = how
    if kind == "tuple":
        return tuple(_compute(h, arguments) for h in what)
    return what if kind == "const" else _value(what, arguments.__getitem__)


def replay_writes(writes, args, kwargs, reads=()):
    """Repeats a recorded call's group ``writes`` (:func:`group_writes`) for a call on ``args``,
    ``kwargs`` and the floats it read (``reads``: :mod:`.read_floats`, after the arguments)."""
    arguments = (*args, *kwargs.values(), *reads)
    for opt, index, key, how in writes:
        opt.param_groups[index][key] = _compute(how, arguments)


def hyperparameter_inputs(tracer, op, inputs, args):
    """``args`` of an optimizer's update op with its last inputs, numbers of the parameter
    group (``Optimizer.hyperparameters``), as placeholders read at each call (source
    ``("hyper", optimizer, group index, key)``): a scheduler changing them never recompiles.
    A zero stays a constant (its term left out; the guards keep whether each is zero). One the
    call wrote into the group before (``g["lr"] = lr``, :func:`written`) is what was written:
    a number, or the traced float's node (:func:`~.traced_floats._node`)."""
    n, owner = len(op.hyperparameters), tracer.group_of(inputs[0])
    if owner is None or len(type(owner[0]).hyperparameters) != n:
        tracer.graph_break(f"{op.name} of a tensor that is no parameter of an optimizer the function reaches")
        return args
    opt, index = owner
    values, floats = [], getattr(tracer, "floats_now", None) or {}
    for j, name, key, value in zip(range(len(args) - n, len(args)), op.hyperparameters,
                                   type(opt).hyperparameters, args[-n:]):
        if written(tracer.group_before, opt, index, key):
            value = _node(tracer, floats.pop(j)) if j in floats else value
        elif floats.pop(j, None) is not None or value != 0:  # (a traced float read there: read_floats)
            node = tracer.hyper.get((id(opt), index, key))
            if node is None:
                meta = {"shape": (), "dtype": float64, "requires_grad": False}
                node = tracer.hyper[(id(opt), index, key)] = tracer.graph.placeholder(name, meta)
                tracer.sources.append(("hyper", opt, index, key))
            value = node
        values.append(value)
    return args[:-n] + tuple(values)
