"""Compiler discovery, the on-disk cache (reuse across processes, tampered entries, private
directory), and the fallbacks: no compiler and a failing compiler both run generated Python."""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from ember.compiler import backends
from ember.compiler.backends import compile_graph, toolchain

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
HERE = Path(__file__).resolve().parent

# Compiles the MLP step graph and prints whether the library came from the cache, the build or
# load time, and the loss after one step.
SCRIPT = textwrap.dedent(f"""
    import sys, time
    sys.path.insert(0, {str(HERE)!r})
    from test_codegen import mlp_step
    from ember.compiler.backends import compile_graph
    b, g = mlp_step()
    start = time.perf_counter()
    fn = compile_graph(g, {{}})
    seconds = time.perf_counter() - start
    loss = fn([b.values[p].copy() for p in g.placeholders])[0]
    print(fn.cached, seconds, float(loss))
""")


def _run(env):
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    cached, seconds, loss = out.stdout.split()
    return cached == "True", float(seconds), float(loss)


def _counting_cc(tmp_path):
    """A ``$CC`` that runs the real compiler and adds a line to ``compiles`` per unit it
    compiles: ``(its path, compiles)``."""
    cc, compiles = tmp_path / "counting-cc", tmp_path / "compiles"
    cc.write_text(f'#!/bin/sh\ncase " $* " in *" -c "*) echo unit >> {shlex.quote(str(compiles))};; esac\n'
                  f'exec {shlex.join(toolchain.find_compiler())} "$@"\n')
    cc.chmod(0o755)
    compiles.write_text("")
    return cc, compiles


def test_second_process_reuses_the_library_and_tampering_rebuilds(tmp_path):
    cc, compiles = _counting_cc(tmp_path)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), CC=str(cc))
    cold = _run(env)
    built = compiles.read_text()
    warm = _run(env)
    assert (cold[0], warm[0]) == (False, True)
    assert warm[2] == cold[2]
    # the cold process ran the compiler, the warm one only loaded its library (a count, not
    # a time: the times' order, cold's ~0.5 s against warm's load, a busy machine can turn)
    assert built and compiles.read_text() == built
    root = tmp_path / "ember" / "compile"
    assert root.stat().st_mode & 0o777 == 0o700
    (lib,) = root.glob("*.so")
    lib.write_bytes(lib.read_bytes() + b"tampered")  # a library that does not match its record
    rebuilt = _run(env)
    assert rebuilt[0] is False and rebuilt[2] == cold[2]
    record = lib.with_suffix(".json")
    assert json.loads(record.read_text())["sha256"] == toolchain._digest(lib)
    record.write_text("{not json")
    assert _run(env)[0] is False
    assert not list(root.glob(".tmp-*"))  # no half-written files left behind


def _graph():
    from test_codegen import mlp_step
    return mlp_step(B=4, D=5, H=3, C=2)


