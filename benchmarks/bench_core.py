"""ember vs torch, side by side in one process: prints a table and one JSON line of
ember/torch time ratios (lower is better for ember).

Cases (issue 2's acceptance figures):
  mlp_epoch      one epoch of an MLP 64-128-64-10 on the digits train split, batch 64, SGD
  add_tiny       a + b on 10-element tensors, no autograd recording
  add_tiny_grad  the same with a input that requires grad (records a node)
  matmul_512     512x512 float32 matmul (also compared with NumPy's own BLAS)

Run: python benchmarks/bench_core.py [--repeat N] [--cpu-time]
Without torch installed it times ember alone: the table and the JSON line's ``"ember"``
figures, no ratios.

On a shared machine wall-clock ratios mostly measure the neighbours; ``--cpu-time`` pins both
libraries to one thread and compares process CPU time instead, which other processes do not
inflate.
"""
import argparse
import json
import time
import timeit

import numpy as np


TIMER = [timeit.default_timer]


def best(fn, number, repeat):
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=TIMER[0])) / number


def mlp_epoch(lib, x, y, repeat):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(64, 128), lib.nn.ReLU(), lib.nn.Linear(128, 64),
                              lib.nn.ReLU(), lib.nn.Linear(64, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()
    data = lib.utils.data.TensorDataset(lib.tensor(x), lib.tensor(y))
    loader = lib.utils.data.DataLoader(data, batch_size=64, shuffle=True)

    def epoch():
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
    epoch()  # warm up
    return best(epoch, 1, repeat)


def main():
    import ember
    from ember.datasets import load_digits
    try:
        import torch
    except ImportError:
        torch = None

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cpu-time", action="store_true",
                        help="one thread each, timed by process CPU time")
    args = parser.parse_args()
    if args.cpu_time:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
        if torch is not None:
            torch.set_num_threads(1)
        TIMER[0] = time.process_time
    libs = [ember] if torch is None else [ember, torch]

    digits = load_digits()
    x = np.asarray(digits.x_train, dtype=np.float32).reshape(len(digits.y_train), -1)
    y = np.asarray(digits.y_train, dtype=np.int64)

    rows = {}
    rows["mlp_epoch"] = tuple(mlp_epoch(lib, x, y, args.repeat) for lib in libs)
    for name, grad in (("add_tiny", False), ("add_tiny_grad", True)):
        pair = []
        for lib in libs:
            a = lib.ones(10, requires_grad=grad)
            b = lib.ones(10)
            pair.append(best(lambda: a + b, 20000, args.repeat))
        rows[name] = tuple(pair)
    a32 = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    pair = []
    for lib in libs:
        p, q = lib.tensor(a32), lib.tensor(a32.T.copy())
        pair.append(best(lambda: p @ q, 10, args.repeat))
    rows["matmul_512"] = tuple(pair)
    a32t = a32.T.copy()
    numpy_mm = best(lambda: a32 @ a32t, 10, args.repeat)

    print(f"{'case':<16}{'ember':>12}{'torch':>12}{'ember/torch':>14}")
    ratios = {}
    for name, (e, *t) in rows.items():
        if t:
            ratios[name] = round(e / t[0], 3)
            print(f"{name:<16}{e * 1e6:>10.1f}us{t[0] * 1e6:>10.1f}us{e / t[0]:>14.2f}")
        else:
            print(f"{name:<16}{e * 1e6:>10.1f}us{'-':>12}{'-':>14}")
    ratios["matmul_512_vs_numpy"] = round(rows["matmul_512"][0] / numpy_mm, 3)
    print(f"{'matmul vs numpy':<16}{rows['matmul_512'][0] * 1e6:>10.1f}us{numpy_mm * 1e6:>10.1f}us"
          f"{ratios['matmul_512_vs_numpy']:>14.2f}")
    line = {"benchmark": "core", "timer": "cpu" if args.cpu_time else "wall",
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "ember": {name: [float(f"{times[0]:.4g}"), "s"] for name, times in rows.items()}}
    if torch is not None:
        line["ember_over_torch"] = ratios
    print(json.dumps(line))


if __name__ == "__main__":
    main()
