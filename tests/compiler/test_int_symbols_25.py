"""Int arguments as symbols, the rows session 24 left open (compiler/traced_ints.py,
dynamic.py): a returned int computed from an int symbol. Counts of graphs against torch 2.13's
CompileCounter, values against eager's and torch's."""
import collections
import warnings

import pytest
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters

_Pair = collections.namedtuple("_Pair", "out k")


def _step(x, step):
    return x * step, step + 1


def _square(x, k):
    return _Pair(x * k, {"k": k * k - 3, "neg": -k})


def _python_len(x, k):
    return x * k, len(range(k))  # Python's C code reads the int: torch specialises it


CASES = {"counter": _step, "square": _square, "python_len": _python_len}
KS = [0, 1, 2, 3, 4, 5, 10, 100, 7, -6]


def _run(lib, f, backend=None):
    """``f`` compiled and called at each of ``KS`` (the counter feeding its returned int back)."""
    compiled = lib.compile(f, **({} if backend is None else {"backend": backend}))
    x, outs, step = lib.ones(2), [], 0
    for k in KS:
        if f is _step:
            out, step = compiled(x, step)
            outs.append((out, step))
        else:
            outs.append(compiled(x, k))
    return outs


@pytest.fixture(scope="module")
def torch_runs():
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, f in CASES.items():
            torch._dynamo.reset()
            cnt = CompileCounter()
            runs[name] = cnt, _run(torch, f, cnt)
    torch._dynamo.reset()
    return runs


def _same(got, want):
    """``got`` (ember's) and ``want`` (torch's) hold the same ints and tensor values."""
    if isinstance(want, torch.Tensor):
        return got.tolist() == want.tolist()
    if isinstance(want, (tuple, list)):
        return type(got).__name__ == type(want).__name__ and len(got) == len(want) \
            and all(_same(g, w) for g, w in zip(got, want))
    if isinstance(want, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in want)
    return type(got) is type(want) is int and got == want


