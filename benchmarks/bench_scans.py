"""ember vs torch on the kernels whose exactness costs work (session 15): float32 ``cumsum``
along each dim of a 1000 x 1000 tensor (torch's double accumulator), and ``mode(1)`` of a
1000 x 1000 int64 tensor with repeats (its replay of std::sort) and of distinct float32.
Prints a table and one JSON line of ember/torch time ratios (lower is better for ember).

Both libraries are pinned to one thread and timed by process CPU time, alternately, keeping
the best of ``--repeat`` rounds, so a busy spell on a shared machine hits both.

Run: python benchmarks/bench_scans.py [--repeat N] [--n 1000]
"""
import argparse
import json
import time

import numpy as np

from bench_linalg import cpu_name, libraries


def cpu_seconds(fn, number):
    start = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - start) / number


def main():
    import ember
    import torch
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    ember.set_num_threads(1)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    floats = rng.standard_normal((args.n, args.n)).astype(np.float32)
    repeats = rng.integers(0, 50, (args.n, args.n))
    cases = {"cumsum_f32_dim0": (floats, lambda lib, t: lib.cumsum(t, 0)),
             "cumsum_f32_dim1": (floats, lambda lib, t: lib.cumsum(t, 1)),
             "mode_i64_repeats": (repeats, lambda lib, t: lib.mode(t, 1)),
             "mode_f32_distinct": (floats, lambda lib, t: lib.mode(t, 1))}
    print(f"CPU: {cpu_name()}  timer: cpu, 1 thread")
    print(libraries(ember, torch))
    print(f"{'case':<22}{'ember':>11}{'torch':>11}{'ember/torch':>14}")
    times, ratios = {}, {}
    for label, (array, op) in cases.items():
        fns = [lambda lib=lib, t=lib.tensor(array): op(lib, t) for lib in (ember, torch)]
        for fn in fns:
            fn()  # (ember's mode builds its C on the first call)
        number = max(1, int(0.2 / max(cpu_seconds(fns[1], 1), 1e-6)))
        best = [min(pair) for pair in zip(*[[cpu_seconds(fn, number) for fn in fns] for _ in range(args.repeat)])]
        times[label], ratios[label] = best, round(best[0] / best[1], 3)
        print(f"{label:<22}{best[0] * 1e3:>9.2f}ms{best[1] * 1e3:>9.2f}ms{ratios[label]:>14.2f}")
    print(json.dumps({"benchmark": "scans", "cpu": cpu_name(), "timer": "cpu", "libraries": libraries(ember, torch),
                      "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                      "ember": {k: [float(f"{v[0]:.4g}"), "s"] for k, v in times.items()},
                      "ember_over_torch": ratios}))


if __name__ == "__main__":
    main()
