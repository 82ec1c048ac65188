"""Python side effects of a recorded call: what a replay of its graph would not repeat.

A graph replays tensor computations only. :func:`python_state` lists what else a call may
change, compared before and after the recording (``capture`` makes a difference a graph break,
so the function runs eagerly every call instead of silently skipping it).
"""
import builtins
import dis
import functools
import inspect
import io
import logging
import operator
import os
import random
import re
import sys
import threading
import types
from collections import OrderedDict, defaultdict, deque

import numpy as np

from .._dispatch_state import OBSERVERS
from .._tensor import Tensor
from .._tensor_subclass import mode_stack
from ..nn.modules import module as _module
from ..nn.modules.module import Module
from ..autograd.grad_mode import STATE
from ..autograd.graph import AccumulateGrad
from ..optim.optimizer import Optimizer
from .group_writes import WATCHED, group_state, note_math_read
from .named_reads import direct_calls_only, requested_name
from .patches import LIBRARIES as _LIBRARIES, LOG, PerThread, from_user as _from_user, io_reason
from .quiet_ops import QuietOps, unwatched
from .sources import history_nodes
from .streams import advances, numpy_stream, position
from .traced_ints import TRACING
from .float_constants import swap_callees
from .traced_reads import note_frame, note_math_calls

__all__ = ["python_state", "global_names", "plain_object", "user_code", "user_class", "breaking_io",
           "unreplayable", "aliased_results", "opaque_reads", "GLOBALS_SEEN", "unread_attributes", "checked_reads",
           "REQUIRES_GRAD"]


def python_state(world, stamp=False):
    """What a call may change in Python besides tensors, ``{where: key}``: the globals the
    function names and its closure cells (their objects; a list's, dict's, set's or plain
    object's contents one level down), the attributes of every reachable module, the entries of
    the optimizers' groups (:func:`~.group_writes.group_state`; ``stamp``: before the call), the
    contents of the containers and plain objects passed as arguments, what the modes on and the
    inputs' Tensor subclasses may change (their attributes), and the positions of
    Python's and NumPy's random streams (``random.randint`` in ``forward`` draws anew on every
    call, as under torch.compile), the input and free tensors' ``requires_grad`` (``x.requires_grad_()``:
    a replay would leave it False), the inputs' ``retain_grad()``, grad mode (``set_grad_enabled(False)`` left on); after the call (in a recording), also the globals of the
    other user code it ran and its closure cells (their contents when first called: :func:`breaking_io`). A
    difference before and after a recording is a side effect a replay would skip. Computed with a
    recording's hook off (:func:`.quiet_ops.unwatched`): these reads are ember's, not the call's."""
    return unwatched(_io_hook, _python_state, world, stamp)


