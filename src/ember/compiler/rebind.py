"""A graph captured for one object reused for another of the same kind (torch's cache per code object).

torch keeps its compiled graphs per code object and takes a module's parameters and a
closure's tensors as graph inputs, so two ``nn.Linear(4, 4)`` compiled one after the other,
or two closures of one ``def`` over other tensors, run one graph. ember's entries fetch such
tensors once and guard their identity; a call that fails only those identity guards does
not capture again: the entry of another function object of the same code (or of another
module of the same class) is *rebound*, a copy whose guards and fetched tensors are this
call's, sharing the captured graph and its compiled code.

Two calls can share when their guards are equal with every object named by identity (the
tensors read, the parameters, the modules and optimizers reached, the objects passed) replaced
by its position among the objects the call reaches (:func:`canonical`), and the classes of
the modules and optimizers equal, and what the containers and plain objects read hold alike
(the objects the function returns are moved too). Other objects (an inner function, a
built-in) must be the same ones. A graph baked from one module's weights is never run
with another's: the parameters are placeholders, fetched again from the new objects.
"""
import copy
import weakref

from .contents import container, scalar, scalar_key
from .guards import holds
from .sources import ATTRIBUTES, Narrowed, fetcher
from .structure import is_slot, same_container
from .returned_floats import ReturnedFloat

__all__ = ["objects", "places", "canonical", "remember", "find", "keep"]

_TENSORS = "tensors read from globals, closures and argument objects (identity, shape, dtype, requires_grad)"


def objects(world):
    """The objects a call's guards and graph sources name by identity, in a fixed order: the
    tensors read, the parameters, the modules reached, the optimizers."""
    return [*world.free, *world.params, *world.all_modules, *world.optimizers]


def places(world):
    """``{id: position}`` of the objects of :func:`objects` (the first position of each). An entry
    keeps these ids, not the objects (a module's cache must not keep the module alive): the ones
    it looks up are held by its sources, ``.grad`` updates and returned skeleton, so stay unique."""
    place = {}
    for i, o in enumerate(objects(world)):
        place.setdefault(id(o), i)
    return place


def canonical(facts, world):
    """``facts`` (a :func:`~.guards.snapshot` or a subset of one) with each id of an object of
    :func:`objects` replaced by its position, and three guards more: the classes of the modules
    and optimizers, what the call read from its closure, globals and arguments, and what the
    containers read hold (those objects by position, numbers by value, other objects by id)."""
    place = places(world)

    def position(key):
        return ("at", place[key]) if key in place else ("id", key)

    def kind(o):  # (what a container or plain object holds is in world.members; a float's value is in the
        # facts, as an argument or a value read, where a graph taking it as an input guards any float)
        if type(o) is float:
            return ("a float",)
        return scalar_key(o) if scalar(o) else ("a", type(o)) if container(o) and id(o) not in place \
            else position(id(o))
    out = []
    for name, value in facts:
        if name in ("parameter identity", "module structure"):
            value = tuple(map(position, value))
        elif name == _TENSORS:
            value = tuple([(position(key), *rest) for key, *rest in value])
        elif name.startswith("optimizer") and name.endswith("(identity, by group)"):
            value = tuple([tuple(map(position, group)) for group in value])
        elif name.startswith("argument ") and name[9:].isdigit() and int(name[9:]) < len(world.positions):
            # (a position past them: an int derived during the call's recording, closure_ints.py)
            argument = world.positions[int(name[9:])]
            if not scalar(argument) and value == id(argument):
                value = kind(argument)
        out.append((name, value))
    # a decorator's wrapper is read through (guards.World unwraps it): itself, not its code, tells
    # two wrappings of one function apart
    wrapped = getattr(getattr(world.fn, "__func__", world.fn), "__wrapped__", None) is not None
    out += [("the function compiled, where a wrapper", id(world.fn) if wrapped else None),
            ("classes of the modules and optimizers", tuple([type(o) for o in (*world.all_modules,
                                                                                *world.optimizers)])),
            ("what the call read (positions, values, ids)", tuple(map(kind, world.roots))),
            ("what the containers read hold (positions, values, ids)", tuple(map(kind, world.members)))]
    return out


def remember(entry, world, counted=True):
    """Marks ``entry``, captured in ``world``, as one another object may reuse (see :func:`find`);
    ``counted``: whether it counts against its code's ``recompile_limit``."""
    entry.canon, entry.places = canonical(entry.facts, world), places(world)
    entry.rebound, entry.counted = False, counted
    return entry