@pytest.mark.parametrize("name", list(CASES))
def test_returned_int_of_a_symbol_is_computed_per_call(name, torch_runs):
    """``return x * step, step + 1`` fed back: torch's 2 graphs (ember specialised it: 8 and a
    warning); each returned int a plain ``int`` with eager's value; ``len(range(k))`` is
    computed by Python unseen and stays specialised, as torch's."""
    ember.compiler.reset()
    counters.clear()
    cnt, want = torch_runs[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _run(ember, CASES[name])
    assert counters["stats"]["unique_graphs"] == cnt.frame_count, name
    assert all(_same(g, w) for g, w in zip(got, want)), (name, got, want)
    assert any("recompile_limit" in str(w.message) for w in caught) == (cnt.frame_count == 8)


def _scaled(x, k=1, *args, scale=2, **extra):
    return x * k * scale + sum(args) + extra.get("b", 0)


class _Scaled(torch.nn.Module):
    def forward(self, x, k=1, *, scale=2):
        return x * k + scale


class _EmberScaled(ember.nn.Module):
    def forward(self, x, k=1, *, scale=2):
        return x * k + scale


X = "x"  # where the tensor goes
# groups of calls of one program spelled differently: torch binds a call to the signature first
# (a frame per group); the second group passes *args and **extra
CALLS = [[((X,), {"k": 1}), ((X, 1), {}), ((), {"k": 1, "x": X}), ((), {"x": X, "k": 1}), ((X,), {}),
          ((X, 1), {"scale": 2}), ((X,), {"scale": 2, "k": 1})],
         [((X, 1, 5), {"b": 1, "scale": 3}), ((X, 1, 5), {"scale": 3, "b": 1})]]


@pytest.mark.parametrize("kind", ["function", "module"])
def test_calls_bind_to_the_signature_before_the_guards(kind):
    """``f(x, k=1)``, ``f(x, 1)``, ``f(k=1, x=x)``, ``f(x)``: one graph, as torch's one frame
    (ember guarded the keywords' names and order: a graph each)."""
    counts = {}
    for lib in (torch, ember):
        x = lib.ones(2)
        f = _scaled if kind == "function" else (_Scaled if lib is torch else _EmberScaled)()
        if lib is torch:
            torch._dynamo.reset()
            cnt = CompileCounter()
            compiled = torch.compile(f, backend=cnt)
        else:
            ember.compiler.reset()
            counters.clear()
            compiled = ember.compile(f, backend="aot_eager")
        groups = CALLS if kind == "function" else CALLS[:1]
        for group in groups:
            for args, kwargs in group:
                args = tuple(x if a is X else a for a in args)
                kwargs = {k: x if v is X else v for k, v in kwargs.items()}
                assert compiled(*args, **kwargs).tolist() == f(*args, **kwargs).tolist(), (args, kwargs)
        counts[lib.__name__] = cnt.frame_count if lib is torch else counters["stats"]["unique_graphs"]
    assert counts["ember"] == counts["torch"] == len(groups)


class _Box:
    pass


def test_a_traced_int_stored_by_the_call_is_a_plain_int_after_it():
    """``obj.n = k``, ``seen.append(k + 1)``, ``d[k] = k * 2`` on a closure's objects and an
    argument object's: ``int`` afterwards, as torch's (ember left its ``TracedInt`` there from
    the call recorded with the int traced)."""
    def program(lib):
        obj, box, seen, table = _Box(), _Box(), [], {}
        box.items = []

        def f(x, k, box):
            obj.n, obj.pair = k, (k, [k])
            seen.append(k + 1)
            table[k] = {"k": k * 2}
            box.n = k
            box.items.append(k)
            return x * k
        compiled = lib.compile(f, backend="eager" if lib is torch else "aot_eager")
        found = []
        for k in range(5):
            compiled(lib.ones(2), k, box)
            found.append([(type(v).__name__, v) for v in (obj.n, obj.pair[0], obj.pair[1][0], seen[-1],
                                                            table[k]["k"], box.n, box.items[-1])])
            found[-1] += [type(key).__name__ for key in table]
        return found
    ember.compiler.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch._dynamo.reset()
        want = program(torch)
    assert program(ember) == want
    assert all(t == "int" for row in want for t, _ in row[:7])


def test_an_int_keyword_equal_to_its_default_stays_one_program():
    """``f(x, k=k)`` over k = 0..4 (1 its default), ``f(x, 7)``, ``f(k=9, x=x)``: k a symbol
    from the second call on, torch's 2 graphs (ember compiled each spelling apart)."""
    def f(x, k=1, mask=None):
        return x * k if mask is None else x
    counts = []
    for lib in (torch, ember):
        compiled, count = _compiled_and_counted(lib, f)
        x = lib.ones(2)
        calls = [((x,), {"k": k}) for k in range(5)] + [((x, 7), {}), ((), {"k": 9, "x": x}), ((x,), {"mask": None})]
        for args, kwargs in calls:
            assert compiled(*args, **kwargs).tolist() == f(*args, **kwargs).tolist()
        counts.append(count())
    assert counts == [2, 2]


def _compiled_and_counted(lib, f):
    """``f`` compiled afresh by ``lib`` and a count of its graphs: torch's frames (CompileCounter),
    ember's captured graphs (``aot_eager``)."""
    torch._dynamo.reset()
    ember.compiler.reset()
    counters.clear()
    cnt = CompileCounter()
    compiled = lib.compile(f, backend=cnt if lib is torch else "aot_eager")
    return compiled, (lambda: cnt.frame_count) if lib is torch else (lambda: counters["stats"]["unique_graphs"])


def _branch(x, k):
    if k > 3:
        return x * k
    return x - k


def _window(x, k):
    if k > 3 and k < 10:
        return x * k
    return x - k


@pytest.mark.parametrize("f, ks", [(_branch, range(20)), (_branch, [5, 6, 7, 0, 1, 2, 3, 9, 100, -5]),
                                   (_window, range(20))])
def test_a_comparison_of_the_int_guards_its_side_not_its_value(f, ks, monkeypatch):
    """``if k > 3:`` over k = 0..19: torch's 3 graphs, compiled at the same calls (0 static, 1
    for k <= 3, 4 for k >= 4; ember compiled each value: 8 and the warning); ``3 < k < 10``
    torch's 4. The values on a recorded side run unrecorded, each eager's result."""
    got = {}
    for lib in (torch, ember):
        compiled, count = _compiled_and_counted(lib, f)
        x, at = lib.ones(2), []
        for k in ks:
            before = count()
            assert compiled(x, k).tolist() == f(x, k).tolist(), k
            if count() > before:
                at.append(k)
        got[lib.__name__] = at
    assert got["ember"] == got["torch"], got
    recordings = []
    init = ember.compiler.capture.Tracer.__init__
    monkeypatch.setattr(ember.compiler.capture.Tracer, "__init__",
                        lambda self, *a: recordings.append(1) or init(self, *a))
    for k in (2, -40, 8, 1000):  # (sides already compiled)
        assert compiled(x, k).tolist() == f(x, k).tolist(), k
    assert not recordings
