"""Cold and warm compile times of ember.compile, each measured in a fresh process.

For each workload of bench_compile.py named on the command line, two child processes run the
same training step compiled (fullgraph=True) with one fresh, private compile cache
($XDG_CACHE_HOME): the first finds the cache empty (cold: capture, planning, C generation, the C
compiler), the second finds the first one's entry (warm: capture, then the library and the
plan's record loaded from disk). Each child reports, for its calls up to the one that
compiles (the first, or the second when the optimizer makes its state on the first call: that
one runs eagerly), their wall time; their CPU time (this process's and the C compiler's: wall
times mean little on a loaded machine; BLAS on one thread), split into capture (recording
the step, which also computes that step's results) and compile_graph (code generation or the
cache lookup, without the C compiler's); their overhead over as many steady eager steps of
the same model (CPU); and the cache counter.
Targets (issue 10): cold <= 2 s per graph, warm <= 0.1 s.

Run: python benchmarks/bench_compile_cache.py [mlp_digits_step lenet_step gpt_train_step ...]
Prints a table (with the CPU's name and load) and one JSON line.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def child(name):
    """One fresh process's figures for ``name`` (printed as a JSON line)."""
    sys.path.insert(0, HERE)
    import numpy as np
    from bench_compile import WORKLOADS, compiled

    import ember
    from ember.compiler import eval_frame
    build, make_data = WORKLOADS[name]
    data = make_data(np)

    def weights(model):
        ember.manual_seed(0)
        return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    eager = build(ember, weights, data)
    for _ in range(2):
        eager()
    start = time.process_time()
    eager()
    eager_step = time.process_time() - start
    spent = {"capture": 0.0, "compile_graph": 0.0}

    def timed(fn, what):
        def run(*args, **kwargs):
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[what] += time.process_time() - start
        return run
    eval_frame.capture = timed(eval_frame.capture, "capture")
    eval_frame.compile_graph = timed(eval_frame.compile_graph, "compile_graph")
    step = compiled(ember, build(ember, weights, data), fullgraph=True)
    first, cpu = 0.0, _cpu()
    for calls in range(1, 4):  # an optimizer that makes its state on the first call is captured on the second
        start = time.perf_counter()
        step()
        first += time.perf_counter() - start
        counts = dict(eval_frame.counters["inductor"])
        if counts:
            break
    else:
        raise SystemExit(f"{name}: no graph compiled in three calls")
    cpu = _cpu() - cpu
    print(json.dumps({"first_call": first, "cpu": cpu, "eager_step": eager_step, "calls": calls,
                      "overhead": cpu - calls * eager_step,
                      **spent, "cache": counts}))


def _cpu():
    """CPU seconds of this process and of its finished children (the C compiler)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def run_child(name, cache):
    env = dict(os.environ, XDG_CACHE_HOME=cache, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--child", name], env=env, capture_output=True,
                         text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"{name}: child failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(names):
    sys.path.insert(0, HERE)
    from bench_compile import WORKLOADS, cpu_name
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        raise SystemExit(f"bench_compile_cache.py: unknown workload {unknown[0]!r}; choose from {', '.join(WORKLOADS)}")
    print(f"CPU: {cpu_name()}; load average {os.getloadavg()[0]:.1f}; seconds of the calls that compile: wall, "
          "then CPU (with the C compiler's; capture, compile_graph, one eager step, overhead = CPU - eager steps)")
    print(f"{'workload':<18}{'':>6}{'wall':>8}{'CPU':>8}{'capture':>10}{'compile':>10}"
          f"{'eager step':>12}{'overhead':>10}  cache")
    results = {}
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            for kind in ("cold", "warm"):
                r = run_child(name, cache)
                results.setdefault(name, {})[kind] = {k: round(v, 4) if isinstance(v, float) else v
                                                      for k, v in r.items()}
                print(f"{name:<18}{kind:>6}{r['first_call']:>8.3f}{r['cpu']:>8.3f}{r['capture']:>10.3f}{r['compile_graph']:>10.3f}"
                      f"{r['eager_step']:>12.3f}{r['overhead']:>10.3f}  {r['cache']}")
    print(json.dumps({"benchmark": "compile_cache", "cpu": cpu_name(), "load": os.getloadavg()[0],
                      "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "results": results}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    elif {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__)
    else:
        main(sys.argv[1:] or ["mlp_digits_step", "lenet_step", "gpt_train_step"])
