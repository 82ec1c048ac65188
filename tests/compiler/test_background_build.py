"""``options={"async_compile": True}``: a graph runs as generated Python while one background
thread builds its C, then switches to the C; a cached library runs at once; a failed build
warns and keeps the Python; a process exiting during a build stops its compiler and leaves
nothing behind (backends/background.py)."""
import os
import shlex
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from ember.compiler.backends import compile_graph, toolchain
from ember.compiler.backends.background import BackgroundBuild

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
HERE = Path(__file__).resolve().parent


def _graph():
    sys.path.insert(0, str(HERE))
    from test_codegen import mlp_step
    return mlp_step(B=4, D=5, H=3, C=2)


def _inputs(b, g):
    return [b.values[p].copy() for p in g.placeholders]


def test_python_until_the_c_is_built_then_c_then_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    b, g = _graph()
    expected = b.values[g.outputs[0]]
    fn = compile_graph(g, {"async_compile": True})
    assert isinstance(fn, BackgroundBuild) and fn.backend == "python"
    np.testing.assert_array_equal(fn(_inputs(b, g))[0], expected)  # the generated Python: exact
    assert fn.wait(timeout=120)
    np.testing.assert_allclose(fn(_inputs(b, g))[0], expected, rtol=1e-5)
    assert fn.backend == "c" and "kernel_0" in fn.c_source
    warm = compile_graph(g, {"async_compile": True})  # the library is on disk now: C at once
    assert not isinstance(warm, BackgroundBuild) and warm.cached
    np.testing.assert_allclose(warm(_inputs(b, g))[0], expected, rtol=1e-5)


def test_a_failed_background_build_warns_at_the_switch_and_keeps_python(tmp_path, monkeypatch, broken_cc):
    b, g = _graph()
    fn = compile_graph(g, {"async_compile": True})
    assert fn.wait(timeout=120)
    with pytest.warns(RuntimeWarning, match=r"in the background failed \(log: .*\.log\)") as record:
        out = fn(_inputs(b, g))[0]
    assert "internal compiler error" in Path(str(record[0].message).split("log: ")[1].split(")")[0]).read_text()
    np.testing.assert_array_equal(out, b.values[g.outputs[0]])
    assert fn.backend == "python"


def test_a_call_after_the_exit_left_the_build_to_its_own_process_keeps_python_and_warns_nothing(tmp_path, monkeypatch):
    # (an atexit handler that runs after ember's calls the graph: its build raised Left)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    b, g = _graph()
    fn = compile_graph(g, {"async_compile": True})
    assert fn.wait(timeout=120)
    fn._result = toolchain.Left("the process is exiting; the build finishes in a process of its own", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(fn(_inputs(b, g))[0], b.values[g.outputs[0]])
    assert fn.backend == "python"


def _script(body):
    return textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(HERE)!r})
        from test_codegen import mlp_step
        from ember.compiler.backends import compile_graph
        b, g = mlp_step(B=4, D=5, H=3, C=2)
        fn = compile_graph(g, {{"async_compile": True}})
        fn([b.values[p].copy() for p in g.placeholders])
        print(type(fn).__name__, fn.backend if hasattr(fn, "backend") else "c", flush=True)
    """) + textwrap.dedent(body)


def test_a_normal_exit_leaves_the_build_to_its_own_process_and_a_later_run_starts_warm(tmp_path):
    # a compiler that compiles a unit only once the program has exited (a file the test writes
    # then opens the gate; not a clock, which a busy machine stretches): an exit that waited for
    # the compiler would never come (the run's timeout fails the test)
    cc, gate = tmp_path / "slow-cc", tmp_path / "gate"
    cc.write_text(f'#!/bin/sh\ncase " $* " in *" -c "*) i=0; while [ ! -e {shlex.quote(str(gate))} ] && '
                  f'[ $i -lt 3000 ]; do sleep 0.05; i=$((i+1)); done;; esac\n'
                  f'exec {shlex.join(toolchain.find_compiler())} "$@"\n')
    cc.chmod(0o755)
    env, cache = dict(os.environ, CC=str(cc), XDG_CACHE_HOME=str(tmp_path)), tmp_path / "ember" / "compile"
    try:
        first = subprocess.run([sys.executable, "-c", _script("")], env=env, capture_output=True, text=True,
                               timeout=120)
        assert first.returncode == 0, first.stderr
        assert first.stdout.split() == ["BackgroundBuild", "python"]
        assert not list(cache.glob("[!.]*.so"))  # no library yet: the compiler was still waiting at the exit
    finally:
        gate.touch()
    deadline = time.monotonic() + 120
    while not list(cache.glob("g-*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)  # the build's own process installs the library, then the graph's record
    assert list(cache.glob("*.so")) and not list(cache.glob(".tmp-*"))
    second = subprocess.run([sys.executable, "-c", _script("")], env=env, capture_output=True, text=True,
                            timeout=120)
    assert second.stdout.split()[1] == "c", second.stderr  # its library loaded at once


def test_ctrl_c_during_a_build_stops_the_compiler_and_its_children_and_leaves_nothing(tmp_path):
    # a compiler that answers --version, then runs a child holding its output open (as gcc's
    # cc1 does) and waits; both pids written down
    cc = tmp_path / "slow-cc"
    cc.write_text(f"#!/bin/sh\n[ \"$1\" = --version ] && exec echo slow-cc 1.0\n"
                  f"sleep 60 &\necho $$ $! > {tmp_path}/pids\nwait\n")
    cc.chmod(0o755)
    script = _script(f"""
        for _ in range(600):  # until the compiler runs
            time.sleep(0.05)
            if os.path.exists({str(tmp_path / "pids")!r}):
                break
        raise KeyboardInterrupt
    """)
    env = dict(os.environ, CC=str(cc), XDG_CACHE_HOME=str(tmp_path / "cache"))
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert "KeyboardInterrupt" in out.stderr and time.perf_counter() - start < 30
    assert out.stdout.split() == ["BackgroundBuild", "python"]
    for pid in map(int, (tmp_path / "pids").read_text().split()):
        with pytest.raises(ProcessLookupError):  # the compiler and its child were stopped
            for _ in range(100):
                os.kill(pid, 0)
                time.sleep(0.05)
    left = [p.name for p in (tmp_path / "cache" / "ember" / "compile").iterdir()]
    assert not [n for n in left if n.startswith(".tmp-") or n.endswith((".so", ".o", ".log"))], left
    assert not [n for n in left if n.startswith("o-") and n.endswith(".c")], left


def test_one_compiled_callable_called_from_several_threads_gives_each_its_own_result(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    b, g = _graph()
    fn = compile_graph(g, {})
    rng = np.random.default_rng(0)
    calls = [[np.array(a + rng.standard_normal(a.shape), a.dtype) if a.dtype.kind == "f" else a
              for a in _inputs(b, g)] for _ in range(40)]
    expected = [fn([a.copy() for a in call])[0].copy() for call in calls]
    wrong = []

    def worker(k):
        for _ in range(30):
            for i in range(k, len(calls), 4):
                got = fn([a.copy() for a in calls[i]])[0]
                if not np.array_equal(got, expected[i]):
                    wrong.append(i)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not wrong
