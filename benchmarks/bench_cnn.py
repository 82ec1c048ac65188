"""ember vs torch on one LeNet training step, side by side in one process: time and peak memory.
Prints a table and one JSON line of ember/torch ratios (lower is better for ember; targets:
time <= 1.5, memory <= 2).

The step: LeNet-5 as used on MNIST (Conv2d(1, 6, 5, padding=2)-ReLU-MaxPool2d(2)-Conv2d(6, 16, 5)-
ReLU-MaxPool2d(2)-Linear(400, 120)-ReLU-Linear(120, 84)-ReLU-Linear(84, 10)), a batch of 64
float32 images (64, 1, 28, 28) with int64 labels, cross-entropy, ``zero_grad``, ``backward``
and an Adam step. Both libraries start from the same weights. ``--avg-pool``: AvgPool2d(2) in
place of the max pools (LeNet-5's original subsampling); ``--compile``: ember's step under
``ember.compile`` (the generated C), timed after its compiling calls.

Time: the best of several rounds of ``--number`` steps, the libraries taking turns so that
both see the same load from other processes. On a shared machine wall-clock ratios mostly
measure the neighbours; ``--cpu-time`` pins both libraries to one thread and compares process
CPU time instead, which other processes do not inflate.

Peak memory: the most bytes held at any moment of one step beyond what was held when it
began (activations, gradients, workspace; the weights, Adam's state and the batch already
exist), measured after warm-up steps:

- ember: ``tracemalloc``, started one step earlier so that the frees of that step's
  gradients count. NumPy reports every array buffer it allocates and frees to it, so the
  peak over the step is the peak of ember's tensor memory (plus small Python objects).
- torch: its CPU allocator is invisible to ``tracemalloc``. ``torch.profiler`` with
  ``profile_memory=True`` records each tensor allocation and free; its memory timeline
  (``profile._memory_profile().timeline``, the data behind ``export_memory_timeline``) is
  replayed in order, and the running total's maximum is the peak.

Run: python benchmarks/bench_cnn.py [--repeat N] [--number N] [--cpu-time] [--avg-pool] [--compile]
Without torch installed it measures ember alone (from ember's own initial weights): the table
and the JSON line's ``"ember"`` figures, no ratios.
"""
import argparse
import json
import os
import time
import timeit
import tracemalloc

BATCH = 64


def lenet(lib, avg_pool=False):
    nn = lib.nn
    pool = nn.AvgPool2d if avg_pool else nn.MaxPool2d
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), pool(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), pool(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def training_step(lib, weights, images, labels, avg_pool=False, compiled=False):
    """A closure running one training step of ``lib``'s LeNet, initialised from ``weights``
    (NumPy arrays), on ``images`` and ``labels`` (NumPy arrays); ``compiled``: under
    ``lib.compile``."""
    model = lenet(lib, avg_pool)
    model.load_state_dict({name: lib.tensor(value) for name, value in weights.items()})
    images, labels = lib.tensor(images), lib.tensor(labels)
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss_fn(model(images), labels).backward()
        optimizer.step()
    return lib.compile(step) if compiled else step


def best_times(steps, number, repeat, timer):
    times = [float("inf")] * len(steps)
    for _ in range(repeat):
        for i, step in enumerate(steps):
            step()  # the first call after the other library's may wait for its threads to sleep
            times[i] = min(times[i], timeit.timeit(step, number=number, timer=timer) / number)
    return times


def ember_peak_bytes(step):
    tracemalloc.start()
    try:
        step()  # blocks from before tracing began would not count when this step frees them
        baseline, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - baseline


def torch_peak_bytes(step):
    from torch.profiler import ProfilerActivity, profile
    from torch.profiler._memory_profiler import Action

    # The memory timeline needs shapes and stacks to tell tensors apart.
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                 with_stack=True) as profiler:
        step()
    held = peak = 0
    for _, action, _, size in profiler._memory_profile().timeline:
        if action == Action.CREATE:
            held += size
        elif action == Action.DESTROY:
            held -= size
        peak = max(peak, held)
    return peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds; the best counts")
    parser.add_argument("--number", type=int, default=5, help="steps per round")
    parser.add_argument("--cpu-time", action="store_true",
                        help="one thread each, timed by process CPU time")
    parser.add_argument("--avg-pool", action="store_true", help="AvgPool2d(2) in place of MaxPool2d(2)")
    parser.add_argument("--compile", action="store_true", help="ember's step compiled (ember.compile)")
    args = parser.parse_args()
    if args.cpu_time:
        # Before NumPy loads: ember sizes its BLAS thread pool from what it finds at import.
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    # The profiler warns that blocks allocated before it started have no size: expected here.
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    import numpy as np

    import ember
    try:
        import torch
    except ImportError:
        torch = None
    if args.cpu_time and torch is not None:
        torch.set_num_threads(1)
    libs = [ember] if torch is None else [ember, torch]

    libs[-1].manual_seed(0)
    weights = {name: value.detach().numpy().copy() for name, value in lenet(libs[-1]).state_dict().items()}
    rng = np.random.default_rng(0)
    images = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, BATCH)
    steps = [training_step(lib, weights, images, labels, args.avg_pool, args.compile and lib is ember)
             for lib in libs]
    for step in steps:  # warm up: Adam's state, caches, first-call costs (compiling)
        for _ in range(3):
            step()
    timer = time.process_time if args.cpu_time else time.perf_counter
    times = best_times(steps, args.number, args.repeat, timer)
    peaks = [ember_peak_bytes(steps[0]), *(torch_peak_bytes(step) for step in steps[1:])]

    title = f"LeNet{' (avg pool)' if args.avg_pool else ''} step, batch 64{', compiled' if args.compile else ''}"
    print(f"{title:<40}{'ember':>12}{'torch':>12}{'ember/torch':>14}")
    for label, (e, *t), scale, unit in (("time", times, 1e3, "ms"), ("peak memory", peaks, 2**-20, "MB")):
        torch_columns = f"{t[0] * scale:>10.2f}{unit}{e / t[0]:>14.2f}" if t else f"{'-':>12}{'-':>14}"
        print(f"{label:<40}{e * scale:>10.2f}{unit}{torch_columns}")
    line = {"benchmark": "cnn", "avg_pool": args.avg_pool, "compiled": args.compile, "timer": "cpu" if args.cpu_time else "wall",
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "ember": {"lenet_step_time": [float(f"{times[0]:.4g}"), "s"],
                      "lenet_step_peak_memory": [peaks[0], "B"]}}
    if torch is not None:
        line["ember_over_torch"] = {"lenet_step_time": round(times[0] / times[1], 3),
                                    "lenet_step_peak_memory": round(peaks[0] / peaks[1], 3)}
    print(json.dumps(line))


if __name__ == "__main__":
    main()
