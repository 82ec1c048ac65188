"""Writes into an optimizer's param groups during a recorded call (``group["lr"] = lr``).

A graph reads an optimizer's hyperparameters from its groups at each call (``sources``'
``"hyper"`` inputs) and never writes them, so a call that writes a group has a side effect a
replay would lose: ``step(x, 0.1)``, ``step(x, 0.2)``, ``step(x, 0.1)`` replaying the first
graph left ``lr`` at 0.2. A write of the value a group already holds changes nothing a
comparison sees, so :func:`group_state` compares the entries by identity, having first put
a fresh copy of each float there (``stamp``): the call's write, even of an equal float (the
argument the optimizer was made with), is a new object. (A write of an equal small int or a
bool, which Python shares, stays unseen: it changes nothing the replay reads.)

The graph's inputs are guarded only by whether each is zero (a scheduler never recompiles), so
a value the user's code reads from a group while recorded (``lr = group["lr"]``, then ``loss *
(1 + lr)``, ``x * lr``, ``f"{lr}"``) would be baked into the graph unguarded: the replays kept
the recording's ``lr`` while a scheduler moved on. :func:`watched_groups` notes such reads
(:data:`READ`): that optimizer's groups are then guarded by value (``guards.optimizer_facts``),
a graph per value as torch's (which guards the float it reads).

A function of ``math`` reads a float subclass's value without its methods (``math.cos(g["lr"])``
would be baked into the graph unguarded, the first call's cosine at every replay):
:func:`note_math_read`, called where the user's code calls one while groups are watched
(:data:`WATCHED`), puts an optimizer in :data:`READ` where that frame holds one of its groups or
entries, or reads ``param_groups``.

A write a replay can repeat is no side effect (:mod:`.group_replay`).
"""
import contextlib
import weakref

import numpy as np

from .graph import instances_in
from .patches import PerThread
from .structure import LARGE
from .traced_ints import _KEPT, _from_user, plain

__all__ = ["group_state", "watched_groups", "note_math_read", "READ", "BEFORE", "WATCHED"]

# the optimizers whose group entries the user's code read during a recording: guarded by value
READ = weakref.WeakSet()
# the optimizers whose groups this thread's recordings watch (watched_groups), innermost last
WATCHED = PerThread(list)
# optimizer -> copies of its groups at the start of its last recording (the values READ guards: the
# call may write them, ``g["lr"] = g["lr"] * 0.5``)
BEFORE = weakref.WeakKeyDictionary()


class GroupFloat(float):
    """A float entry of an optimizer's group while a call is recorded (``optimizer``, its
    owner): a method of it called from the user's code puts the optimizer in :data:`READ`."""

    def __new__(cls, value, optimizer):
        self = super().__new__(cls, value)
        self.optimizer = optimizer
        return self

    def read_unseen(self):
        """Notes a read of the value by the user's code that called no method (a patched ``math``
        function's: ``math.cos(g["lr"])``, :func:`~.traced_math.patch_math`)."""
        READ.add(self.optimizer)


def _noting(method):
    def use(self, *args):
        if _from_user():
            READ.add(self.optimizer)
        return method(self, *args)
    use.__name__, use.__doc__ = method.__name__, f"float's ``{method.__name__}``, noting a read by the user's code."
    return use


for _name in dir(float):
    if _name not in _KEPT and callable(getattr(float, _name)) and _name != "fromhex":
        setattr(GroupFloat, _name, _noting(getattr(float, _name)))


