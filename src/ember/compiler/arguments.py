"""A compiled function's call bound to its signature first, as torch's dynamo binds a frame's
arguments: ``f(x, k=1)``, ``f(x, 1)``, ``f(k=1, x=x)`` and ``f(x)`` (``k=1`` its default) are
one call ``f(x, 1)``, so they share their guards and graph instead of one each."""
import inspect

__all__ = ["Binder"]

_P = inspect.Parameter
_VARIADIC = (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)


class Binder:
    """Binds calls of ``fn`` (its signature read once, again where its defaults were rebound):
    :meth:`bound`."""

    __slots__ = ("fn", "holder", "signature", "names", "positional", "keyword_only", "defaults", "varargs", "varkw",
                 "of")

    def __init__(self, fn):
        self.fn, self.holder = fn, inspect.unwrap(getattr(fn, "__func__", fn))  # (whose defaults a method has)
        self.of = _defaults(self.holder)
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):  # (a builtin without a signature: calls stay as made)
            signature = None
        params = list(signature.parameters.values()) if signature is not None else []
        # (only ``*args, **kwargs``, a module's ``__call__``: nothing to bind)
        self.signature = signature if any(p.kind not in _VARIADIC for p in params) else None
        self.names = [p.name for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
        self.positional = len(self.names)
        self.keyword_only = [p.name for p in params if p.kind is _P.KEYWORD_ONLY]
        self.defaults = {p.name: p.default for p in params if p.default is not _P.empty}
        self.varargs, self.varkw = (any(p.kind is kind for p in params) for kind in _VARIADIC)
        if any(p.kind is _P.POSITIONAL_ONLY for p in params):
            self.names = None  # (bound by the signature itself: a keyword may then go to ``**kwargs``)

    def bound(self, args, kwargs):
        """``(args, kwargs)`` of the same call with each named parameter passed positionally
        (keyword-only ones as keywords, in the signature's order) and its defaults filled in;
        the extra keywords of ``**kwargs`` follow in the order given. A call the signature
        refuses stays as made (the function raises its own TypeError)."""
        if self.signature is None or not kwargs and not self.keyword_only and len(args) >= self.positional:
            return args, kwargs  # (already so: the common positional call costs one test)
        now = _defaults(self.holder)
        if now[0] is not self.of[0] or now[1] is not self.of[1]:  # (``fn.__defaults__ = ...``)
            self.__init__(self.fn)
        if self.names is None:
            try:
                call = self.signature.bind(*args, **kwargs)
            except TypeError:
                return args, kwargs
            call.apply_defaults()
            return call.args, call.kwargs
        names, defaults, n = self.names, self.defaults, len(args)
        if n > len(names) and not self.varargs or any(name in kwargs for name in names[:n]):
            return args, kwargs
        rest, filled, keyword = dict(kwargs), list(args), {}
        for name in names[n:]:
            if name not in rest and name not in defaults:
                return args, kwargs
            filled.append(rest.pop(name) if name in rest else defaults[name])
        for name in self.keyword_only:
            if name not in rest and name not in defaults:
                return args, kwargs
            keyword[name] = rest.pop(name) if name in rest else defaults[name]
        if rest and not self.varkw:
            return args, kwargs
        keyword.update(rest)
        return tuple(filled), keyword


def _defaults(fn):
    """``fn``'s default values: the tuple and the keyword-only ones' dict."""
    return getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None)