def find(cache, world, facts):
    """``(moved, alike)``: a copy of an entry of ``cache``'s family (its callables', then those its
    dropped functions left, the newest first) rebound to ``world`` (its graph run on this call's
    objects, its guards this call's facts) or None where none fits; ``alike``: ``cache`` is empty
    and another's entry differs only in the values of the modules' attributes its code could read
    (:class:`~.sources.AttributesRead`; all of them where it read some by a computed name): a
    block's own ``self.layer_index`` that its forward reads gives it its own graph, not counted
    against the limit."""
    canon, alike = None, False
    family = cache.family
    for other, entries in [(c, c.entries) for c in list(family.caches)] + [(None, [e for e, _ in family.orphans])]:
        for entry in reversed(entries):
            if getattr(entry, "canon", None) is None:
                continue
            canon = canon or canonical(facts, world)
            if holds(entry.canon, canon):
                found = _rebound(entry, world, facts)
                if found is not None:
                    return found, False
            elif not cache.entries and other is not cache and not alike:
                alike = holds([f for f in entry.canon if f[0] != ATTRIBUTES], [f for f in canon if f[0] != ATTRIBUTES])
    return None, alike


def _rebound(entry, world, facts):
    """``entry`` with its sources and ``.grad`` updates moved from its objects to ``world``'s
    at the same positions (None where one is not among them)."""
    old, new = entry.places, objects(world)

    def move(o):
        return new[old[id(o)]]

    def source(s):
        if s[0] in ("param", "tensor", "grad", "hyper"):
            return (s[0], move(s[1]), *s[2:])
        if s[0] == "state":
            return (s[0], move(s[1]), move(s[2]), s[3])
        return s
    def returned(value):  # an object the function returned (itself, not a tensor's slot)
        if isinstance(value, (tuple, list)):
            items = [returned(v) for v in value]
            return same_container(value, items)
        if isinstance(value, dict):
            return type(value)((k, returned(v)) for k, v in value.items())
        return value if scalar(value) or is_slot(value) or type(value) is ReturnedFloat else move(value)
    try:
        sources = [source(s) for s in entry.sources]
        grad_sets = [(move(p), i) for p, i in entry.cap.grad_sets]
        group_writes = [(move(opt), *rest) for opt, *rest in entry.cap.group_writes]
        modules = [new[old[key]] for _, key, _, _ in entry.cap.attr_sets]
        floats = [new[old[key]] for _, key, _, _ in entry.cap.float_sets]
        output = returned(entry.cap.output)
    except KeyError:
        return None
    names = {name for name, _ in entry.facts}
    moved = copy.copy(entry)
    kept = dict(entry.facts)  # (a narrowed guard stays narrowed: the next module of the class shares it too)
    moved.facts = [(name, kept[name] if isinstance(kept[name], Narrowed) else value)
                   for name, value in facts if name in names]
    moved.places, moved.sources, moved.rebound, moved.counted = places(world), sources, True, False
    moved.cap = copy.copy(entry.cap)
    moved.cap.grad_sets, moved.cap.output, moved.cap.group_writes = grad_sets, output, group_writes
    moved.cap.attr_sets = [(weakref.ref(m), id(m), *rest) for m, (_, _, *rest) in zip(modules, entry.cap.attr_sets)]
    moved.cap.float_sets = [(weakref.ref(m), id(m), *rest) for m, (_, _, *rest) in zip(floats, entry.cap.float_sets)]
    moved.fetch = [f if s is t else fetcher(t) for f, s, t in zip(entry.fetch, entry.sources, sources)]
    moved.fixed = [None if x is None else f(None, None) for x, f in zip(entry.fixed, moved.fetch)]
    moved.varying = [(i, moved.fetch[i]) for i, _ in entry.varying]
    return moved


def keep(entries, moved, limit):
    """Appends the rebound entry ``moved`` to a callable's ``entries``, dropping its oldest
    rebound one where ``limit`` of them are there (a loop over new modules keeps only the
    last ones' copies alive); returns ``moved``."""
    rebound = [e for e in entries if getattr(e, "rebound", False)]
    if len(rebound) >= limit:
        entries.remove(rebound[0])
    entries.append(moved)
    return moved