@contextlib.contextmanager
def watched_groups(optimizers, cap_of):
    """While recording: each nonzero float entry of the ``optimizers``' groups a
    :class:`GroupFloat`; after it, those still there plain again, and an optimizer whose value
    (or its float32 rounding) is a plain number of the recorded graph (``cap_of()``: passed to an
    op by the user's code unseen, ``x * lr``) put in :data:`READ` too, unless the call wrote
    that entry (``g["weight_decay"] = 0.01`` over 0.01: the number is the write's)."""
    watched, optimizers = [], tuple(optimizers)
    if optimizers:
        WATCHED.append(optimizers)
    for opt in optimizers:
        BEFORE[opt] = [plain(g) for g in opt.param_groups]  # (a float traced there: read_floats)
        if any(isinstance(v, float) and type(v) is not float for g in opt.param_groups for v in g.values()):
            READ.discard(opt)  # (a float traced there, read_floats: its reads are symbols; lifted_capture notes a use)
        for g in opt.param_groups:
            for key, value in g.items():
                if type(value) is float and value != 0 and value == value:
                    g[key] = GroupFloat(value, opt)
                    watched.append((g, key, g[key]))
    try:
        yield
    finally:
        if optimizers:
            WATCHED.pop()
        kept = [g.get(key) is value for g, key, value in watched]  # (else overwritten by the call)
        for g, key, value in watched:
            if g.get(key) is value:
                g[key] = float.__float__(value)
        cap = cap_of() if watched else None
        if cap is not None:
            numbers = {float(a) for node in cap.graph.nodes for a in instances_in((node.args, node.kwargs),
                                                                                   (float, np.floating))}
            consts = [s[1] for s in cap.sources if s[0] == "const" and s[1].dtype.kind == "f" and s[1].size]
            for (_, _, value), unwritten in zip(watched, kept):
                if not unwritten:  # (overwritten: the graph's equal number is the write's)
                    continue
                v = float.__float__(value)
                if {v, float(np.float32(v))} & numbers or any((c == v).any() for c in consts):
                    READ.add(value.optimizer)


def note_math_read(frame):
    """Puts in :data:`READ` each watched optimizer (:data:`WATCHED`) one of whose groups or
    :class:`GroupFloat` entries the user's ``frame``, calling a function of ``math``, holds in a
    local or one container down (``g = opt.param_groups[0]``, ``math.cos(g["lr"])``), and all of
    them where its code reads ``param_groups`` (``math.cos(opt.param_groups[0]["lr"])``)."""
    optimizers = [opt for watched in WATCHED for opt in watched]
    if "param_groups" in frame.f_code.co_names:
        READ.update(optimizers)
        return
    groups = {id(g): opt for opt in optimizers for g in opt.param_groups}
    values = list(frame.f_locals.values())
    for v in list(values):
        if type(v) in (list, tuple, dict) and len(v) <= LARGE:  # (a data set is not looked into)
            values += v.values() if type(v) is dict else v
    for v in values:
        if isinstance(v, GroupFloat):
            READ.add(v.optimizer)
        elif id(v) in groups:
            READ.add(groups[id(v)])


class _Entries:
    """The entries of an optimizer's groups (their objects held: no id is reused), equal to
    another's where each group has the same keys holding the same objects."""

    def __init__(self, groups):
        self.entries = [tuple(g.items()) for g in groups]

    def __eq__(self, other):
        return type(other) is _Entries and len(self.entries) == len(other.entries) and all(
            len(a) == len(b) and all(ka == kb and va is vb for (ka, va), (kb, vb) in zip(a, b))
            for a, b in zip(self.entries, other.entries))

    __hash__ = None

    def __repr__(self):
        return f"param groups {self.entries!r}"


def group_state(optimizers, stamp=False):
    """What :func:`~.side_effects.python_state` compares of the ``optimizers``' groups,
    ``{where: entries}``: each entry by identity; with ``stamp`` (before the call) each float
    entry is first replaced by an equal new float (``-0.0`` and nan kept), so that any write shows."""
    for g in (g for opt in optimizers for g in opt.param_groups) if stamp else ():
        for key, value in g.items():
            if type(value) is float:
                g[key] = value * 1.0
    return {f"a param group of optimizer {k} ({type(opt).__name__})": _Entries(opt.param_groups)
            for k, opt in enumerate(optimizers)}

