"""CTC loss, forward and backward, ember vs torch 2.13 on the CPU (a speech-sized batch: T=150
frames, N=16 samples, C=30 classes, targets of 20-40 labels). Prints a table and one JSON line.

    PYTHONPATH=src python benchmarks/bench_ctc.py
"""
import json
import os
import timeit

import numpy as np
import torch

import ember


def case(lib, T=150, N=16, C=30, seed=0):
    rng = np.random.default_rng(seed)
    logits = lib.tensor(rng.standard_normal((T, N, C)).astype(np.float32), requires_grad=True)
    target_lengths = [int(n) for n in rng.integers(20, 41, N)]
    targets = lib.tensor(rng.integers(1, C, (N, max(target_lengths))))
    input_lengths = [T - int(n) for n in rng.integers(0, 20, N)]

    def step():
        loss = lib.nn.functional.ctc_loss(logits.log_softmax(2), targets, input_lengths, target_lengths)
        loss.backward()
    return step


def best_of_7(step, number=5):
    step()
    return min(timeit.repeat(step, number=number, repeat=7)) / number


def main():
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    times = {name: best_of_7(case(lib)) for name, lib in (("torch", torch), ("ember", ember))}
    load = os.getloadavg()[0]
    print(f"ctc_loss forward+backward (T=150, N=16, C=30), best of 7, load {load:.2f}")
    for name, seconds in times.items():
        print(f"  {name:6} {seconds * 1e3:8.2f} ms")
    print(json.dumps({"bench": "ctc", "torch_ms": times["torch"] * 1e3, "ember_ms": times["ember"] * 1e3,
                      "ratio": times["ember"] / times["torch"], "load": load}))


if __name__ == "__main__":
    main()
