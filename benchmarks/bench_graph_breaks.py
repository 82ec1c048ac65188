"""Training with a logging graph break, three workloads (``--workload``):

* ``step``: a compiled training step ending in ``losses.append(loss.item())``;
* ``epoch``: a compiled ``train_epoch(batches)`` whose loop body logs ``losses.append(loss.item())``
  (the loop is opened: its header and the logging line eager, the step in the body captured);
* ``callee``: a compiled step whose loss comes from a user function that logs ``loss.item()``
  inside (that function compiled and split on its own);
* ``try``: the ``step`` inside ``try: ... except FloatingPointError:`` (the try opened, session
  24; "before": the try eager whole, so the whole step eager on every call).

Variants: ember eager; ember compiled as before ("before": for ``step`` the whole function
eager on every call, the split turned off in this process; for ``epoch`` and ``callee`` the
split of session 19, at top-level statements: the loop, or the statement calling the callee,
eager whole; for ``try`` the try eager whole); ember compiled
split at the break (compiler/split.py); the same without the logging line compiled whole (one
graph); torch eager. The model is a small MLP (64 -> 128 -> 128 -> 10, batch 64, Adam). Each
variant trains its own copy from the same weights on the same batches; times are per step,
the minimum over ``--rounds`` rounds of ``--steps`` steps, the variants taking turns (the
machine is shared; ``--cpu-time``: the process's CPU time, not the wall clock). The losses the variants log are checked equal.

Run: python benchmarks/bench_graph_breaks.py [--workload step|epoch|callee|try] [--rounds N] [--steps N]
     [--cpu-time]
Prints one line per variant (µs per step, ratio to ember eager) and the machine's load.
"""
import argparse
import os
import time

import numpy as np

import ember
from ember.compiler import eval_frame, split


def make_step(lib, compiled, log=True, split=True, workload="step"):
    """``(run, losses)``: a training step (``run(x, y)``) or epoch (``run(batches)``) of a fresh
    MLP (seeded weights) in ``lib``."""
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
        if log:
            losses.append(loss.item())  # the graph break
        return loss

    def train_epoch(batches):
        for x, y in batches:
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if log:
                losses.append(loss.item())  # the graph break, inside the loop

    def guarded(x, y):
        opt.zero_grad()
        try:
            loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if log:
                losses.append(loss.item())  # the graph break, inside the try
        except FloatingPointError:
            loss = None
        return loss

    def logged_loss(x, y):  # a user function that breaks inside
        loss = lib.nn.functional.cross_entropy(model(x), y)
        if log:
            losses.append(loss.item())
        return loss

    def calls_logged(x, y):
        opt.zero_grad()
        loss = logged_loss(x, y)
        loss.backward()
        opt.step()
        return loss
    step = {"step": logged, "epoch": train_epoch, "callee": calls_logged, "try": guarded}[workload]
    if compiled:
        step = lib.compile(step)
        if not split:
            step = _unsplit(step, workload)
    return step, losses


def _unsplit(compiled, workload):
    """``compiled`` as before: for ``step`` with the split refused (the whole function eagerly
    on every call, before session 19); for ``epoch`` and ``callee`` split as in session 19, at
    top-level statements only (the loop, the statement calling the callee, eager whole); for
    ``try`` with the try eager whole (before session 24)."""
    name, off = {"step": ("_split", lambda *a: (None, "turned off (bench_graph_breaks)")),
                 "epoch": ("OPENABLE", ()), "callee": ("_callees", lambda *a: None),
                 "try": ("OPENABLE", split.OPENABLE[:-1])}[workload]
    where = eval_frame if workload == "step" else split

    def call(*args):
        real = getattr(where, name)
        setattr(where, name, off)
        try:
            return compiled(*args)
        finally:
            setattr(where, name, real)
    return call


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("step", "epoch", "callee", "try"), default="step")
    parser.add_argument("--cpu-time", action="store_true", help="time the process's CPU, not the wall clock")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal((64, 64)).astype(np.float32), rng.integers(0, 10, 64)) for _ in range(args.steps)]
    variants = {
        "ember eager": (ember, False, True, True),
        "ember compiled, before": (ember, True, True, False),
        "ember compiled, split at the break": (ember, True, True, True),
        "ember compiled, no logging line (one graph)": (ember, True, False, True),
        "torch eager": (torch, False, True, True),
    }
    epoch, clock = args.workload == "epoch", time.process_time if args.cpu_time else time.perf_counter
    steps, data, best = {}, {}, {}
    for name, (lib, compiled, log, split_on) in variants.items():
        steps[name] = make_step(lib, compiled, log, split_on, args.workload)
        data[name] = [(lib.tensor(x), lib.tensor(y)) for x, y in batches]
        for k in range(3):  # warm: the recording, the capture of the pieces
            if epoch:
                steps[name][0](data[name][k * 3:k * 3 + 3])
            else:
                steps[name][0](*data[name][k])
    for _ in range(args.rounds):
        for name, (step, _) in steps.items():
            start = clock()
            if epoch:
                step(data[name])
            else:
                for x, y in data[name]:
                    step(x, y)
            best[name] = min(best.get(name, float("inf")), (clock() - start) / args.steps)
    reference = steps["ember eager"][1]
    for name in ("ember compiled, before", "ember compiled, split at the break"):
        np.testing.assert_allclose(steps[name][1], reference, rtol=2e-4)
    base = best["ember eager"]
    print(f"workload {args.workload}")
    for name, t in best.items():
        print(f"{name:46s} {t * 1e6:9.1f} µs/step  {t / base:5.2f}x ember eager")
    print("graphs:", dict(eval_frame.counters["stats"]), "breaks:", sum(eval_frame.counters["graph_break"].values()))
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
