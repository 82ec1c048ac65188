"""Session 25's review: inputs where compiled code gave another result than eager's.

Module attributes read where no user code names them (``compiler/side_effects.py``'s
``names_read``): a read by a name computed at run time (``hasattr(self, name)``, ``getattr``
under another name), by a format string's field (``"{0.scale}".format(self)``) or by a getter
without Python code (``property(operator.attrgetter("_factor"))``) must be guarded, else the
graph replays the old value after the attribute changed.

Calls bound to the signature (``compiler/arguments.py``): a ``functools.wraps`` decorator's
wrapper is what runs, and it may take fewer positional parameters than the function it wraps
or read the keywords as passed; a partial's keywords may change after compiling.

State a compiled call changes (``dynamic.py``, ``dynamic_ints.plain_ints``, ``guards.py``): a
module's list appended to once per call (the dynamic graph's probes appended their sizes too),
a ``Counter`` keyed by an int argument (its keys became pairs), a ``collections.deque`` (never
guarded nor seen changing: appends lost, a changed item replayed stale), and state no
comparison saw change (another module's global list a called function appends to, an object
of a class with ``__slots__``, a class attribute, a list two levels down a global): each
call's recording probed other sizes, whose appends and stores stayed (20 entries for 5
calls, ``st.n`` the last probe's 18). Arguments of an int or
float subclass (an ``IntEnum``: a SyntaxError in the generated code; ``MyInt(5)`` after
``MyInt(4)``: guarded by an identity the new object took, 4 replayed).

A float argument taken as a graph input (``traced_floats.py``) by a float16 or bfloat16 op: eager
computes the op at float32 with the number (``x_half * 70000.0`` is 0 where x is 0, ``* 1e-8``
keeps 6e-8 of 3); the graph cast the number to float16 first (nan, 0). A float passed in a
list to code reading it in C (``statistics.fmean([lr, 1.0])`` sums with ``math.fsum``): its
mean was a constant of the graph, the first recording's.

A tensor requiring grad made inside the call (``ones(2, requires_grad=True)``,
``x.clone().requires_grad_()``): replays returned results that required no grad (an
``autograd.grad`` after them raised), older than session 25; such a call now runs eagerly.
"""
import collections
import enum
import statistics
import sys
import types
import functools
import operator

import pytest

import ember
from ember._dynamo.utils import counters

nn = ember.nn
_NAMES = ["sc" + "ale"]
_get = getattr  # (the built-in under another name)


class _Property(nn.Module):
    factor = property(operator.attrgetter("_factor"))

    def __init__(self):
        super().__init__()
        self._factor = 2.0

    def forward(self, x):
        return x * self.factor


class _Has(nn.Module):
    def forward(self, x):
        for name in _NAMES:
            if hasattr(self, name):
                x = x * 3
        return x


class _Format(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x):
        return x * float("{0.scale}".format(self))


