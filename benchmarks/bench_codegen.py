"""ember's code generator on an MLP training step, beside ember eager and torch eager.

  mlp_step   one step (forward, cross-entropy, backward, SGD with momentum 0.9) of the MLP
             64-128-64-10 of bench_core.py on a batch of 64 digits, float32:
             ember eager, torch eager, ``ember.compile(step)`` (capture, guards, generated C),
             and the step's graph run directly as generated C (one call per step) and as
             generated Python (each node's NumPy kernel);
  compile    building that step's C: cold (empty cache, runs the C compiler) and warm (the
             library from the cache, as a second process finds it).

The directly run graph is written out node by node with the tests' builder
(tests/compiler/graph_builder.py); its C and Python runs are checked against each other.
Times are process CPU time on one thread each (other processes on a shared machine do not
inflate them); rows are interleaved, best of --repeat. Run: python benchmarks/bench_codegen.py
Rows for benchmarks/bench_compile.py: ``rows(repeat) -> dict``.
"""
import argparse
import json
import os
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "compiler"))
SIZES, BATCH, LR, MOMENTUM = (64, 128, 64, 10), 64, 0.05, 0.9


def step_graph(x, y, params):
    """The training step as a graph: params [(w, b), ...] (NumPy), momentum buffers start at 0."""
    from graph_builder import Builder
    b = Builder()
    xs, ys, one = b.input("x", x), b.input("y", y), b.input("one", np.ones((), np.float32))
    layers = [(b.input(f"w{i}", w), b.input(f"b{i}", bias)) for i, (w, bias) in enumerate(params)]
    bufs = [(b.input(f"mw{i}", np.zeros_like(w)), b.input(f"mb{i}", np.zeros_like(bias)))
            for i, (w, bias) in enumerate(params)]
    acts, h = [xs], xs
    for i, (w, bias) in enumerate(layers):
        h = b.call("Addmm", bias, h, b.call("Permute", w, dims=(1, 0)))  # F.linear: addmm(bias, h, w.t())
        if i < len(layers) - 1:
            h = b.call("Relu", h)
            acts.append(h)
    loss = b.call("CrossEntropy", h, ys, None)
    g = b.call("CrossEntropyBackward", one, ys, None, h)
    for i in reversed(range(len(layers))):
        w, bias = layers[i]
        grads = (b.call("Matmul", b.call("Permute", g, dims=(1, 0)), acts[i]), b.call("Sum", g, dim=(0,)))
        if i:
            g = b.call("Where", b.call("Le", acts[i], 0), 0.0, b.call("Matmul", g, w))
        for p, buf, grad in zip(layers[i], bufs[i], grads):
            new_buf = b.call("Add", b.call("Mul", buf, MOMENTUM), grad)
            b.mutate(buf, new_buf)
            b.mutate(p, b.call("Sub", p, b.call("Mul", new_buf, LR)))
    return b, b.output(loss)


def _eager_step(lib, x, y, compiled=False):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(64, 128), lib.nn.ReLU(), lib.nn.Linear(128, 64),
                              lib.nn.ReLU(), lib.nn.Linear(64, 10))
    opt = lib.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = lib.nn.CrossEntropyLoss()
    xb, yb = lib.tensor(x), lib.tensor(y)

    def step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss
    if compiled:
        step = lib.compile(step)
    for _ in range(3):  # the optimizer's state, then the capture
        step(xb, yb)
    return lambda: step(xb, yb)


def rows(repeat=7):
    """{"mlp_step": {...seconds...}, "compile": {...}}: the rows this benchmark adds."""
    import ember
    from ember.compiler.backends import compile_graph, compile_python, toolchain
    from ember.datasets import load_digits
    digits = load_digits()
    x = np.asarray(digits.x_train[:BATCH], dtype=np.float32).reshape(BATCH, -1)
    y = np.asarray(digits.y_train[:BATCH], dtype=np.int64)
    rng = np.random.default_rng(0)
    params = [((rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32), np.zeros(o, np.float32))
              for i, o in zip(SIZES[:-1], SIZES[1:])]
    b, graph = step_graph(x, y, params)

    with tempfile.TemporaryDirectory() as cache:
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = cache
        try:
            start = time.perf_counter()
            compiled = compile_graph(graph, {})
            cold = time.perf_counter() - start
            toolchain._loaded.clear()  # as a second process: load from disk
            start = time.perf_counter()
            compiled = compile_graph(graph, {})
            warm = time.perf_counter() - start
        finally:
            if old is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = old
    assert compiled.cached and hasattr(compiled, "c_source")
    generated = compile_python(graph)
    args_c = [b.values[p].copy() for p in graph.placeholders]
    args_py = [b.values[p].copy() for p in graph.placeholders]
    losses = [(compiled(args_c)[0], generated(args_py)[0]) for _ in range(3)]
    assert all(abs(float(c) - float(p)) < 1e-4 * max(1.0, abs(float(p))) for c, p in losses), losses

    fns = {"ember_c": lambda: compiled(args_c), "ember_python": lambda: generated(args_py),
           "ember_compile": _eager_step(ember, x, y, compiled=True), "ember_eager": _eager_step(ember, x, y)}
    try:
        import torch
        torch.set_num_threads(1)
        fns["torch_eager"] = _eager_step(torch, x, y)
    except ImportError:
        pass
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):  # interleaved, so drifting load hits every row alike
        for k, fn in fns.items():
            best[k] = min(best[k], min(timeit.repeat(fn, number=20, repeat=1, timer=time.process_time)) / 20)
    return {"mlp_step": best, "compile": {"cold": cold, "warm": warm}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
    result = rows(args.repeat)
    step = result["mlp_step"]
    base = step.get("torch_eager")
    from bench_compile import cpu_name
    print(f"CPU: {cpu_name()}, 1 thread, process CPU time")
    print(f"{'mlp_step':<16}{'time':>12}{'/ torch eager':>16}")
    for name, t in step.items():
        print(f"{name:<16}{t * 1e6:>10.1f}us{(f'{t / base:.3f}' if base else '-'):>16}")
    print(f"compile: cold {result['compile']['cold']:.2f} s, warm {result['compile']['warm'] * 1e3:.0f} ms")
    line = {"benchmark": "codegen", "cpu": cpu_name(), "timer": "cpu", "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "seconds": {k: float(f"{v:.4g}") for k, v in step.items()},
            "compile_seconds": {k: round(v, 3) for k, v in result["compile"].items()}}
    if base:
        line["over_torch_eager"] = {k: round(v / base, 3) for k, v in step.items()}
    print(json.dumps(line))


if __name__ == "__main__":
    main()
