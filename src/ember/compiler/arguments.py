"""A compiled function's call bound to its signature first, as torch's dynamo binds a frame's
arguments: ``f(x, k=1)``, ``f(x, 1)``, ``f(k=1, x=x)`` and ``f(x)`` (``k=1`` its default) are
one call ``f(x)``, so they share their guards and graph instead of one each."""
import dis
import functools
import inspect

from ..nn.modules import module as _module

__all__ = ["Binder"]

_P = inspect.Parameter
_VARIADIC = (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)


class Binder:
    """Binds calls of ``fn`` (its signature read once, again where its defaults were rebound):
    :meth:`bound`."""

    __slots__ = ("fn", "holder", "signature", "names", "least", "keyword_only", "defaults", "varargs", "varkw",
                 "of", "formed", "module", "unordered", "short", "shapes")

    def __init__(self, fn):
        self.fn, self.holder = fn, getattr(fn, "__func__", fn)  # (whose defaults a method has)
        self.of = _defaults(self.holder)
        owner = getattr(fn, "__self__", None)  # (a module's forward: its hooks see the call as made)
        self.module = owner if isinstance(owner, _module.Module) else None
        try:  # (the wrapper's own: a ``functools.wraps`` decorator's may read the keywords as passed)
            signature = inspect.signature(fn, follow_wrapped=False)
        except (TypeError, ValueError):  # (a builtin without a signature: calls stay as made)
            signature = None
        if isinstance(fn, functools.partial):  # (its keywords, the defaults, may change: ``p.keywords[k] = v``)
            signature = None
        params = list(signature.parameters.values()) if signature is not None else []
        # (only ``*args, **kwargs``, a module's ``__call__``: nothing to bind)
        self.signature = signature if any(p.kind not in _VARIADIC for p in params) else None
        self.names = [p.name for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
        self.keyword_only = [p.name for p in params if p.kind is _P.KEYWORD_ONLY]
        self.defaults = {p.name: p.default for p in params if p.default is not _P.empty}
        # the positional values a call always has: up to the last without a default or with a number's
        numbered = [i + 1 for i, name in enumerate(self.names) if _filled_in(self.defaults.get(name, _P.empty))]
        self.least = max(numbered, default=0)
        # (a call of ``least`` positional values and no keyword has its form already)
        self.formed = not any(_filled_in(self.defaults.get(name, _P.empty)) for name in self.keyword_only)
        self.varargs, self.varkw = (any(p.kind is kind for p in params) for kind in _VARIADIC)
        # ``**kwargs`` read by name only (``kw["a"]``, ``kw.get("b")``): its order is no part of the
        # call, as torch guards it only where the function iterates the dict
        self.unordered = self.varkw and _read_by_name(getattr(self.holder, "__code__", None))
        if any(p.kind is _P.POSITIONAL_ONLY for p in params):
            self.names = None  # (bound by the signature itself: a keyword may then go to ``**kwargs``)
        # {n: (the values filled in, the keywords)} of the calls of n <= least positional values and
        # no keyword: their form does not depend on the values passed (``f(x, y)``, ``alpha=0.5``);
        # {(n, keyword names): ([(name, passed, default)] positional, the same of the keywords)} of
        # such calls with keywords that the form always keeps (``f(x, alpha=0.7)``, ``f(x=x, y=y)``)
        self.short, self.shapes = {}, {}

    def bound(self, args, kwargs):
        """``(args, kwargs)`` of the same call in one form: each named parameter passed
        positionally (keyword-only ones as keywords, in the signature's order), its default
        filled in where it is a number, else left out where the value passed is the default
        (``mask=None``: ``m(x)`` stays the fast call of tensors only), the extra keywords of
        ``**kwargs`` last in the order given. A call the signature refuses stays as made (the
        function raises its TypeError), as does a call of a module with forward hooks (a hook
        reads the arguments as passed)."""
        if self.signature is None or not kwargs and len(args) == self.least and self.formed:
            return args, kwargs  # (already so: the common positional call costs one test)
        if self.module is not None and (self.module._forward_pre_hooks or self.module._forward_hooks
                                        or _module._global_forward_pre_hooks or _module._global_forward_hooks):
            return args, kwargs
        now = _defaults(self.holder)
        if now[0] is not self.of[0] or now[1] is not self.of[1]:  # (``fn.__defaults__ = ...``)
            self.__init__(self.fn)
        elif not kwargs:
            if len(args) in self.short:
                tail, keyword = self.short[len(args)]
                return args + tail, dict(keyword) if keyword else kwargs
        elif (len(args), *kwargs) in self.shapes:
            tail, keyword = self.shapes[(len(args), *kwargs)]
            return (args + tuple([kwargs[name] if passed else value for name, passed, value in tail]),
                    {name: kwargs[name] if passed else value for name, passed, value in keyword})
        call = self._filled(args, kwargs)
        if call is None:
            return args, kwargs
        filled, keyword = call
        names, defaults = self.names or list(self.signature.parameters), self.defaults
        n = len(filled)
        if n <= len(names):  # (no ``*args`` values follow)
            while n > self.least and _same(filled[n - 1], defaults.get(names[n - 1], _P.empty)):
                n -= 1
        for name in self.keyword_only:
            if name in keyword and _same(keyword[name], defaults.get(name, _P.empty)):
                del keyword[name]
        if len(args) <= self.least and self.names is not None:
            self._keep(len(args), kwargs, filled[len(args):n], keyword)
        return tuple(filled[:n]), keyword

    def _keep(self, n, kwargs, tail, keyword):
        """Keeps the form of a call of ``n`` positional values (at most ``least``) and ``kwargs``
        when it does not depend on the values passed: no keyword but one the form keeps."""
        if not kwargs:
            self.short[n] = tuple(tail), dict(keyword)
            return
        kept = self.names[n:self.least]
        if all([name in kept or name in self.keyword_only and _filled_in(self.defaults.get(name, _P.empty))
                for name in kwargs]):
            # (a value passed is not kept: the plan holds no argument alive)
            self.shapes[(n, *kwargs)] = ([(name, name in kwargs, None if name in kwargs else value)
                                          for name, value in zip(kept, tail)],
                                         [(name, name in kwargs, None if name in kwargs else value)
                                          for name, value in keyword.items()])

    def _filled(self, args, kwargs):
        """``(positional values, keywords)`` with every named parameter (defaults filled in),
        or None where the call is refused."""
        if self.names is None:
            try:
                call = self.signature.bind(*args, **kwargs)
            except TypeError:
                return None
            call.apply_defaults()
            return list(call.args), dict(call.kwargs)
        names, defaults, n = self.names, self.defaults, len(args)
        if n > len(names) and not self.varargs or any(name in kwargs for name in names[:n]):
            return None
        rest, filled, keyword = dict(kwargs), list(args), {}
        for name in names[n:]:
            if name not in rest and name not in defaults:
                return None
            filled.append(rest.pop(name) if name in rest else defaults[name])
        for name in self.keyword_only:
            if name not in rest and name not in defaults:
                return None
            keyword[name] = rest.pop(name) if name in rest else defaults[name]
        if rest and not self.varkw:
            return None
        keyword.update(sorted(rest.items()) if self.unordered else rest)
        return filled, keyword


_BY_NAME = {"get", "pop", "setdefault", "__getitem__", "__contains__"}


def _read_by_name(code):
    """Whether ``code`` (a function's with ``**kwargs``, its last parameter) reads that dict by
    constant keys only (``kw["a"]``, ``kw.get("a", 1)``, ``"a" in kw``): never its order."""
    if code is None:
        return False
    name = code.co_varnames[code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS)]
    if name in code.co_cellvars:  # (a closure reads it: not followed)
        return False
    ins = list(dis.get_instructions(code))
    for i, op in enumerate(ins):
        if op.argval != name or op.opname not in ("LOAD_FAST", "STORE_FAST", "DELETE_FAST"):
            continue
        after = ins[i + 1:i + 3]
        if not (op.opname == "LOAD_FAST" and after and (
                after[0].opname == "CONTAINS_OP" and i and ins[i - 1].opname == "LOAD_CONST"
                or after[0].opname in ("LOAD_METHOD", "LOAD_ATTR") and after[0].argval in _BY_NAME
                or len(after) == 2 and after[0].opname == "LOAD_CONST" and after[1].opname == "BINARY_SUBSCR")):
            return False
    return True


def _filled_in(default):
    """Whether a parameter's value is always passed: it has no default, or a number (an int
    argument may be a symbol: ``f(x)`` and ``f(x, k=2)`` one graph, ``k=1`` the default, as torch's)."""
    return default is _P.empty or type(default) in (int, float)


def _same(value, default):
    """Whether passing ``value`` may be left to ``default`` (not :func:`_filled_in`): the default
    itself or an equal bool or string."""
    return not _filled_in(default) and (value is default or type(value) is type(default)
                                        and type(value) in (bool, str) and value == default)


def _defaults(fn):
    """``fn``'s default values: the tuple and the keyword-only ones' dict."""
    return getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None)
