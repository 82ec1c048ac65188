"""The warm start's recording and cache key (session 27): the side-effect hook of a recording is
off inside ember's ops and op-entry backward nodes (compiler/quiet_ops.py) and back everywhere
the user's Python runs; the CPU's identity in the cache key is read without starting a process;
the driver's compiled Python is kept in the compile cache, checked by its SHA-256."""
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
from ember._dynamo.exc import Unsupported
from ember._ops import core
from ember._ops.pointwise_binary import Mul
from ember.compiler import quiet_ops
from ember.compiler.backends import compile_graph, python, toolchain


def _profile_inside(op, monkeypatch):
    """The profile functions ``op``'s kernel ran under (appended per call)."""
    seen, forward = [], op.forward

    def watched(*arrays, **attrs):
        seen.append(sys.getprofile())
        return forward(*arrays, **attrs)
    monkeypatch.setattr(op, "forward", staticmethod(watched))
    return seen


def test_hook_is_off_inside_an_op_and_back_between_ops(monkeypatch):
    seen = _profile_inside(Mul, monkeypatch)
    buf = io.StringIO()

    def f(x):
        y = x * 3
        buf.write("a")  # after the op: the hook is back and sees it
        return y + 1
    compiled = ember.compile(f, backend="eager")
    results = [compiled(ember.full((2,), float(k))).numpy() for k in range(3)]
    assert buf.getvalue() == "aaa"  # a graph break: run on every call, as eagerly
    np.testing.assert_array_equal(results[2], [7.0, 7.0])
    assert seen[0] is None  # the recording's Mul ran quiet
    assert sys.getprofile() is None and not core.OBSERVERS


def test_an_op_raising_inside_a_recording_leaves_the_hook_on(monkeypatch):
    def failing(*arrays, **attrs):
        raise ValueError("operands could not be broadcast together")
    monkeypatch.setattr(Mul, "forward", staticmethod(failing))

    def f(x):
        try:
            x * x
        except RuntimeError:
            pass
        io.StringIO().write("a")
        return x + 1
    with pytest.raises(Unsupported, match=r"StringIO\.write\(\) is input or output"):
        ember.compile(f, fullgraph=True)(ember.ones(2))
    assert sys.getprofile() is None and not core.OBSERVERS


def test_custom_function_backward_stays_watched():
    buf = io.StringIO()

    class Loud(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            buf.write("b")  # the user's Python in a backward: a replay would skip it
            return g * 2

    def step(w):
        Loud.apply(w).sum().backward()
        return w.grad
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(Unsupported, match=r"StringIO\.write\(\) is input or output"):
        ember.compile(step, fullgraph=True)(w)
    assert sys.getprofile() is None


def test_op_backward_nodes_run_quiet(monkeypatch):
    seen = _profile_inside(Mul, monkeypatch)
    w = ember.ones(3, requires_grad=True)

    def step(x):
        (w * x).sum().backward()  # MulBackward0 multiplies: a Mul inside an op entry's node
        return w.grad * 1
    compiled = ember.compile(step, backend="eager")
    grads = [compiled(ember.full((3,), 2.0)).numpy() for _ in range(2)]
    np.testing.assert_array_equal(grads[-1], [4.0, 4.0, 4.0])  # accumulated over two calls
    assert len(seen) >= 3 and all(p is None for p in seen[:3])  # forward, backward, the grad's read


def test_cpu_identity_starts_no_process(monkeypatch):
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        pytest.skip("no /proc/cpuinfo")
    if "model name" not in info:
        pytest.skip("/proc/cpuinfo names no model")

    def refuse(*args, **kwargs):
        raise AssertionError("cpu_identity started a process")
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    identity = toolchain.cpu_identity.__wrapped__()
    flags = next(line for line in info.splitlines() if line.startswith(("flags", "Features"))).split(":", 1)[1]
    model = next(line for line in info.splitlines() if line.startswith("model name")).split(":", 1)[1]
    assert identity.endswith(flags.strip()) and model.strip() in identity


_SOURCE = "def compiled_graph(arrays):\n    x, = arrays\n    return [x * 2 + 1]\n"


def _run(code):
    namespace = {}
    exec(code, namespace)
    return namespace["compiled_graph"]([np.arange(3.0)])[0]


def test_a_drivers_code_is_loaded_from_the_cache_not_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    np.testing.assert_array_equal(_run(python.cached_code(_SOURCE, "<ember.compile t>")), [1.0, 3.0, 5.0])
    (kept,) = (tmp_path / "ember" / "compile").glob("py-*.marshal")

    def refuse(*args):
        raise AssertionError("compiled again")
    monkeypatch.setattr(python, "compile", refuse, raising=False)
    np.testing.assert_array_equal(_run(python.cached_code(_SOURCE, "<ember.compile t>")), [1.0, 3.0, 5.0])
    with pytest.raises(AssertionError, match="compiled again"):  # another source: another entry
        python.cached_code(_SOURCE.replace("2", "3"), "<ember.compile t>")
    assert [p.name for p in (tmp_path / "ember" / "compile").glob("py-*.marshal")] == [kept.name]


def test_a_tampered_drivers_code_is_compiled_again_and_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    python.cached_code(_SOURCE, "<ember.compile t>")
    (kept,) = (tmp_path / "ember" / "compile").glob("py-*.marshal")
    good = kept.read_bytes()
    seven = python.cached_code(_SOURCE.replace("* 2", "* 7"), "<ember.compile t>")  # (its own entry)
    other = next(p for p in (tmp_path / "ember" / "compile").glob("py-*.marshal") if p != kept)
    kept.write_bytes(good[:32] + other.read_bytes()[32:])  # another program's code under this key
    np.testing.assert_array_equal(_run(seven), [1.0, 8.0, 15.0])
    np.testing.assert_array_equal(_run(python.cached_code(_SOURCE, "<ember.compile t>")), [1.0, 3.0, 5.0])
    assert kept.read_bytes() == good  # rewritten


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_a_warm_start_runs_the_driver_the_build_wrote(tmp_path, monkeypatch):
    """The graph's record keeps each buffer's strides and offset and each output's kind, so a
    warm start hands out the outputs owning their buffer uncopied, as the building process did
    (it copied every one before; and its driver's code, another, was never found cached)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_codegen import mlp_step
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    b, g = mlp_step()
    cold = compile_graph(g, {})
    values = [b.values[p].copy() for p in g.placeholders]
    first = cold([v.copy() for v in values])
    warm = compile_graph(g, {})  # the record on disk: a hit, as in a fresh process
    assert (cold.graph_cache, warm.graph_cache) == ("miss", "hit")
    assert warm.source == cold.source and "np.array(" not in warm.source.rsplit("return", 1)[1]
    for a, c in zip(warm([v.copy() for v in values]), first):
        np.testing.assert_array_equal(a, c)
    assert len(list((tmp_path / "ember" / "compile").glob("py-*.marshal"))) == 1


def test_unwatched_takes_only_its_own_hook_off():
    def hook(frame, event, arg):
        pass

    def other(frame, event, arg):
        pass
    seen = []
    for profile in (hook, other):
        sys.setprofile(profile)
        try:
            quiet_ops.unwatched(hook, lambda: seen.append(sys.getprofile()))
            seen.append(sys.getprofile())
        finally:
            sys.setprofile(None)
    assert seen == [None, hook, other, other]  # another profiler (cProfile, a debugger) stays on
