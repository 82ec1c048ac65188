"""A second array namespace for tests: NumPy behind a counter, standing in for CuPy.

``CountedArray`` is an ndarray subclass playing another library's array type, and
``COUNTED`` is its namespace: every function call is counted and its arguments are unwrapped
to plain NumPy and the results wrapped back (a NumPy scalar result becomes a 0-d array, as
CuPy returns). Array methods and operators are part of the array type, so they are allowed.

What the seam must not do is reach these arrays through NumPy itself: a NumPy function or
ufunc called on a ``CountedArray`` (``np.exp(a)`` instead of ``xp.exp(a)``) arrives at
``__array_function__`` / ``__array_ufunc__`` and is logged as a *stray*, with the ember
source line that made it. A plain ``np.ndarray`` given to the namespace or combined with a
``CountedArray`` in an operator is logged as *mixed* (CuPy would refuse it, or copy it over
the bus), unless ``_backend.from_host`` makes the copy (logged as a *transfer*). Both logs are
kept rather than raised, so one run lists every place at once.
"""
import sys
import types
from collections import Counter

import numpy as np
import scipy.linalg
import scipy.special

from ember import _backend

__all__ = ["CountedArray", "COUNTED", "LOG", "counted", "plain"]


class Log:
    def __init__(self):
        self.clear()

    def clear(self):
        self.calls = Counter()  # namespace function -> calls
        self.strays = Counter()  # "np.exp at ember/_ops/x.py:12" -> calls
        self.mixed = Counter()  # "operator __add__ at ember/nn/y.py:3" -> calls
        self.transfers = Counter()  # host arrays copied in by _backend.from_host, by ember line


LOG = Log()


def _where():
    """The innermost ember source line on the stack (the code that made the call)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename.replace("\\", "/")
        if "/src/ember/" in name and "/_backend/" not in name:
            return f"{name.split('/src/')[1]}:{frame.f_lineno}"
        frame = frame.f_back
    return "<outside ember>"


def plain(x):
    """``x`` with every CountedArray in it (also inside lists, tuples, dicts) as a NumPy array."""
    if isinstance(x, CountedArray):
        return np.ndarray.view(x, np.ndarray)
    if type(x) in (list, tuple):
        return type(x)(plain(v) for v in x)
    if type(x) is dict:
        return {k: plain(v) for k, v in x.items()}
    return x


def counted(x):
    """``x`` (an array, a NumPy scalar, or tuples/lists of them) as CountedArrays."""
    if type(x) is np.ndarray:
        return np.ndarray.view(x, CountedArray)
    if isinstance(x, np.generic):
        return np.ndarray.view(np.asarray(x), CountedArray)
    if type(x) in (list, tuple):
        return type(x)(counted(v) for v in x)
    if isinstance(x, tuple):  # a named tuple (numpy.linalg's SVDResult, EighResult...)
        return type(x)(*(counted(v) for v in x))
    return x


def _has_raw(args):
    if type(args) is np.ndarray:
        return True
    if type(args) in (list, tuple):
        return any(_has_raw(a) for a in args)
    if type(args) is dict:
        return any(_has_raw(a) for a in args.values())
    return False


class CountedArray(np.ndarray):
    """A NumPy array that plays another library's array type (see the module docstring)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        LOG.strays[f"np.{name} at {_where()}"] += 1
        return counted(getattr(ufunc, method)(*plain(inputs), **plain(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        LOG.strays[f"np.{func.__name__} at {_where()}"] += 1
        return counted(func(*plain(args), **plain(kwargs)))


def _method(name):
    base = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        if _has_raw(args) or _has_raw(kwargs):
            LOG.mixed[f"ndarray.{name} at {_where()}"] += 1
        result = base(np.ndarray.view(self, np.ndarray), *plain(args), **plain(kwargs))
        if name.startswith("__i") and name not in ("__invert__", "__index__", "__int__"):
            return self  # an in-place operator: the same array
        return None if result is None else counted(result)
    method.__name__ = name
    return method


_OPERATORS = {f"__{p}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                        "matmul", "and", "or", "xor", "lshift", "rshift", "divmod")
              for p in ("", "r", "i") if not (p == "i" and op == "divmod")}
_OPERATORS |= {"__neg__", "__pos__", "__abs__", "__invert__", "__lt__", "__le__", "__eq__",
               "__ne__", "__gt__", "__ge__", "__getitem__", "__setitem__"}
for _name in sorted(_OPERATORS | {n for n in dir(np.ndarray) if not n.startswith("_")}):
    if callable(getattr(np.ndarray, _name, None)) and _name != "view":
        setattr(CountedArray, _name, _method(_name))


def _view(self, *args, **kwargs):
    # ``a.view(dtype)`` stays a CountedArray; ``a.view(np.ndarray)`` is the way out, allowed.
    return np.ndarray.view(self, *args, **kwargs)


CountedArray.view = _view


class _Ufunc:
    """A NumPy ufunc seen through the namespace: its call and its methods (``at``, ``reduce``)."""

    def __init__(self, ufunc, name):
        self._ufunc, self._name = ufunc, name

    def __call__(self, *args, **kwargs):
        return _call(self._ufunc, self._name, args, kwargs)

    def __getattr__(self, method):
        return lambda *args, **kwargs: _call(getattr(self._ufunc, method), f"{self._name}.{method}",
                                             args, kwargs)


def _call(fn, name, args, kwargs):
    LOG.calls[name] += 1
    if _has_raw(args) or _has_raw(kwargs):
        if name == "asarray" and sys._getframe(2).f_code is _backend.from_host.__code__:
            LOG.transfers[_where()] += 1  # the seam's own host-to-device copy
        else:
            LOG.mixed[f"xp.{name} at {_where()}"] += 1
    return counted(fn(*plain(args), **plain(kwargs)))


class Namespace:
    """NumPy's functions through the counter; types, dtypes and constants as NumPy's own."""

    def __init__(self, module, prefix=""):
        self._module, self._prefix = module, prefix

    def __getattr__(self, name):
        value = getattr(self._module, name)
        qualified = self._prefix + name
        if isinstance(value, np.ufunc):
            value = _Ufunc(value, qualified)
        elif isinstance(value, types.ModuleType):
            value = Namespace(value, qualified + ".")
        elif callable(value) and not isinstance(value, type):
            value = (lambda fn, qualified: lambda *a, **k: _call(fn, qualified, a, k))(value, qualified)
        setattr(self, name, value)  # looked up once
        return value


COUNTED = Namespace(np)
_backend.register(CountedArray, COUNTED, special=Namespace(scipy.special, "special."),
                  linalg=Namespace(scipy.linalg, "linalg."))