class _Aliased(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale, self.key = 2.0, _NAMES[0]

    def forward(self, x):
        return x * _get(self, self.key)


class _Stored(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale, self.read = 2.0, operator.attrgetter(_NAMES[0])

    def forward(self, x):
        return x * self.read(self)


@pytest.mark.parametrize("module, name, value", [
    (_Property, "_factor", 5.0), (_Has, "scale", 1), (_Format, "scale", 5.0), (_Aliased, "scale", 5.0),
    (_Stored, "scale", 5.0)], ids=["property-attrgetter", "hasattr", "format", "aliased-getattr", "stored-attrgetter"])
def test_attribute_read_unseen_is_guarded(module, name, value):
    ember.compiler.reset()
    m = module()
    compiled, x = ember.compile(m), ember.ones(3)
    assert compiled(x).tolist() == m(x).tolist()
    setattr(m, name, value)
    assert compiled(x).tolist() == m(x).tolist()


def _keywords_counted(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # (reads the keywords as passed)
        return fn(*args, **kwargs) * (10 if "k" in kwargs else 1)
    return wrapper


def _keywords_only(fn):
    @functools.wraps(fn)
    def wrapper(x, **kwargs):  # (takes one positional value only)
        return fn(x, **kwargs) * 2
    return wrapper


@_keywords_counted
def _counted(x, k=1):
    return x * k


@_keywords_only
def _only(x, k=1):
    return x * k


def _scaled(x, k=1):
    return x * k


@pytest.mark.parametrize("fn", [_counted, _only], ids=["keywords-read", "one-positional"])
def test_wrapped_function_called_as_made(fn):
    compiled, x = ember.compile(fn), ember.ones(2)
    for kwargs in ({"k": 3}, {}, {"k": 1}):
        assert compiled(x, **kwargs).tolist() == fn(x, **kwargs).tolist()


def test_partial_keywords_changed():
    """``p.keywords["k"] = 5`` after compiling: torch's guards see it (5; 2 frames over k = 2, 5,
    2); guards.World read a partial's arguments once per compiled function and replayed k=2
    (SYMS26: they are a read of each call's world now)."""
    p = functools.partial(_scaled, k=2)
    compiled, x = ember.compile(p, backend="aot_eager"), ember.ones(2)
    counters.clear()
    for k in (2, 5, 2):
        p.keywords["k"] = k
        for _ in range(3):  # (the recheck's fast path too)
            assert compiled(x).tolist() == p(x).tolist() == [float(k)] * 2
    assert counters["stats"]["unique_graphs"] == 2


class _Appends(nn.Module):
    def __init__(self):
        super().__init__()
        self.sizes, self.seen, self.last = [], collections.Counter(), collections.deque(maxlen=4)

    def forward(self, x, k):
        self.sizes.append(x.shape[0])
        self.seen[k] += 1
        self.last.append(k + 1)
        return x * len(self.last)


def test_state_changed_by_each_call_as_eager():
    m = _Appends()
    compiled = ember.compile(m)
    outs = [compiled(ember.ones(n), k).sum().item() for n, k in [(1, 1), (2, 2), (3, 3), (3, 4), (4, 5)]]
    assert outs == [1.0, 4.0, 9.0, 12.0, 16.0]
    assert m.sizes == [1, 2, 3, 3, 4] and list(m.seen.items()) == [(k, 1) for k in range(1, 6)]
    assert list(m.last) == [3, 4, 5, 6] and all(type(v) is int for v in m.last)


_LOG = collections.deque()


def _logged(x, box):
    _LOG.append(1)
    return x * box.items[-1]


def test_deque_written_and_read():
    class Box:
        pass
    box, x = Box(), ember.ones(1)
    box.items = collections.deque([1.0])
    compiled = ember.compile(_logged)
    assert compiled(x, box).item() == 1.0
    box.items.append(5.0)
    assert compiled(x, box).item() == 5.0 and len(_LOG) == 2


class _Mode(enum.IntEnum):
    A = 2
    B = 3


class _Int(int):
    pass


class _Float(float):
    pass


def _times(x, k):
    return x * k


def test_int_and_float_subclass_arguments():
    compiled, x = ember.compile(_times), ember.ones(1)
    for k in (_Mode.A, _Mode.B, _Int(4), _Int(5), _Float(1.5), _Float(2.5)):
        assert compiled(x, k).item() == float(k)


def _half_times(x, lr):
    return x * lr


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_float_argument_with_a_half_tensor(dtype):
    x = ember.tensor([0.0, 1.0, 3.0, -2.5, 1000.0]).to(getattr(ember, dtype))
    ember.compiler.reset()
    compiled = ember.compile(_half_times)
    for lr in (0.5, 0.1, 70000.0, 3.3, 1e-8, 0.30000001):
        got, want = compiled(x, lr), _half_times(x, lr)
        assert got.dtype == want.dtype and str(got.float().tolist()) == str(want.float().tolist()), lr


def _made_leaf(x):
    w = ember.ones(2, requires_grad=True)
    return (x * w).sum()


def _cloned_leaf(x):
    x = x.clone().requires_grad_()
    y = (x * 2).sin().sum()
    return ember.autograd.grad(y, x, create_graph=True)[0]


@pytest.mark.parametrize("fn", [_made_leaf, _cloned_leaf], ids=["ones-requires-grad", "clone-requires-grad"])
def test_leaf_made_in_the_call_keeps_requiring_grad(fn):
    compiled = ember.compile(fn)
    for _ in range(3):
        got, want = compiled(ember.arange(2.0)), fn(ember.arange(2.0))
        assert got.requires_grad and got.tolist() == want.tolist()


def _mean_scaled(x, lr):
    return x * statistics.fmean([lr, 1.0])


def test_float_read_in_c_from_a_list():
    compiled, x = ember.compile(_mean_scaled), ember.ones(2)
    for lr in (0.5, 0.25, 1.5, 3.0):
        assert compiled(x, lr).tolist() == _mean_scaled(x, lr).tolist(), lr


_OTHER = types.ModuleType("_review_25_other")  # another module's function appending to its global
exec("SEEN = []\ndef record(k):\n    SEEN.append(k * 2)\n", _OTHER.__dict__)
sys.modules[_OTHER.__name__] = _OTHER


class _Slotted:
    __slots__ = ("n",)


class _Last:
    k = 0


_SLOT, _NESTED = _Slotted(), {"a": {"b": []}}


def _stores(x, k):
    _OTHER.record(k)
    _SLOT.n = k
    _Last.k = k
    return x * k


def _nested(x):
    _NESTED["a"]["b"].append(x.shape[0])
    return x * 2


def test_state_no_comparison_saw_as_eager():
    compiled = ember.compile(_stores)
    for k in range(1, 6):
        compiled(ember.ones(1), k)
    assert _OTHER.SEEN == [2, 4, 6, 8, 10] and all(type(v) is int for v in _OTHER.SEEN)
    assert type(_SLOT.n) is int and _SLOT.n == 5 and type(_Last.k) is int and _Last.k == 5
    compiled = ember.compile(_nested)
    for n in (1, 2, 3, 3, 4):
        compiled(ember.ones(n))
    assert _NESTED["a"]["b"] == [1, 2, 3, 3, 4]
