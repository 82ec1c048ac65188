"""ember vs torch on small FFTs, where the per-call overhead around the transform is most of
the time: fft, ifft, rfft, irfft (float32/complex64) at n=64, one signal and a batch of 16,
forward only. Prints a table (with the CPU's name, each side's libraries) and one JSON line of ember/torch time ratios
(goal: <= 1.2; lower is better for ember).

Both libraries are pinned to one thread and timed by process CPU time, which other processes
on a shared machine do not inflate; ember and torch are timed alternately and the best of
``--repeat`` rounds is kept, so a busy spell hits both.

Run: python benchmarks/bench_fft.py [--repeat N] [--n 64] [--batch 16]
"""
import argparse
import json
import time
import timeit

import numpy as np

from bench_linalg import cpu_name, libraries

CASES = [("fft", "float32"), ("fft", "complex64"), ("ifft", "complex64"), ("rfft", "float32"),
         ("irfft", "complex64")]


def per_call(fn, number):
    return timeit.timeit(fn, number=number, timer=time.process_time) / number


def main():
    import ember
    import torch
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    ember.set_num_threads(1)  # its BLAS and its FFTs (pocketfft threads from 2**16 elements)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"CPU: {cpu_name()}  timer: cpu, 1 thread")
    print(libraries(ember, torch))
    print(f"{'case':<26}{'ember':>10}{'torch':>10}{'ember/torch':>14}")
    times, ratios = {}, {}
    for shape in [(args.n,), (args.batch, args.n)]:
        for name, dtype in CASES:
            x = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == "complex64" else 0)
            x = x.astype(dtype)
            fns = [lambda lib=lib, t=lib.tensor(x): getattr(lib.fft, name)(t) for lib in (ember, torch)]
            for fn in fns:
                fn()
            number = max(200, int(0.05 / max(per_call(fns[1], 100), 1e-7)))
            best = [min(pair) for pair in zip(*[[per_call(fn, number) for fn in fns] for _ in range(args.repeat)])]
            label = f"{name}_{dtype}_{'x'.join(map(str, shape))}"
            times[label], ratios[label] = best, round(best[0] / best[1], 3)
            print(f"{label:<26}{best[0] * 1e6:>8.1f}us{best[1] * 1e6:>8.1f}us{ratios[label]:>14.2f}")
    print(json.dumps({"benchmark": "fft", "cpu": cpu_name(), "timer": "cpu", "libraries": libraries(ember, torch), "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                      "ember": {k: [float(f"{v[0]:.4g}"), "s"] for k, v in times.items()},
                      "ember_over_torch": ratios}))


if __name__ == "__main__":
    main()
