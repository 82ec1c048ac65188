"""A training step with a logging graph break (``losses.append(loss.item())``): ember eager vs
ember compiled as before the split (a break made the whole function run eagerly) vs ember
compiled split at the break (compiler/split.py: the step captured, the logging line eager),
with torch eager beside them and the same step without the logging line compiled whole.

The model is a small MLP (64 -> 128 -> 128 -> 10, batch 64, Adam). Each variant trains its own
copy from the same weights on the same batches; times are per step, the minimum over
``--rounds`` rounds of ``--steps`` steps, the variants taking turns (the machine is shared).
"Before" is ember's compiled function with the split turned off in this process (its refusal:
the whole function eagerly every call). The losses the variants log are checked equal.

Run: python benchmarks/bench_graph_breaks.py [--rounds N] [--steps N]
Prints one line per variant (µs per step, ratio to ember eager) and the machine's load.
"""
import argparse
import os
import time

import numpy as np

import ember
from ember.compiler import eval_frame


def make_step(lib, compiled, log=True, split=True):
    """``(step, losses)``: a training step of a fresh MLP (seeded weights) in ``lib``."""
    rng = np.random.default_rng(0)
    sizes = (64, 128, 128, 10)
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        layer = lib.nn.Linear(n_in, n_out)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(rng.standard_normal((n_out, n_in)).astype(np.float32) / n_in ** 0.5))
            layer.bias.zero_()
        layers += [layer, lib.nn.ReLU()]
    model = lib.nn.Sequential(*layers[:-1])
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    losses = []

    def logged(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())  # the graph break
        return loss

    def quiet(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    step = logged if log else quiet
    if compiled:
        step = lib.compile(step)
        if not split:
            step = _unsplit(step)
    return step, losses


def _unsplit(compiled):
    """``compiled`` with the split refused (ember before compiler/split.py)."""
    def call(*args):
        real = eval_frame._split
        eval_frame._split = lambda *a: (None, "turned off (bench_graph_breaks)")
        try:
            return compiled(*args)
        finally:
            eval_frame._split = real
    return call


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal((64, 64)).astype(np.float32), rng.integers(0, 10, 64)) for _ in range(args.steps)]
    variants = {
        "ember eager": (ember, False, True, True),
        "ember compiled, before (whole step eager)": (ember, True, True, False),
        "ember compiled, split at the break": (ember, True, True, True),
        "ember compiled, no logging line (one graph)": (ember, True, False, True),
        "torch eager": (torch, False, True, True),
    }
    steps, data, best = {}, {}, {}
    for name, (lib, compiled, log, split) in variants.items():
        steps[name] = make_step(lib, compiled, log, split)
        data[name] = [(lib.tensor(x), lib.tensor(y)) for x, y in batches]
        for x, y in data[name][:3]:  # warm: the recording, the capture of the pieces
            steps[name][0](x, y)
    for _ in range(args.rounds):
        for name, (step, _) in steps.items():
            start = time.perf_counter()
            for x, y in data[name]:
                step(x, y)
            best[name] = min(best.get(name, float("inf")), (time.perf_counter() - start) / args.steps)
    reference = steps["ember eager"][1]
    for name in ("ember compiled, before (whole step eager)", "ember compiled, split at the break"):
        np.testing.assert_allclose(steps[name][1], reference, rtol=2e-4)
    base = best["ember eager"]
    for name, t in best.items():
        print(f"{name:46s} {t * 1e6:9.1f} µs/step  {t / base:5.2f}x ember eager")
    print("graphs:", dict(eval_frame.counters["stats"]), "breaks:", sum(eval_frame.counters["graph_break"].values()))
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
