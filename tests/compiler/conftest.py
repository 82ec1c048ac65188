"""Fixtures of the compiler tests. A module that compiles uses one of them for every test:
``pytestmark = pytest.mark.usefixtures("fresh_compiler")`` (or ``"fresh_cache"``)."""
import pytest

import ember
from ember._ops import core
from ember.compiler import backends
from ember.compiler.backends import autotune, cache, toolchain, c as c_backend


@pytest.fixture
def fresh_compiler():
    """Each test starts and ends with no compiled code in memory (``ember.compiler.reset()``)."""
    ember.compiler.reset()
    yield
    ember.compiler.reset()


@pytest.fixture
def fresh_cache(tmp_path_factory, monkeypatch, fresh_compiler):
    """As ``fresh_compiler``, with the on-disk compile cache in this session's temporary folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
    yield


@pytest.fixture
def private_cache(tmp_path, monkeypatch, fresh_compiler):
    """As ``fresh_compiler``, with a compile cache of this test's own: no autotuning record from
    other runs overrides the cost model."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(autotune, "_path", lambda: toolchain.cache_dir() / "autotune.json")
    yield


@pytest.fixture
def broken_cc(tmp_path, monkeypatch):
    """``$CC`` is a compiler that fails (printing "internal compiler error"), with the compile
    cache in ``tmp_path / "cache"``; returns the compiler's path."""
    cc = tmp_path / "broken-cc"
    cc.write_text("#!/bin/sh\necho 'broken-cc: internal compiler error' >&2\nexit 1\n")
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return cc


@pytest.fixture
def c_builds(monkeypatch):
    """The callables the C backend made (each with its ``.c_source``), in order; no compiled
    code in memory before or after."""
    ember.compiler.reset()
    made, compile_c = [], backends.compile_c

    def spy(graph, options, compiler):
        made.append(compile_c(graph, options, compiler))
        return made[-1]
    monkeypatch.setattr(backends, "compile_c", spy)
    yield made
    ember.compiler.reset()


class Plans(list):
    """The plans the C backend made, in order (see the ``plans`` fixture)."""

    def numpy_nodes(self):
        """The names of the nodes their kernels of kind "python" run as NumPy."""
        return [n.target.name for plan in self for k in plan.kernels if k.kind == "python" for n in k.nodes]


@pytest.fixture
def plans(monkeypatch):
    """Every plan the C backend makes during the test (``Plans``): no graph's plan is read from
    the disk cache's records (a warm cache would make none); libraries still come from it."""
    made, make_plan = Plans(), c_backend.make_plan
    monkeypatch.setattr(cache, "load", lambda key, graph: None)
    monkeypatch.setattr(c_backend, "make_plan", lambda *a, **k: made.append(make_plan(*a, **k)) or made[-1])
    return made


class Dispatched(core.Observer):
    """Counts the ops dispatched while it observes (``with Dispatched() as ops``: ``ops.names``;
    a replayed piece of a split function dispatches none)."""

    def __init__(self):
        self.names = []

    def op_exit(self, op, inputs, attrs, output):
        self.names.append(op.name)

    def __enter__(self):
        core.OBSERVERS.append(self)
        return self

    def __exit__(self, *exc):
        core.OBSERVERS.remove(self)


@pytest.fixture
def dispatched():
    """The :class:`Dispatched` observer class (the tests of graph-break splits count replays with it)."""
    return Dispatched
