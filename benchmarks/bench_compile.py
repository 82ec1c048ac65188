"""ember.compile vs ember eager vs torch eager vs torch.compile, side by side in one process.

Each workload is one whole training step (forward, backward, optimizer step, zero_grad) built
the same way for both libraries from the same initial weights, run four ways: ember eager,
ember compiled (``ember.compile(step)``: the whole step is one captured graph), torch eager and
torch.compile (inductor). Steady-state times are the best of ``--repeat`` rounds of
``--number`` steps, the four variants taking turns so that they see the same load; the
compile time column is the wall time of the first calls (capture or tracing, code generation,
the optimizer's first step), minus one steady step. Ratios are to torch eager (lower is
better for ember).

Workloads (rows are added by name in WORKLOADS):
    mlp_digits_step: MLP 64-128-64-10 (ReLU), batch 32 of digits-shaped float32 inputs,
        cross-entropy, SGD with momentum 0.9.

Run: python benchmarks/bench_compile.py [--repeat N] [--number N] [--cpu-time] [--no-inductor]
Prints a table (with the CPU's name) and one JSON line.
"""
import argparse
import json
import os
import time
import timeit


def mlp_digits_step(lib, weights, data):
    """One training step of the digits MLP in ``lib`` (ember or torch)."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    model.load_state_dict({name: lib.tensor(value) for name, value in weights(model).items()})
    x, y = lib.tensor(data["x"]), lib.tensor(data["y"])
    optimizer = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step():
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
    return step


def _mlp_data(np):
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((32, 64)).astype(np.float32), "y": rng.integers(0, 10, 32)}


WORKLOADS = {"mlp_digits_step": (mlp_digits_step, _mlp_data)}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def best_times(steps, number, repeat, timer):
    times = [float("inf")] * len(steps)
    for _ in range(repeat):
        for i, step in enumerate(steps):
            step()
            times[i] = min(times[i], timeit.timeit(step, number=number, timer=timer) / number)
    return times


def first_calls(step, calls=2):
    """Wall time of the first ``calls`` calls (capture and compilation happen there)."""
    start = time.perf_counter()
    for _ in range(calls):
        step()
    return time.perf_counter() - start


def _cell(value, width, spec, unit=""):
    return f"{'-':>{width}}" if value != value else f"{format(value, spec) + unit:>{width}}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds; the best counts")
    parser.add_argument("--number", type=int, default=20, help="steps per round")
    parser.add_argument("--cpu-time", action="store_true", help="one thread each, timed by process CPU time")
    parser.add_argument("--no-inductor", action="store_true", help="skip torch.compile (it compiles for 10-60 s)")
    args = parser.parse_args()
    if args.cpu_time:
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    import numpy as np
    import torch

    import ember
    if args.cpu_time:
        torch.set_num_threads(1)
    timer = time.process_time if args.cpu_time else time.perf_counter
    columns = ["ember eager", "ember compiled", "torch eager", "torch.compile"]
    print(f"CPU: {cpu_name()}; timer: {'process CPU time, 1 thread' if args.cpu_time else 'wall'}")
    print(f"{'workload (ms/step)':<20}" + "".join(f"{c:>16}" for c in columns)
          + f"{'compile ember':>15}{'compile torch':>15}" + "".join(f"{c + ' /t':>18}" for c in columns[:2] + columns[3:]))
    results = {}
    for name, (build, make_data) in WORKLOADS.items():
        data = make_data(np)
        torch.manual_seed(0)
        reference = {}

        def weights(model):
            if not reference:  # the first library to ask (torch) draws them; the other copies
                reference.update({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
            return reference
        torch_eager = build(torch, weights, data)
        steps = [build(ember, weights, data), ember.compile(build(ember, weights, data)), torch_eager]
        compile_times = [first_calls(steps[1]) - first_calls(steps[0])]
        if not args.no_inductor:
            steps.append(torch.compile(build(torch, weights, data)))
            compile_times.append(first_calls(steps[3]) - first_calls(steps[2]))
        for step in steps:
            step()
        times = best_times(steps, args.number, args.repeat, timer)
        times += [float("nan")] * (4 - len(times))
        compile_times += [float("nan")] * (2 - len(compile_times))
        ratios = [times[0] / times[2], times[1] / times[2], times[3] / times[2]]
        print(f"{name:<20}" + "".join(_cell(t * 1e3, 16, ".3f") for t in times)
              + "".join(_cell(c, 15, ".2f", "s") for c in compile_times) + "".join(_cell(r, 18, ".2f") for r in ratios))
        results[name] = {"ms": [round(t * 1e3, 4) for t in times], "compile_s": [round(c, 3) for c in compile_times],
                         "over_torch_eager": [round(r, 3) for r in ratios]}
    print(json.dumps({"benchmark": "compile", "cpu": cpu_name(), "timer": "cpu" if args.cpu_time else "wall",
                      "columns": columns, "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "results": results}))


if __name__ == "__main__":
    main()
