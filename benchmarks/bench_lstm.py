"""ember vs torch, side by side in one process: recurrent layers forward + backward. Prints
a table and one JSON line of ember/torch time ratios (lower is better for ember).

Cases (float32, 2 layers, input and hidden size 256, sequence 35, batch 20):
  lstm_fwd_bwd   nn.LSTM forward, then backward of output.sum() (the target: ratio <= 2)
  lstm_fwd       the same forward alone, under no_grad
  gru_fwd_bwd    nn.GRU forward + backward
  lstm_compiled  lstm_fwd_bwd with ember's step compiled whole (ember.compile, fullgraph=True),
                 against torch eager (issue 10's target: ratio <= 1.0)

Each time is the best over repeats, and the libraries take turns within each repeat, so
that load from elsewhere on a shared machine falls on both alike. ``--threads N`` limits
both libraries to N threads (torch's intra-op pool, and OpenBLAS under ember): on a loaded
machine a multithreaded product waits for a core, which makes default-thread numbers erratic.
Run: python benchmarks/bench_lstm.py [--repeat N] [--threads N]
Without torch installed it times ember alone: the table and the JSON line's ``"ember"``
figures, no ratios.
"""
import argparse
import json
import os
import time


def make_step(lib, kind, x, backward, compiled=False):
    lib.manual_seed(0)
    model = getattr(lib.nn, kind)(256, 256, num_layers=2)
    inp = lib.tensor(x)

    def step():
        if backward:
            model.zero_grad()
            output, _ = model(inp)
            output.sum().backward()
        else:
            with lib.no_grad():
                model(inp)
    if compiled and lib.__name__ == "ember":
        step = lib.compile(step, fullgraph=True)
    step()  # warm up (and capture and compile)
    step()
    return step


def best_pair(steps, number, repeat):
    """Best time per call of each step, the steps taking turns."""
    times = [float("inf")] * len(steps)
    for _ in range(repeat):
        for i, step in enumerate(steps):
            start = time.perf_counter()
            for _ in range(number):
                step()
            times[i] = min(times[i], (time.perf_counter() - start) / number)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        # OpenBLAS reads this once, when NumPy loads it.
        os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    import numpy as np

    import ember
    try:
        import torch
    except ImportError:
        torch = None
    if args.threads and torch is not None:
        torch.set_num_threads(args.threads)
    libs = [ember] if torch is None else [ember, torch]
    x = np.random.default_rng(0).standard_normal((35, 20, 256)).astype(np.float32)

    rows = {}
    for name, kind, backward, compiled in (("lstm_fwd_bwd", "LSTM", True, False), ("lstm_fwd", "LSTM", False, False),
                                           ("gru_fwd_bwd", "GRU", True, False),
                                           ("lstm_compiled", "LSTM", True, True)):
        steps = [make_step(lib, kind, x, backward, compiled) for lib in libs]
        rows[name] = best_pair(steps, 3, args.repeat)

    print(f"{'case':<16}{'ember':>12}{'torch':>12}{'ember/torch':>14}")
    ratios = {}
    for name, (e, *t) in rows.items():
        if t:
            ratios[name] = round(e / t[0], 3)
            print(f"{name:<16}{e * 1e3:>10.2f}ms{t[0] * 1e3:>10.2f}ms{e / t[0]:>14.2f}")
        else:
            print(f"{name:<16}{e * 1e3:>10.2f}ms{'-':>12}{'-':>14}")
    line = {"benchmark": "lstm", "timer": "wall",
            "ember": {name: [float(f"{times[0]:.4g}"), "s"] for name, times in rows.items()}}
    if torch is not None:
        line["ember_over_torch"] = ratios
    print(json.dumps(line))


if __name__ == "__main__":
    main()
