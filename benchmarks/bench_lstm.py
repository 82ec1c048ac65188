"""ember vs torch, side by side in one process: LSTM forward + backward. Prints a table and
one JSON line of ember/torch time ratios (lower is better for ember).

Cases:
  lstm_fwd_bwd   nn.LSTM(256, 256, num_layers=2), input (35, 20, 256) float32: forward, then
                 backward of output.sum() (the speed target: ratio <= 2)
  lstm_fwd       the same forward alone, without recording history
  gru_fwd_bwd    nn.GRU with the same sizes, forward + backward

Each time is the minimum over repeats, so that other load on the machine counts as little
as it can. Run: python benchmarks/bench_lstm.py [--repeat N]
"""
import argparse
import json
import timeit

import numpy as np


def best(fn, number, repeat):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def make(lib, kind, x):
    lib.manual_seed(0)
    model = getattr(lib.nn, kind)(256, 256, num_layers=2)
    return model, lib.tensor(x)


def fwd_bwd(lib, kind, x, repeat):
    model, inp = make(lib, kind, x)

    def step():
        model.zero_grad()
        output, _ = model(inp)
        output.sum().backward()
    step()
    return best(step, 3, repeat)


def fwd(lib, kind, x, repeat):
    model, inp = make(lib, kind, x)

    def step():
        with lib.no_grad():
            model(inp)
    step()
    return best(step, 3, repeat)


def main():
    import torch

    import ember

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal((35, 20, 256)).astype(np.float32)

    rows = {}
    for name, fn, kind in (("lstm_fwd_bwd", fwd_bwd, "LSTM"), ("lstm_fwd", fwd, "LSTM"),
                           ("gru_fwd_bwd", fwd_bwd, "GRU")):
        rows[name] = (fn(ember, kind, x, args.repeat), fn(torch, kind, x, args.repeat))

    print(f"{'case':<16}{'ember':>12}{'torch':>12}{'ember/torch':>14}")
    ratios = {}
    for name, (e, t) in rows.items():
        ratios[name] = round(e / t, 3)
        print(f"{name:<16}{e * 1e3:>10.2f}ms{t * 1e3:>10.2f}ms{e / t:>14.2f}")
    print(json.dumps(ratios))


if __name__ == "__main__":
    main()
