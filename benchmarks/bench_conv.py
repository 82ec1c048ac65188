"""ember vs torch convolutions, side by side in one process: prints a table and one JSON line
of ember/torch time ratios (lower is better for ember). Times are the best of several rounds in
which the two libraries take turns (the machine may be shared).

Cases:
  conv2d_fwd_bwd   Conv2d(16, 32, 3, padding=1) on (32, 16, 32, 32) float32: forward, then
                   backward of the output's sum into input, weight and bias (the acceptance case)
  conv2d_fwd       the same layer, forward only, no autograd recording
  depthwise_fwd_bwd  Conv2d(32, 32, 3, padding=1, groups=32) on (32, 32, 16, 16)
  conv_t2d_fwd_bwd ConvTranspose2d(32, 16, 4, stride=2, padding=1) on (32, 32, 16, 16)
  conv1d_fwd_bwd   Conv1d(16, 32, 5, padding=2) on (32, 16, 256)

Run: python benchmarks/bench_conv.py [--repeat N]
Without torch installed it times ember alone: the table and the JSON line's ``"ember"``
figures, no ratios.
On a busy machine, OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 compares one thread against one
thread, which the other processes' load disturbs much less.
"""
import argparse
import json
import timeit

import numpy as np


def layer_step(lib, make, shape, backward):
    lib.manual_seed(0)
    layer = make(lib)
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32), requires_grad=backward)

    def step():
        if backward:
            layer.zero_grad()
            layer(x).sum().backward()
        else:
            with lib.no_grad():
                layer(x)
    return step


def best_pair(steps, number, repeat):
    """Best time per call of each step; the libraries take turns, so that both see the same
    load from other processes."""
    times = [float("inf")] * len(steps)
    for _ in range(repeat):
        for i, step in enumerate(steps):
            step()  # the first call after the other library's may wait for its threads to sleep
            times[i] = min(times[i], timeit.timeit(step, number=number) / number)
    return times


CASES = {
    "conv2d_fwd_bwd": (lambda L: L.nn.Conv2d(16, 32, 3, padding=1), (32, 16, 32, 32), True),
    "conv2d_fwd": (lambda L: L.nn.Conv2d(16, 32, 3, padding=1), (32, 16, 32, 32), False),
    "depthwise_fwd_bwd": (lambda L: L.nn.Conv2d(32, 32, 3, padding=1, groups=32), (32, 32, 16, 16), True),
    "conv_t2d_fwd_bwd": (lambda L: L.nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), (32, 32, 16, 16), True),
    "conv1d_fwd_bwd": (lambda L: L.nn.Conv1d(16, 32, 5, padding=2), (32, 16, 256), True),
}


def main():
    import ember
    try:
        import torch
    except ImportError:
        torch = None

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    libs = [ember] if torch is None else [ember, torch]

    rows = {name: best_pair([layer_step(lib, make, shape, backward) for lib in libs], 3, args.repeat)
            for name, (make, shape, backward) in CASES.items()}

    print(f"{'case':<20}{'ember':>12}{'torch':>12}{'ember/torch':>14}")
    for name, (e, *t) in rows.items():
        if t:
            print(f"{name:<20}{e * 1e3:>10.2f}ms{t[0] * 1e3:>10.2f}ms{e / t[0]:>14.2f}")
        else:
            print(f"{name:<20}{e * 1e3:>10.2f}ms{'-':>12}{'-':>14}")
    line = {"benchmark": "conv", "timer": "wall",
            "ember": {name: [float(f"{times[0]:.4g}"), "s"] for name, times in rows.items()}}
    if torch is not None:
        line["ember_over_torch"] = {name: round(e / t, 3) for name, (e, t) in rows.items()}
    print(json.dumps(line))


if __name__ == "__main__":
    main()