def test_no_compiler_runs_generated_python_with_one_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "missing-cc"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(toolchain.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(backends, "_warned", set())
    assert toolchain.find_compiler() is None
    b, g = _graph()
    with pytest.warns(RuntimeWarning, match="no C compiler found"):
        fn = compile_graph(g, {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile_graph(g, {})  # said once
    assert not hasattr(fn, "c_source")
    np.testing.assert_array_equal(fn([b.values[p].copy() for p in g.placeholders])[0], b.values[g.outputs[0]])


def test_failing_compiler_falls_back_with_a_warning_naming_the_log(tmp_path, monkeypatch, broken_cc):
    b, g = _graph()
    with pytest.warns(RuntimeWarning, match=r"compiling the generated C failed \(log: .*\.log\)") as record:
        fn = compile_graph(g, {})
    log = str(record[0].message).split("log: ")[1].split(")")[0]
    assert "internal compiler error" in Path(log).read_text()
    np.testing.assert_array_equal(fn([b.values[p].copy() for p in g.placeholders])[0], b.values[g.outputs[0]])
    assert not list((tmp_path / "cache" / "ember" / "compile").glob("*.so"))


def test_fallback_warnings_reach_the_user_under_default_filters(tmp_path, monkeypatch, broken_cc):
    """No pytest.warns and no "always" filter: the filters a user's script runs under (ember's
    own filter of NumPy's RuntimeWarnings from its kernels included). The warning points at the
    caller's line, outside ember, so that filter does not swallow it."""
    _, g = _graph()
    with warnings.catch_warnings(record=True) as failed:
        compile_graph(g, {})
    monkeypatch.setenv("CC", str(tmp_path / "missing-cc"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(toolchain.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(backends, "_warned", set())
    with warnings.catch_warnings(record=True) as missing:
        compile_graph(g, {})
    for caught, text in ((failed, "compiling the generated C failed"), (missing, "no C compiler found")):
        assert [w.filename for w in caught if text in str(w.message)] == [__file__], caught


def test_compiler_search_order(tmp_path, monkeypatch):
    fake = tmp_path / "mycc"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", f"{fake} -Wall")
    assert toolchain.find_compiler() == [str(fake), "-Wall"]
    monkeypatch.setenv("CC", str(tmp_path / "absent"))
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "clang").write_text("#!/bin/sh\n")
    (tmp_path / "clang").chmod(0o755)
    assert toolchain.find_compiler() == [str(tmp_path / "clang")]
    (tmp_path / "clang").unlink()
    monkeypatch.setattr(toolchain.importlib.util, "find_spec", lambda name: object() if name == "ziglang" else None)
    assert toolchain.find_compiler() == [sys.executable, "-m", "ziglang", "cc"]


def test_max_autotune_times_candidates_once_then_reuses_the_choice(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("EMBER_LOGS", "autotuning")
    monkeypatch.setattr(backends.autotune, "_path", lambda: toolchain.cache_dir() / "autotune.json")
    from test_codegen import mlp_step
    b, g = mlp_step(B=16, D=24, H=20, C=5)
    compile_graph(g, {"max_autotune": True})
    first = capfd.readouterr().err
    assert first.count("(timed: ") == 5
    fn = compile_graph(g, {"max_autotune": True})
    assert capfd.readouterr().err.count("(cached)") == 5
    table = json.loads((tmp_path / "ember" / "compile" / "autotune.json").read_text())
    assert len(table) == 5
    out = fn([b.values[p].copy() for p in g.placeholders])[0]
    np.testing.assert_allclose(out, b.values[g.outputs[0]], rtol=1e-5)
    # Records are keyed by the code generating the family's candidates: a change to the
    # convolutions' leaves the GEMMs' records in use; a change to the GEMMs' makes them stale.
    narrow, gemm_kernel = backends.conv.narrow, backends.gemm.gemm_kernel
    monkeypatch.setattr(backends.conv, "narrow", lambda node: narrow(node))
    compile_graph(g, {"max_autotune": True})
    assert capfd.readouterr().err.count("(cached)") == 5
    monkeypatch.setattr(backends.gemm, "gemm_kernel", lambda *args: gemm_kernel(*args))
    compile_graph(g, {"max_autotune": True})
    assert capfd.readouterr().err.count("(timed: ") == 5
    assert len(json.loads((tmp_path / "ember" / "compile" / "autotune.json").read_text())) == 10


def test_a_failing_compiler_never_loses_a_training_run(tmp_path, monkeypatch, broken_cc):
    """Through ember.compile, end to end: a whole training step whose C fails to compile runs
    (generated Python), with eager's losses and one warning naming the compiler's log."""
    import ember
    ember.compiler.reset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, losses = _mlp_step()
    ember.compiler.reset()
    _, eager = _mlp_step(disable=True)
    np.testing.assert_allclose(losses, eager, rtol=1e-5)
    failed = [str(w.message) for w in caught if "compiling the generated C failed" in str(w.message)]
    assert len(failed) == 1 and re.search(r"log: .*\.log", failed[0]), failed

def test_process_killed_while_compiling_leaves_no_entry(tmp_path):
    """A compiler that hangs; the process compiling is killed: no library or record appears
    under its final name, and the next process builds a good one."""
    slow = tmp_path / "slow-cc"
    # answers --version at once; hangs when asked to compile
    slow.write_text('#!/bin/sh\ncase "$*" in *" -c "*) echo started > "$STARTED"; exec sleep 60;; esac\n'
                    'echo "slow-cc 1.0"\n')
    slow.chmod(0o755)
    started = tmp_path / "started"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), CC=str(slow), STARTED=str(started))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert started.exists(), "the compiler never started"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the process and the compiler it started
        proc.wait(timeout=30)
    root = tmp_path / "cache" / "ember" / "compile"
    entries = [p for p in root.iterdir() if not p.name.startswith(".tmp-")]  # temporaries are never loaded
    assert not [p for p in entries if p.suffix in (".so", ".json")]
    env.pop("CC")
    assert _run(env)[0] is False  # built from scratch, and it runs




def _mlp_step(hidden=8, scale=1.0, disable=False):
    """A whole training step through ember.compile (``disable``: eager) and its first 4 losses."""
    import ember
    ember.compiler.reset()  # from the disk cache: the graphs of this code in memory would serve it
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(6, hidden), ember.nn.Tanh(), ember.nn.Linear(hidden, 3))
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = ember.randn(16, 6), ember.randint(0, 3, (16,))

    @ember.compile(fullgraph=True, disable=disable)
    def step(x, y):
        loss = ember.nn.functional.cross_entropy(model(x) * scale, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step, [float(step(x, y)) for _ in range(4)]


# prints the cache counters, the losses and the compile time of the step's graph
STEP = textwrap.dedent(f"""
    import json, sys
    sys.path.insert(0, {str(HERE)!r})
    from test_codegen_cache import _mlp_step
    from ember._dynamo.utils import counters
    step, losses = _mlp_step()
    print(json.dumps({{"counters": dict(counters["inductor"]), "losses": losses,
                      "seconds": step._entries[-1].run.compile_seconds}}))
""")


def test_a_second_process_loads_the_graph_without_generating_c(tmp_path, monkeypatch):
    """Keyed by the captured graph: a fresh process compiling the same step plans nothing,
    generates no C and runs no compiler; a corrupt or edited graph record is rebuilt; a
    changed shape or constant is a new entry, with eager's losses."""
    from ember._dynamo.utils import counters
    from ember.compiler.backends import c
    cc, compiles = _counting_cc(tmp_path)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), CC=str(cc))
    runs = []
    for _ in range(2):
        runs.append(json.loads(subprocess.run([sys.executable, "-c", STEP], env=env, capture_output=True,
                                              text=True, timeout=240, check=True).stdout))
        runs[-1]["compiles"] = compiles.read_text().count("unit")
    cold, warm = runs
    assert cold["counters"] == {"fxgraph_cache_miss": 1}
    assert warm["counters"] == {"fxgraph_cache_hit": 1}
    assert warm["losses"] == cold["losses"]
    assert cold["compiles"] > 0 and warm["compiles"] == cold["compiles"]  # the warm process ran no compiler

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", str(cc))  # (the compiler is part of the key)
    counters.clear()
    real_plan = c.make_plan
    def refuse(*args, **kwargs):
        raise AssertionError("a hit must not plan (nor generate C)")
    monkeypatch.setattr(c, "make_plan", refuse)
    assert _mlp_step()[1] == cold["losses"] and counters["inductor"] == {"fxgraph_cache_hit": 1}
    monkeypatch.setattr(c, "make_plan", real_plan)
    (record,) = (tmp_path / "ember" / "compile").glob("g-*.json")
    text = record.read_text()
    for damaged in (text[: len(text) // 2], text.replace('\\"kernels\\":[[', '\\"kernels\\":[[0,')):
        assert damaged != text
        record.write_text(damaged)
        counters.clear()
        assert _mlp_step()[1] == cold["losses"] and counters["inductor"] == {"fxgraph_cache_miss": 1}
        assert record.read_text() == text  # written whole again
    for hidden, scale in ((9, 1.0), (8, 0.5)):
        counters.clear()
        losses = _mlp_step(hidden, scale)[1]
        assert counters["inductor"] == {"fxgraph_cache_miss": 1}
        np.testing.assert_allclose(losses, _mlp_step(hidden, scale, disable=True)[1], rtol=1e-5)


def test_a_graph_cut_into_units_runs_as_one(tmp_path, monkeypatch):
    """Cut into one translation unit per kernel (compiled in parallel), the MLP step shares its
    BLAS pointers, GEMM choices and bad-target report across units, and equals the reference;
    a bad target raises as eagerly."""
    from ember.compiler.backends import cgen, compile_python
    from test_codegen import mlp_step
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(cgen.CSource, "MIN_UNIT_CHARS", 1)
    monkeypatch.setattr(toolchain, "jobs", lambda: 2)  # the units' count is 2 per CPU: one count on every machine
    b, g = mlp_step(np.float32, ignore=3)
    fn = compile_graph(g, {})
    objects = list((tmp_path / "ember" / "compile").glob("o-*.o"))
    kernels = re.findall(r"^int kernel_\d+\(.*\) \{$", fn.c_source, re.M)
    assert len(kernels) > 4 and len(objects) == 4
    args, ref_args = ([b.values[p].copy() for p in g.placeholders] for _ in range(2))
    reference = compile_python(g)
    for _ in range(2):
        for o, e in zip(fn(args), reference(ref_args)):
            np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-6)
    args[g.placeholders.index(next(p for p in g.placeholders if p.name == "y"))][0] = 10
    with pytest.raises(IndexError, match="Target 10 is out of bounds."):
        fn(args)


def test_units_are_cached_each_on_its_own(tmp_path, monkeypatch):
    """A library that differs from a cached one in one unit compiles that unit only; a
    tampered object is compiled again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "ember" / "compile"
    units = [f"int f{i}(int x) {{ return x * {i + 2}; }}\n" for i in range(3)]
    cc = toolchain.find_compiler()
    lib = toolchain.build(units, cc)[0]
    assert [getattr(lib, f"f{i}")(5) for i in range(3)] == [10, 15, 20]
    stamps = {o: o.stat().st_mtime_ns for o in root.glob("o-*.o")}
    assert len(stamps) == 3
    lib = toolchain.build(units[:2] + ["int f2(int x) { return x - 1; }\n"], cc)[0]
    assert [getattr(lib, f"f{i}")(5) for i in range(3)] == [10, 15, 4]
    assert len(list(root.glob("o-*.o"))) == 4 and all(o.stat().st_mtime_ns == t for o, t in stamps.items())
    tampered = next(iter(stamps))
    data = tampered.read_bytes()
    tampered.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    toolchain.build(units + ["int g(void) { return 0; }\n"], cc)
    assert tampered.stat().st_mtime_ns != stamps[tampered]


def test_processes_compiling_the_same_graph_at_once_share_one_good_entry(tmp_path):
    """Two processes build the same graph into one cache directory at the same moment: each
    runs (no one loads another's half-written library), with the same loss, and the entry
    left is whole (its library matches its record)."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True) for _ in range(2)]
    try:
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=30)
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    assert len({out.split()[2] for out, _ in outs}) == 1
    root = tmp_path / "ember" / "compile"
    for lib in root.glob("*.so"):
        assert json.loads(lib.with_suffix(".json").read_text())["sha256"] == toolchain._digest(lib)
    assert list(root.glob("*.so")) and not list(root.glob(".tmp-*"))


def test_a_kernel_goes_to_the_unit_its_middle_falls_in(monkeypatch):
    """Three equal large kernels and a small one in three units: one large kernel each (the
    Conv2d step's: cut after the boundary, the first two shared a unit and its gcc time)."""
    from ember.compiler.backends import cgen
    monkeypatch.setattr(cgen.CSource, "MIN_UNIT_CHARS", 1)
    kernels = ["a" * 1100, "b" * 1100, "c" * 1100, "d" * 100]
    units = cgen.CSource("H", kernels, "M").units(3)
    assert units == ["HM" + kernels[0], "H" + kernels[1], "H" + kernels[2] + kernels[3]]
    assert cgen.CSource("H", kernels, "M").units(1) == ["HM" + "".join(kernels)]


def test_a_unit_compiles_with_the_flags_its_cflags_lines_name(tmp_path, monkeypatch):
    """``/* cflags: ... */`` lines (the Winograd kernels ask for -fno-predictive-commoning) reach
    that unit's compile command only, once each; they are part of the unit's cache key."""
    from ember.compiler.backends import winograd
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert winograd.UNIT_FLAGS == "/* cflags: -fno-predictive-commoning */"
    assert toolchain.unit_flags("/* cflags: -DA=1 -DB=2 */\nint x;\n/* cflags: -DA=1 */\n") == ["-DA=1", "-DB=2"]
    units = ["/* cflags: -DVALUE=7 */\nint f(void) { return VALUE; }\n",
             "#ifndef VALUE\nint g(void) { return 3; }\n#endif\n"]
    lib = toolchain.build(units, toolchain.find_compiler())[0]
    assert (lib.f(), lib.g()) == (7, 3)


def test_every_module_that_writes_code_is_in_the_graph_key():
    """The graph key hashes the generators' code as loaded: every backend module but the
    driver, the cache, the background builds, the package's __init__ and gelu_gradient (a pass
    rewriting the graph before its key is made: the key hashes what it wrote) (rows, winograd
    and direct_gemm were missed)."""
    package = Path(backends.__file__).parent
    writers = {p.stem for p in package.glob("*.py")} - {"__init__", "c", "cache", "background", "gelu_gradient"}
    assert {m.__name__.rsplit(".", 1)[1] for m in backends.cache._GENERATORS} == writers


def test_a_build_removes_this_users_stale_temporary_files_only(tmp_path, monkeypatch):
    """A ``.tmp-`` file a killed build left over an hour ago goes when the next build starts;
    a fresh one (another process may be writing it), another user's, and other files stay."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = toolchain.cache_dir()
    stale, fresh, other = root / ".tmp-killed.o", root / ".tmp-building.so", root / "notes.txt"
    for path in (stale, fresh, other):
        path.write_bytes(b"x")
    two_hours_ago = time.time() - 7200
    for path in (stale, other):
        os.utime(path, (two_hours_ago, two_hours_ago))
    monkeypatch.setattr(os, "getuid", lambda: stale.stat().st_uid + 1)  # the files: another user's
    toolchain._sweep(root)
    assert stale.exists() and fresh.exists()
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert toolchain.build(["int f(int x) { return x + 7; }\n"], toolchain.find_compiler())[0].f(1) == 8
    assert not stale.exists() and fresh.exists() and other.exists()
    assert not [p for p in root.glob(".tmp-*") if p != fresh]  # the build left none of its own