def _python_state(world, stamp):
    state = {"Python's random stream (random.seed)": random.getstate(),
             "NumPy's global random stream (numpy.random.seed)": numpy_stream()}
    fn = inspect.unwrap(getattr(world.fn, "__func__", world.fn))
    code = getattr(fn, "__code__", None)
    if code is not None:
        names = fn.__globals__
        for name in dict.fromkeys(global_names(code)):
            if name in names:
                state[f"global {name!r}"] = _contents(names[name])
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                state[f"closure variable {name!r}"] = _contents(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
    for i, value in enumerate(world.roots):
        if isinstance(value, (list, deque, dict, set)) or plain_object(value) or advances(value):
            state[f"argument object {i} ({type(value).__name__})"] = _contents(value)
    for m in world.all_modules:
        state[f"an attribute of {type(m).__name__} (module {id(m):#x})"] = _contents(m)
    for i, o in enumerate([*mode_stack(), *dict.fromkeys(type(t) for t in world.inputs if type(t) is not Tensor)]):
        state[f"the TorchFunctionMode or Tensor subclass {getattr(o, '__name__', type(o).__name__)} ({i})"] = _contents(o)
    state.update(group_state(world.optimizers, stamp))
    state[REQUIRES_GRAD] = [t.requires_grad for t in (*world.inputs, *world.free)]
    state["an input's retain_grad()"] = [bool(t._retains_grad) for t in world.inputs]  # (a replay would not retain it)
    state["grad mode (set_grad_enabled)"] = STATE.enabled
    this = _THIS
    if this.globals:  # after a recording's call: the globals and closure cells of the user code it ran (breaking_io)
        state.update((key, _contents(names[name]) if name in names else None) for key, names, name in this.globals[-1])
    this.last_state = state
    return state


def breaking_io(graph_break):
    """Makes input and output from user code graph breaks while a call is recorded, as
    :func:`.patches.breaking_print` does for printing: ``open()``, a method of a file or in-memory stream
    (``buf.write("a")``, ``fh.read()``, ``flush``...) and the functions of ``os`` are C calls a
    replay would not repeat (the write would happen once, at the recording; torch's dynamo breaks
    there too), seen by a profile function on the recording thread (``sys.setprofile``; calls from
    ember's, NumPy's... code do not count; a recording inside a recording breaks the inner one).
    Where another profiler already runs (cProfile, a debugger), none is installed: the recording
    is left as it was. Returns the function removing it, which returns the attribute names the
    recording's Python code could have read (:func:`names_read`; None without the hook). The
    profile function is the thread's own, and so are the recordings it reports to (:class:`_Recordings`)."""
    this = _THIS
    if not this.breaks and sys.getprofile() is not None:
        return lambda written=(): None
    this.breaks.append(graph_break)
    this.run.append({})
    this.globals.append([])
    this.before.append(this.last_state if this.last_state is not None else {})
    if len(this.breaks) == 1:
        sys.setprofile(_io_hook)
    quiet = QuietOps(_io_hook)  # (off inside ember's ops: quiet_ops.py)
    OBSERVERS.append(quiet)  # (before the tracer: its op_exit runs quiet too)

    def restore(written=()):  # (``written``: see names_read)
        OBSERVERS.remove(quiet)
        i = this.breaks.index(graph_break)
        del this.breaks[i]
        run, seen, _ = this.run.pop(i), this.globals.pop(i), this.before.pop(i)
        if this.run:  # an inner recording's code ran in the outer one too
            requested = this.run[-1].get(_REQUESTED, frozenset()) | run.get(_REQUESTED, frozenset())
            this.run[-1].update(run)
            this.run[-1][_REQUESTED] = requested
            this.globals[-1].extend(seen)
        sys.setprofile(_io_hook if this.run else None)  # (the outer's back, were an op's exit skipped)
        # (a closure cell's value seen is a snapshot: no place plain_ints puts a number back)
        GLOBALS_SEEN[:] = [(names, name) for key, names, name in seen if key.startswith("global ")]
        return names_read(run, written)
    return restore


class _Recordings(threading.local):
    """The recordings under way on this thread (a profile function is a thread's own):
    ``breaks``, the graph_break of each, innermost last; ``run``, per recording, {code object
    run: whose (:func:`names_read`)}; ``globals``, per recording, (key, module's globals, name)
    of the globals each user code run names, their contents at its first call put into the
    state before the call (``before``): another module's ``SEEN.append(k)`` is a side effect
    too; ``last_state``: the thread's last :func:`python_state`."""

    def __init__(self):
        self.breaks, self.run, self.globals, self.before, self.last_state = [], [], [], [], None


_THIS = _Recordings()
REQUIRES_GRAD = "the requires_grad of an input or global tensor"  # (python_state's key)
GLOBALS_SEEN = PerThread(list)  # (globals, name) of the thread's last recording's
# names whose use reads attributes by a computed name: the names alone no longer tell what was read
_DYNAMIC_READS = frozenset({"attrgetter", "methodcaller", "vars", "__dict__", "__getattribute__", "getattr_static"})
_CALLED = frozenset({"getattr", "hasattr"})  # (called directly: each call's name is seen, _io_hook)


def names_read(run, written=()):
    """The attribute names the code objects of ``run`` can read (``{code: whose}``, see
    :func:`_whose`; ember's code but its modules', NumPy's... reads no user module's attributes):
    the names their bytecode uses (``co_names``: ``self.scale``), their string constants
    (``getattr(self, "scale")``) and the fields of those (``"{0.scale}".format(self)``), and the
    names its calls of ``getattr``/``hasattr`` asked for (``getattr(self, name)``, seen at the
    call: :func:`~.named_reads.requested_name`); None where user code reads attributes by a name
    computed otherwise (``vars``, ``__dict__``, ``getattr(self, "a" + s)``, ``map(getattr, ...)``...
    also under another name, or an ``operator.attrgetter`` it calls: :func:`_opaque`). A module
    attribute named by none was not read: a graph need not guard it (torch's dynamo guards the
    attributes it traced a read of). Of ``written`` (attributes the call set to a float a replay
    sets again: :mod:`.attribute_sets`), the names each user code naming them stores before any
    other use (:func:`_written_first`) are not read: the call reads only what it wrote itself."""
    if run.get(_COMPUTED):
        return None
    names = set(run.get(_REQUESTED, ()))
    for code, user in run.items():
        if user is None or not isinstance(code, types.CodeType):  # ember's (but its modules'), NumPy's...
            continue  # code: no user module's attributes
        if not _names_of(code, user, names):
            return None
    return frozenset(names) - _written_first(run, written)


def _written_first(run, written):
    """The names of ``written`` whose first use in each user code of ``run`` naming them is a
    store (``self.scale = lr * 2`` before ``x * self.scale``), asked for by no string nor
    ``getattr`` by name (:func:`names_read`)."""
    found = set(written) - set(run.get(_REQUESTED, ()))
    for code, user in run.items():
        if found and user is not None and isinstance(code, types.CodeType):
            strings = [c for c in code.co_consts if type(c) is str]
            found = {n for n in found if not any(n in c for c in strings)
                     and (n not in code.co_names or _first_uses(code).get(n) == "STORE_ATTR")}
    return frozenset(found)


@functools.lru_cache(maxsize=4096)
def _first_uses(code):
    """``{attribute name: the opname of its first use in code's bytecode}``."""
    first = {}
    for i in dis.get_instructions(code):
        if i.opname in ("LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD"):
            first.setdefault(i.argval, i.opname)
    return first


def _names_of(code, user, names, nested=False):
    """Adds the attribute names ``code`` names (see :func:`names_read`; with ``nested``, those of
    the functions defined in it too) to ``names``; False where it is the user's and reads by a
    computed name (with ``nested``, a look before any call: ``getattr``/``hasattr`` by any name too)."""
    if user and (not _DYNAMIC_READS.isdisjoint(code.co_names) or not _CALLED.isdisjoint(code.co_names)
                 and (nested or not direct_calls_only(code, _CALLED))):
        return False
    names.update(_loaded(code))
    strings = [c for c in code.co_consts if type(c) is str]
    names.update(strings)
    names.update(field for c in strings if "{" in c for field in _FIELD.findall(c))
    return not nested or all([_names_of(c, user, names, True) for c in code.co_consts if isinstance(c, types.CodeType)])


@functools.lru_cache(maxsize=4096)
def _loaded(code):
    """``code.co_names`` but the names it only sets or deletes (``self.saved = []`` of an
    ``__init__`` reads nothing)."""
    ops = [(i.opname in ("STORE_ATTR", "DELETE_ATTR"), i.argval) for i in dis.get_instructions(code)]
    written = {n for store, n in ops if store} - {n for store, n in ops if not store}
    return [n for n in code.co_names if n not in written]


def unread_attributes(modules, functions):
    """The names of the attributes of ``modules`` (of user classes; plain objects' too) that no code a call
    can run names (:func:`_names_of`): no method of their classes (ember's too), hook, function-like attribute,
    nor of ``functions`` (the compiled function and the user functions it reaches), as torch's dynamo guards
    only the attributes it traced a read of (a policy's list of saved log-probabilities, grown after each call, is
    no guard). Empty while another profiler runs or where user code reads by a computed name; :func:`checked_reads`
    makes a recording whose code read one anyway a graph break, the name named from then on."""
    if sys.getprofile() is not None:
        return frozenset()
    names = set(_NAMED_AT_RUN)
    hooks = [*_module._global_forward_pre_hooks.values(), *_module._global_forward_hooks.values()]
    for m in modules:  # (of plain objects: their callable attributes)
        hooks += [h for table in (m._forward_pre_hooks, m._forward_hooks, m._backward_pre_hooks, m._backward_hooks)
                  for h in table.values()] if isinstance(m, Module) else []
        hooks += [v for v in vars(m).values() if callable(v) and not isinstance(v, Module)]
    for fn in [*functions, *hooks]:
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if code is None and (_opaque(fn) or isinstance(fn, functools.partial)) \
                or code is not None and not _names_of(code, user_code(fn), names, True):
            return frozenset()
    for cls in dict.fromkeys([c for m in modules for c in type(m).__mro__ if c is not object]):
        found = _class_names(cls)
        if found is None:
            return frozenset()
        names |= found
    return frozenset([k for m in modules if user_class(type(m)) or not isinstance(m, Module) for k in vars(m) if k not in names])


@functools.lru_cache(maxsize=512)
def _class_names(cls):
    """The attribute names the functions of ``cls``'s own namespace name (its methods, static
    and class methods, properties), or None (see :func:`_names_of`)."""
    names, user = set(), user_class(cls)
    for v in vars(cls).values():
        for f in (v.fget, v.fset, v.fdel) if isinstance(v, property) else (getattr(v, "__func__", getattr(v, "func", v)),):
            code = getattr(f, "__code__", None)
            if code is not None and not _names_of(code, user, names, True):
                return None
    return frozenset(names)


def checked_reads(tracer, names, world):
    """:func:`opaque_reads` of a recording's ``names`` (:func:`names_read`); where its code read
    an attribute the world left unguarded (``world.unread``: by code no look before the call
    found), a graph break (that call runs eagerly), and that name is guarded from then on."""
    names = opaque_reads(names, [*world.all_modules, *world.kinds[4]])
    missed = world.unread if names is None else world.unread & names
    if missed:
        _NAMED_AT_RUN.update(missed)
        _module.STATE_VERSION[0] += 1  # the worlds walked before leave it out: walked again
        tracer.graph_break(f"the call read module attributes left unguarded as unread ({', '.join(sorted(missed))})")
    return names


_NAMED_AT_RUN = set()  # attribute names a recording read where unread_attributes had not found them


def opaque_reads(names, modules):
    """``names`` (:func:`names_read`), or None where a module's class has a property of that
    name whose getter runs no Python code (``property(operator.attrgetter("_factor"))``) or a
    module holds such a callable under it (``self.read = operator.attrgetter(name)``): the
    attribute it reads is named nowhere."""
    if names is None:
        return None
    for m in modules:
        found = [v.fget for cls in type(m).__mro__ for k, v in vars(cls).items()
                 if k in names and isinstance(v, property)] + [v for k, v in vars(m).items() if k in names]
        if any(_opaque(v) for v in found):
            return None
    return names


def _opaque(fn):
    """Whether calling ``fn`` reads attributes by names without a Python frame of its own: a
    built-in reader (``getattr``, ``hasattr``, ``vars``), an ``operator.attrgetter`` or
    ``methodcaller``, a ``functools.partial`` of one."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return isinstance(fn, (operator.attrgetter, operator.methodcaller)) or any(fn is r for r in _READERS)


def _computed_reads(frame):
    """Whether a user frame's code names a reader by computed name under another name (a
    global, built-in or closure variable holding ``getattr``, an ``attrgetter``...)."""
    scopes, code = (frame.f_globals, frame.f_builtins), frame.f_code
    found = {name: scope[name] for name in code.co_names for scope in scopes if name in scope and _opaque(scope[name])}
    # (``getattr``/``hasattr`` only called, under any name: each call's name is seen at the call)
    if found and not (all(v is getattr or v is hasattr for v in found.values())
                      and direct_calls_only(code, frozenset(found))):
        return True
    return any(_opaque(frame.f_locals.get(name)) for name in frame.f_code.co_freevars)


_READERS = (getattr, hasattr, vars)
_FIELD = re.compile(r"[.](\w+)")  # (an attribute in a format string's field)
_COMPUTED = "computed"  # (a run's key: its user code called a reader by computed name)
_REQUESTED = "requested"  # (a run's key: the names its user code's getattr/hasattr calls asked for)


_PURE_OS = {"fspath", "fsencode", "fsdecode", "getpid", "cpu_count", "get_terminal_size"}
_CLOCK = ("now", "utcnow", "today")  # (datetime.datetime's and datetime.date's: time's are all the clock's)


def _io_hook(frame, event, fn):
    this = _THIS
    if event == "call" and this.run:
        run = this.run[-1]
        if frame.f_code not in run:
            run[frame.f_code] = _whose(frame, run)
            if run[frame.f_code] and _computed_reads(frame):
                run[_COMPUTED] = True
            if run[frame.f_code]:  # (its globals', and closure cells', contents: ``calls.append(f)`` in a mode)
                code, module, before = frame.f_code, frame.f_globals, this.before[-1]
                own = _own_module(frame) not in sys.stdlib_module_names  # (a stdlib Barrier's lambda's cells: not)
                cells = {n: frame.f_locals.get(n) for n in code.co_freevars if own}
                for names, name in [*((module, n) for n in _global_names(code)), *((cells, n) for n in cells)]:
                    key = f"global {name!r} of {module.get('__name__')}" if names is module else \
                        f"closure variable {name!r} of {code.co_qualname}"
                    if name in names and key not in before and _small(names[name]):
                        before[key] = _contents(names[name])
                        this.globals[-1].append((key, names, name))
    if event == "c_call":
        if this.run and fn in _READERS and _from_user(frame):  # (``g = getattr``, ``g(self, n)``)
            name = requested_name(frame, fn) if fn is not vars else None
            if name is None:
                this.run[-1][_COMPUTED] = True
            else:
                this.run[-1][_REQUESTED] = this.run[-1].get(_REQUESTED, frozenset()) | {name}
        what = _io_call(fn, frame) if this.breaks else None
        if what is not None and _from_user(frame):  # (a logging handler's: one reason, whatever it writes)
            this.breaks[-1](LOG if frame.f_globals.get("__name__", "").partition(".")[0] == "logging" else
                            io_reason(what))
        elif (TRACING.value or WATCHED.value) and getattr(fn, "__module__", None) in ("math", "cmath") and \
                _from_user(frame) and fn.__name__ not in ("floor", "ceil", "trunc"):  # (those call __floor__)
            note_math_calls(frame)  # (math.sqrt(lr): a traced float's value read without its methods)
            note_math_read(frame)  # (math.cos(g["lr"]): a group's float, group_writes.py)
    elif TRACING.value and event in ("call", "return"):  # the traced int arguments' reads (traced_reads.py)
        called = event == "call" and _from_user(frame)
        note_frame(frame, called, event == "return" and _own_module(frame) not in _NOT_USER)
        if called:  # (``0.01 * (it + 1)`` in the functions it calls: float_constants.py)
            swap_callees(frame)


def _whose(frame, run):
    """Whose code ``frame`` runs, for :func:`names_read`: True for the user's, False for ember's
    modules' (``ember.nn``), None for ember's other code, NumPy's...; the standard library's
    code is its caller's (``re`` compiling for ember is ember's)."""
    module = frame.f_globals.get("__name__", "")
    top = module.partition(".")[0]
    if top in sys.stdlib_module_names and top not in _LIBRARIES:
        return run.get(frame.f_back.f_code) if frame.f_back is not None else None
    if top not in _LIBRARIES:
        return True
    return False if module.startswith("ember.nn") else None


def _own_module(frame):
    return frame.f_globals.get("__name__", "").partition(".")[0]


# the owners (``fn.__self__``) of the C functions called most between a recording's ops (the GPT
# step's 3,200: id, isinstance, dict.get, list.pop, set.add, sys.setprofile...), none doing input
# or output: no ABC isinstance check for them (1.3 -> 0.3 us a call)
_QUIET_OWNERS = frozenset({list, dict, set, frozenset, tuple, str, bytes, int, float, deque, defaultdict, OrderedDict})


def _io_call(fn, frame=None):
    """How a C call doing input or output, warning or reading the clock (from ``frame``, the user's) is named, or None."""
    owner = getattr(fn, "__self__", None)
    if type(owner) in _QUIET_OWNERS or owner is builtins or owner is sys:  # (open's is _io, print: patches.py)
        return None
    if isinstance(owner, io.IOBase):
        return f"{type(owner).__name__}.{fn.__name__}()"
    if fn is builtins.open or fn is io.open or getattr(fn, "__module__", None) == "_warnings" and fn.__name__ in (
            "warn", "warn_explicit"):  # (a warning: shown, recorded or raised once; torch's dynamo breaks too)
        return "open()" if fn.__name__ == "open" else f"warnings.{fn.__name__}()"
    if (owner is os or getattr(fn, "__module__", None) == os.name) and fn.__name__ not in _PURE_OS:
        return f"os.{fn.__name__}()"  # (os's C functions live in posix or nt)
    clock = getattr(fn, "__module__", None) == "time" or getattr(owner, "__module__", None) == "datetime" and fn.__name__ in _CLOCK
    if clock and (frame is None or _own_module(frame) not in sys.stdlib_module_names):  # (not a Condition's wait)
        return f"{owner.__name__}.{fn.__name__}()"  # (the clock is input: a replay would give back the recording's time)


_NOT_PLAIN = (Module, Optimizer, type, Tensor, logging.Logger, logging.LoggerAdapter, int, float)  # (a traced number: a number)


def plain_object(value):
    """An object whose attributes a function may set: not a module, optimizer, class, function
    or logger (its calls are graph breaks, as torch's dynamo's, and its tree of loggers and
    handlers no graph reads); callable only when its class's ``__call__`` is user code (a step
    object, not a compiled function or a ``functools.partial``)."""
    return hasattr(value, "__dict__") and not isinstance(value, _NOT_PLAIN) \
        and (not callable(value) or user_code(getattr(type(value), "__call__", None))) and not inspect.ismodule(value)


def user_code(fn):
    """Whether ``fn`` is a Python function of the user's (not ember's, NumPy's, the standard
    library's): the guards look into what it reads."""
    return isinstance(fn, types.FunctionType) and (getattr(fn, "__module__", None) or "").partition(".")[0] \
        not in _LIBRARIES


def user_class(cls):
    """Whether ``cls`` is a class of the user's (a model's, not ``nn.Linear``): see :func:`user_code`."""
    return (getattr(cls, "__module__", None) or "").partition(".")[0] not in _LIBRARIES


_NOT_USER = frozenset(_LIBRARIES | sys.stdlib_module_names)  # modules whose frames are no user code


def unreplayable(value, world):
    """Why a replay cannot return what a call returned (``value``, looked into through tuples,
    lists and dicts), else None: an iterator (a generator, ``iter()``, ``map()``: a replay would
    hand back the first call's, consumed), or an object the call made (of a user class, a
    ``SimpleNamespace``, a set, a user function: a replay would hand back the first call's, with
    its tensors), or a tensor whose gradient reaches a leaf the call made (a replay returns
    the graph's tensors, requiring no grad). Objects the call reached (``world``'s roots,
    modules, optimizers, what containers and modules hold) may be returned as they are."""
    if isinstance(value, (tuple, list, dict)):
        items = value.values() if isinstance(value, dict) else value
        return next(filter(None, [unreplayable(v, world) for v in items]), None)
    if isinstance(value, Tensor):
        return None if not value.requires_grad or not _made_leaf(value, world) else (
            "the function returns a tensor whose gradient reaches a tensor requiring grad it made "
            "(ones(requires_grad=True), clone().requires_grad_()): a replay's would require no grad")
    if hasattr(type(value), "__next__"):
        return (f"the function returns an iterator ({type(value).__name__}): a replay would return the first "
                f"call's, consumed")
    made = type(value) in (set, types.SimpleNamespace) or user_code(value) \
        or plain_object(value) and user_class(type(value))
    if made and id(value) not in _reached(world):
        return (f"the function returns a {type(value).__name__} it made: a replay would return the first call's "
                f"(with its tensors)")
    return None


def aliased_results(tensors, world, views):
    """Why a replay cannot return the returned ``tensors`` as they alias each other, else None:
    two results overlapping in memory, none a tensor the call started with nor remade from another
    (``views``, aliases.py): ``y[:2], y[1:]`` of an unreturned ``y``. A replay returns a new
    array per other result, so a write into one would not show in the other."""
    remade, known = {v.position for v in views}, [*world.inputs, *world.params, *world.free]
    own = [t for i, t in enumerate(tensors) if i not in remade and not any(_overlap(t._data, k._data) for k in known)]
    for j, t in enumerate(own):
        if any(t is o or _overlap(t._data, o._data) for o in own[:j]):
            return ("the function returns results that alias each other, none a view of another (views of a "
                    "value it does not return, a detach()): a replay would return separate tensors")
    return None


def _overlap(a, b):
    """Whether NumPy arrays ``a`` and ``b`` share an element (True when too hard to tell)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return a is b
    if not np.may_share_memory(a, b):
        return False
    try:
        return np.shares_memory(a, b, max_work=10_000)
    except np.exceptions.TooHardError:
        return True


def _made_leaf(value, world):
    """Whether ``value``'s autograd graph reaches a leaf requiring grad that is none of the
    tensors the call started with (its inputs', parameters', tensors read): made by the call."""
    known = {id(t) for t in (*world.inputs, *world.params, *world.free, *_held_by_functions(world))}
    if value.grad_fn is None:
        return id(value) not in known
    todo, seen, before = [value.grad_fn], set(), history_nodes(world)
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen or id(node) in before:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaf = node._variable()
            if leaf is not None and id(leaf) not in known:
                return True
        else:
            todo += [n for n, _ in node.next_functions]
    return False


def _held_by_functions(world):
    """The tensors that the functions a call was given or read hold in their closures, defaults
    and partial arguments (a ``while_loop`` body's weights, one level into tuples, lists and
    dicts): made before the call."""
    values = [*world.arguments, *world.roots]
    values += [v for c in values if isinstance(c, (tuple, list, dict))
               for v in (c.values() if isinstance(c, dict) else c)]
    held = []
    for f in values:
        f = getattr(f, "__func__", f)
        if isinstance(f, functools.partial):
            held += [*f.args, *f.keywords.values()]
            f = f.func
        if isinstance(f, types.FunctionType):
            held += [_cell_value(c) for c in f.__closure__ or ()] + list(f.__defaults__ or ())
    held += [v for c in held if isinstance(c, (tuple, list)) for v in c]
    return [t for t in held if isinstance(t, Tensor)]


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _reached(world):
    """The ids of the objects a call reached (see :func:`unreplayable`)."""
    objects = [*world.arguments, *world.roots, *world.members, *world.all_modules, *world.optimizers]
    objects += [v for m in world.all_modules for v in vars(m).values()]
    return {id(o) for o in objects}


@functools.lru_cache(maxsize=None)
def _global_names(code):
    return tuple(dict.fromkeys(global_names(code)))


def _small(value):
    """Whether a global's contents are compared after a recording (not a data set's list)."""
    return not isinstance(value, (list, deque, dict, set)) or len(value) <= 4096


def _ident(x, depth=0):
    """A number or string itself, a container (of up to 64 items) or plain object (not a
    module) its contents to three levels down (``h.inner.vals.append(k)``), anything else its id."""
    if x is None or type(x) in (bool, int, float, str):
        return x
    if advances(x):  # (a module's ``self.rng``, an argument's: a draw or next() moves it)
        return position(x)
    if depth < 3 and (isinstance(x, (list, deque, dict, set)) and len(x) <= 64 or plain_object(x)):
        return _contents(x, depth + 1)
    return id(x)


def _contents(value, depth=0):
    if advances(value):  # (a global's, a closure cell's; a random.Random is a plain object too)
        return position(value)
    ident = functools.partial(_ident, depth=depth)
    if isinstance(value, (list, deque)):
        return "list", id(value), tuple(map(ident, value))
    if isinstance(value, dict):
        return "dict", id(value), tuple((ident(k), ident(v)) for k, v in value.items())
    if isinstance(value, set):
        return "set", id(value), frozenset(map(ident, value))
    if isinstance(value, Module):
        return id(value), tuple((k, _ident(v, 3)) for k, v in vars(value).items())  # (its own guards go deeper)
    if plain_object(value):
        return id(value), tuple((k, ident(v)) for k, v in vars(value).items())
    if isinstance(value, type) and user_class(value):  # (``Cls.last = k``)
        return id(value), tuple((k, _ident(v)) for k, v in vars(value).items() if not k.startswith("__"))
    slots = [n for c in type(value).__mro__ for n in getattr(c, "__slots__", ())] if user_class(type(value)) else ()
    if slots and not hasattr(value, "__dict__"):  # (an object of a class with __slots__: ``st.n = k``)
        return id(value), tuple((n, _ident(getattr(value, n, None))) for n in slots if type(n) is str)
    return _ident(value)


def global_names(code):
    """Every global name ``code`` (a code object) reads or writes (its ``LOAD_GLOBAL``,
    ``LOAD_NAME`` ... instructions: not the attribute names ``co_names`` also holds), with those
    of its nested functions."""
    for instruction in dis.get_instructions(code):
        if instruction.opname in _GLOBAL_OPS:
            yield instruction.argval
    # with the nested functions' (a cond branch ``lambda x: lin(x)`` reads ``lin`` itself)
    for const in code.co_consts:
        if inspect.iscode(const):
            yield from global_names(const)


_GLOBAL_OPS = {"LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME"}
