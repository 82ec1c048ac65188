"""Where ``ember.compile``'s entries live (``torch.compile(isolate_recompiles=False)``, torch's default).

Each compiled callable reads its entries (guards and graphs, ``eval_frame._Entry``) and its
recompile-limit state from a :class:`Cache`. The calls of ``ember.compile`` that compile one
thing with the same settings share one: the same function compiled twice, ``ember.compile(f)``
called again in a loop, ``model.compile()`` or ``ember.compile(model)`` twice. They find the
graphs the others captured and count their recompiles against one ``recompile_limit``.
The store is keyed weakly by what is compiled: a function object, or the object a bound method
(a module's ``__call__``) is bound to, so it goes when that goes.

Never shared (each has its own cache): ``isolate_recompiles=True``, calls with another backend,
mode or options, ``fullgraph``, ``dynamic`` or ``recompile_limit``, a ``shapes_spec``, and two
function objects of one code (closures with other cells) or two modules of one class: torch's
guards tell those apart by their cells and parameters, ember's graphs hold both, so another
instance always recompiles; kept apart, neither counts against the other's limit.
"""
import types
import weakref

__all__ = ["Cache", "cache_for", "clear", "shared"]


class Cache:
    """The entries of the compiled callables that share them (``entries``, newest last),
    whether the recompile-limit warning was given (``warned``) and the positions of the int
    arguments that a dynamic graph could not take as symbols (``static_ints``)."""

    __slots__ = ("entries", "warned", "static_ints")

    def __init__(self):
        self.entries, self.warned, self.static_ints = [], False, set()

    def clear(self):
        """Forgets every entry, the recompile-limit warning and the static ints (``ember.compiler.reset``)."""
        self.entries.clear()
        self.warned = False
        self.static_ints.clear()


_store = weakref.WeakKeyDictionary()  # what is compiled -> {settings: Cache}


def cache_for(fn, settings, isolate):
    """The :class:`Cache` for compiling ``fn`` (a function, a bound method, any callable) with
    ``settings`` (a hashable tuple of the compile call's backend and options): the one shared by
    the earlier such calls, or a new one. ``isolate``: always a new one."""
    if isolate:
        return Cache()
    owner, method = fn, getattr(fn, "__func__", None)
    if isinstance(fn, types.MethodType):  # shared by the calls compiling this method of this object
        owner, settings = fn.__self__, (method, *settings)
    try:
        caches = _store.setdefault(owner, {})
        return caches.setdefault(settings, Cache())
    except TypeError:  # not weakly referenceable or not hashable (its own cache then)
        return Cache()


def clear():
    """Empties every shared cache (``ember.compiler.reset``): the callables sharing one keep sharing it."""
    for caches in list(_store.values()):
        for cache in caches.values():
            cache.clear()


def shared(name):
    """A compiled callable's property ``name``, read from and written to its ``_cache``."""
    return property(lambda self: getattr(self._cache, name), lambda self, value: setattr(self._cache, name, value),
                    doc=f"``{name}`` of the callable's :class:`Cache` (shared, see :mod:`ember.compiler.shared_cache`).")
