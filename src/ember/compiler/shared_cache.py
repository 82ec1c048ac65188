"""Where ``ember.compile``'s entries live (``torch.compile(isolate_recompiles=False)``, torch's default).

Each compiled callable reads its entries (guards and graphs, ``eval_frame._Entry``) from a
:class:`Cache`. The calls of ``ember.compile`` that compile one thing with the same settings
share one: the same function compiled twice, ``ember.compile(f)`` called again in a loop,
``model.compile()`` or ``ember.compile(model)`` twice. They find the graphs the others captured.
The store is keyed weakly by what is compiled: a function object, or the object a bound method
(a module's ``__call__``) is bound to, so it goes when that goes.

The caches of one code object (the function's, a module's ``forward``'s) compiled with the
same settings form a :class:`Family`, torch's cache per code object: two closures of one
``def``, two modules of one class, ``fullgraph=True`` and ``False``. A call that finds no entry
in its own cache reuses a graph of the family where only the identity of the objects differs
(:mod:`.rebind`), and ``recompile_limit`` counts the graphs the family captured, with one
warning for all of them. The family outlives its functions, as torch's cache lives on the code
object: the graphs a plain function captured stay in it when the function goes (its
``orphans``, with the function's closure cells and defaults, so that what its guards name by
identity stays alive), and a closure made, compiled and dropped in a loop runs the first one's
graph (:mod:`.rebind`), counted once against ``recompile_limit``.

Never shared (each has its own cache and family): ``isolate_recompiles=True``, calls with another
backend, mode or options, ``dynamic`` or ``recompile_limit``, and a ``shapes_spec``.
"""
import types
import weakref

from ..nn.modules.module import Module

__all__ = ["Cache", "Family", "cache_for", "clear", "shared"]


class Family:
    """The caches of one code object compiled alike (``caches``, weakly held), whether its
    recompile-limit warning was given (``warned``), the entries its dropped functions
    captured (``orphans``: ``(entry, what it keeps alive)``) and the floats its functions read
    (``reads``: a :class:`~.read_floats.Reads`, made by the first call; a closure made per call of
    a factory finds the float its cell held in the one before, as torch's per code object)."""

    __slots__ = ("caches", "warned", "orphans", "reads", "__weakref__")

    def __init__(self):
        self.caches, self.warned, self.orphans, self.reads = weakref.WeakSet(), False, [], None

    def adopt(self, entries, held):
        """Keeps ``entries`` of a dropped function's cache that another function of the code
        may rebind (not the rebound copies), with ``held`` (its closure cells and defaults)."""
        self.orphans += [(e, held) for e in entries if getattr(e, "canon", None) is not None and not e.rebound]

    def entries(self):
        """Every entry of the family: its caches' and its orphans'."""
        return [e for cache in list(self.caches) for e in cache.entries] + [e for e, _ in self.orphans]

    def captured(self):
        """How many graphs (or eager entries) the family's callables captured that count against
        ``recompile_limit``: not the copies rebound to other objects, nor a module's own graph
        where only its attributes' values differ (:mod:`.rebind`)."""
        return sum([getattr(e, "counted", True) for e in self.entries()])


class Cache:
    """The entries of the compiled callables that share them (``entries``, newest last), the
    :class:`Family` they belong to, the positions of the int arguments that a dynamic graph
    could not take as symbols (``static_ints``) and the graph breaks at which one of them was
    split (``breaks``: ``breaks`` and ``break_frames`` of those recordings, or None)."""

    __slots__ = ("entries", "family", "static_ints", "breaks", "__weakref__")

    def __init__(self, family=None):
        self.entries, self.family, self.static_ints, self.breaks = [], family or Family(), set(), None
        self.family.caches.add(self)

    warned = property(lambda self: self.family.warned, lambda self, value: setattr(self.family, "warned", value),
                      doc="Whether the family's recompile-limit warning was given.")

    def clear(self):
        """Forgets every entry, the recompile-limit warning and the static ints (``ember.compiler.reset``)."""
        self.entries.clear()
        self.family.warned, self.breaks = False, None
        self.static_ints.clear()


_store = weakref.WeakKeyDictionary()  # what is compiled -> {settings: Cache}
_families = weakref.WeakKeyDictionary()  # code object -> {settings: Family}


def _code(fn):
    """The code object whose calls ``fn`` runs: a function's, a method's, a module's ``forward``'s
    for its ``__call__``; None for what has none (a built-in, a partial, a callable object)."""
    func = getattr(fn, "__func__", fn)
    if isinstance(fn, types.MethodType) and isinstance(fn.__self__, Module) and func.__name__ in (
            "__call__", "_call_impl"):  # (``Module.__call__`` is ``_call_impl``: every module's family was one)
        func = getattr(type(fn.__self__).forward, "__func__", type(fn.__self__).forward)
    return getattr(func, "__code__", None)


def _family(fn, settings):
    code = _code(fn)
    if code is None:
        return Family()
    return _families.setdefault(code, {}).setdefault(settings, Family())


def _orphaning(cache, fn):
    """Hands ``cache``'s entries to its family when it goes, where ``fn`` is a plain function
    (a module's graphs go with the module: they hold its parameters)."""
    if isinstance(fn, types.FunctionType):
        held = (fn.__closure__, fn.__defaults__, fn.__kwdefaults__)
        weakref.finalize(cache, _adopt, weakref.ref(cache.family), cache.entries, held).atexit = False


def _adopt(family, entries, held):
    family = family()
    if family is not None:
        family.adopt(entries, held)


def cache_for(fn, settings, isolate):
    """The :class:`Cache` for compiling ``fn`` (a function, a bound method, any callable) with
    ``settings`` (a hashable tuple of the compile call's backend and options): the one shared by
    the earlier such calls, or a new one in the family of ``fn``'s code. ``isolate``: always a
    new one, in a family of its own."""
    if isolate:
        return Cache()
    owner, key = fn, settings
    if isinstance(fn, types.MethodType):  # shared by the calls compiling this method of this object
        owner, key = fn.__self__, (fn.__func__, *settings)
    try:
        caches = _store.setdefault(owner, {})
        cache = caches.get(key)
        if cache is None:
            cache = caches[key] = Cache(_family(fn, settings))
            _orphaning(cache, fn)
        return cache
    except TypeError:  # not weakly referenceable or not hashable (its own cache then)
        return Cache()


def clear():
    """Empties every shared cache (``ember.compiler.reset``): the callables sharing one keep sharing it."""
    for caches in list(_store.values()):
        for cache in caches.values():
            cache.clear()
    for families in list(_families.values()):
        for family in families.values():
            family.orphans.clear()
            family.warned, family.reads = False, None


def shared(name):
    """A compiled callable's property ``name``, read from and written to its ``_cache``."""
    return property(lambda self: getattr(self._cache, name), lambda self, value: setattr(self._cache, name, value),
                    doc=f"``{name}`` of the callable's :class:`Cache` (shared, see :mod:`ember.compiler.shared_cache`).")
