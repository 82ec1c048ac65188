"""ember vs torch on LAPACK-bound linear algebra, side by side in one process: svd, eigh, qr,
cholesky, solve and inv on float32 matrices of size 64-1024, single and batched, and FFTs of the
same arrays (rfft along rows, fft2 of the whole matrix: pocketfft through SciPy's bindings, or
MKL along the last dim with the ember[mkl] extra, vs torch's MKL or pocketfft). Prints a table
(with the CPU's name, each side's libraries and threads) and one JSON line of ember/torch time ratios (goal: <= 1.2; lower is
better for ember).

Both libraries end in LAPACK (ember through NumPy/SciPy's OpenBLAS, torch through its MKL or
OpenBLAS build), so a ratio measures the LAPACK builds and the per-call overhead around them.
Forward only, no autograd recording.

Run: python benchmarks/bench_linalg.py [--repeat N] [--sizes 64,256,1024] [--cpu-time]
Per-call overhead at small sizes: --sizes 4,16 --batch 64 --batched-sizes 4,16 --cpu-time
``--cpu-time`` pins both libraries to one thread and compares process CPU time, which other
processes on a shared machine do not inflate. Otherwise each library runs with its threads
(``set_num_threads``, the machine's CPUs by default: ember's LAPACK through OpenBLAS, its FFTs
of 2**16 elements and more through pocketfft's pool; torch's MKL and FFTs through OpenMP),
printed in the header.
"""
import argparse
import json
import platform
import time
import timeit

import numpy as np

TIMER = [timeit.default_timer]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def libraries(ember, torch):
    """The libraries behind each side's linear algebra and FFTs, and their threads, in words."""
    import re
    import scipy
    lapack = scipy.show_config(mode="dicts")["Build Dependencies"]["lapack"]
    line = (f"ember: LAPACK {lapack['name']} {lapack['version']} (SciPy), FFT {ember.fft._libraries()}, "
            f"threads {ember.get_num_threads()}")
    if torch is not None:
        config = torch.__config__.show()
        found = re.search(r"LAPACK_INFO=(\w+)", config)
        fft = "MKL" if torch.backends.mkl.is_available() else "pocketfft"
        line += (f"\ntorch: LAPACK {found.group(1) if found else 'unknown'}, FFT {fft}, "
                 f"threads {torch.get_num_threads()}")
    return line


def best(fn, repeat):
    fn()  # warm up
    number = 1
    while timeit.timeit(fn, number=number, timer=TIMER[0]) < 0.05 and number < 1000:
        number *= 4
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=TIMER[0])) / number


def cases(n, batch):
    """(name, function of (lib, A, B)) for one size; A is (batch, n, n) SPD, B (batch, n, 4)."""
    return [("svd", lambda lib, a, b: lib.linalg.svd(a, full_matrices=False)),
            ("eigh", lambda lib, a, b: lib.linalg.eigh(a)),
            ("qr", lambda lib, a, b: lib.linalg.qr(a)),
            ("cholesky", lambda lib, a, b: lib.linalg.cholesky(a)),
            ("solve", lambda lib, a, b: lib.linalg.solve(a, b)),
            ("inv", lambda lib, a, b: lib.linalg.inv(a)),
            ("rfft", lambda lib, a, b: lib.fft.rfft(a)),
            ("fft2", lambda lib, a, b: lib.fft.fft2(a))]


def main():
    import ember
    try:
        import torch
    except ImportError:
        torch = None
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="64,256,1024")
    parser.add_argument("--batch", type=int, default=16, help="matrices in a batched case")
    parser.add_argument("--batched-sizes", default="64", help="matrix sizes of the batched cases")
    parser.add_argument("--cpu-time", action="store_true",
                        help="one thread each, timed by process CPU time")
    args = parser.parse_args()
    if args.cpu_time:
        ember.set_num_threads(1)
        if torch is not None:
            torch.set_num_threads(1)
        TIMER[0] = time.process_time
    libs = [ember] if torch is None else [ember, torch]
    shapes = [(1, int(n)) for n in args.sizes.split(",")] + [(args.batch, int(n)) for n in args.batched_sizes.split(",")]
    rng = np.random.default_rng(0)
    print(f"CPU: {cpu_name()}  timer: {'cpu' if args.cpu_time else 'wall'}")
    print(libraries(ember, torch))
    print(f"{'case':<22}{'ember':>12}{'torch':>12}{'ember/torch':>14}")
    times, ratios = {}, {}
    for batch, n in shapes:
        x = rng.standard_normal((batch, n, n)).astype(np.float32)
        a = (x @ x.transpose(0, 2, 1) / n + np.eye(n, dtype=np.float32)).astype(np.float32)
        b = rng.standard_normal((batch, n, 4)).astype(np.float32)
        for name, fn in cases(n, batch):
            label = f"{name}_{n}" + (f"x{batch}" if batch > 1 else "")
            pair = []
            for lib in libs:
                ta, tb = lib.tensor(a[0] if batch == 1 else a), lib.tensor(b[0] if batch == 1 else b)
                pair.append(best(lambda: fn(lib, ta, tb), args.repeat))
            times[label] = pair
            if len(pair) == 2:
                ratios[label] = round(pair[0] / pair[1], 3)
                print(f"{label:<22}{pair[0] * 1e3:>10.3f}ms{pair[1] * 1e3:>10.3f}ms{ratios[label]:>14.2f}")
            else:
                print(f"{label:<22}{pair[0] * 1e3:>10.3f}ms{'-':>12}{'-':>14}")
    line = {"benchmark": "linalg", "cpu": cpu_name(), "timer": "cpu" if args.cpu_time else "wall",
            "libraries": libraries(ember, torch),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "ember": {k: [float(f"{v[0]:.4g}"), "s"] for k, v in times.items()}}
    if ratios:
        line["ember_over_torch"] = ratios
    print(json.dumps(line))


if __name__ == "__main__":
    main()
