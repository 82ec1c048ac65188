"""Dynamic shapes: a batch-size sweep compiled once under @dynamic_spec vs a graph per size.

The workload is a classifier's forward pass (MLP 64-128-64-10, GELU and tanh, softmax; no grad;
with ``--model lenet`` LeNet on 1x28x28 images: conv 5x5 to 6 and 16 channels, ReLU, 2x2 max
pooling, linear) called at every batch size of the sweep; with ``--train`` a training step's
forward and backward (cross-entropy of the logits, gradients into the parameters). Variants:
    ember dynamic_spec: ``forward`` declares ``ShapeVar("B", max=64)``: one graph (one C build
        whose loops and GEMMs take the batch size at run time) for the whole sweep;
    ember static: ``ember.compile(dynamic=False, recompile_limit=len(sweep))``: one generated C
        graph per batch size, built in a fresh compile cache (cold, as a first run is);
    torch eager, and with ``--torch-compile`` torch.compile(dynamic=False) and (dynamic=True).
Compile time is the sum over the sweep of (first call at a size - a steady call at that size);
steady time is the sum over the sweep of one steady call (best of ``--repeat``). Ratios of the
steady time are to torch eager.

Run: python benchmarks/bench_dynamic.py [--model mlp|lenet] [--sizes 1,2,3,...] [--repeat N] [--train]
[--torch-compile] [--cpu-time]
Prints a table (with the CPU's name) and one JSON line.
"""
import argparse
import json
import os
import tempfile
import time

import numpy as np

from bench_compile import cpu_name


SHAPES = {"mlp": (64,), "lenet": (1, 28, 28)}  # one sample's shape


def _layers(nn, arch):
    if arch == "lenet":
        return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                             nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 5 * 5, 10))
    return nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64), nn.Tanh(), nn.Linear(64, 10))


def make_model(lib, spec=False, train=False, arch="mlp"):
    nn = lib.nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = _layers(nn, arch)

        def forward(self, x):
            return self.net(x).softmax(-1)

        def loss(self, x, y):  # the training workload: compiled with forward's spec
            return lib.nn.functional.cross_entropy(self.net(x), y)

    if train:
        Classifier.forward = Classifier.loss
    if spec:
        from ember.fx.experimental.dynamic_spec import STATIC, ShapeVar, TensorSpec, dynamic_spec
        B = ShapeVar("B", max=64)
        dims = {"x": TensorSpec([B] + [STATIC] * len(SHAPES[arch]))} | ({"y": TensorSpec([B])} if train else {})
        Classifier.forward = dynamic_spec(dims)(Classifier.forward)
    lib.manual_seed(0)
    return Classifier().eval()


def sweep(lib, run, inputs, repeat, train, timer=time.perf_counter):
    """(compile seconds, steady seconds) of ``run`` over the inputs, and its outputs (with
    ``train``: the loss and the first layer's weight gradient), timed by ``timer``."""
    compile_time, steady, outputs = 0.0, 0.0, []
    with lib.set_grad_enabled(train):
        for x in inputs:
            start = timer()
            out = _call(run, x, train)
            first = timer() - start
            outputs.append(out)
            best = min(_timed(run, x, train, timer) for _ in range(repeat))
            compile_time += max(first - best, 0.0)
            steady += best
    return compile_time, steady, outputs


def _call(run, x, train):
    if not train:
        return run(x[0]).numpy().copy()
    for p in run.parameters():
        p.grad = None
    loss = run(*x)
    loss.backward()
    return np.concatenate([loss.detach().numpy().ravel(), next(run.parameters()).grad.numpy().ravel()])


def _timed(run, x, train, timer):
    start = timer()
    _call(run, x, train)
    return timer() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(SHAPES), default="mlp")
    parser.add_argument("--sizes", default="1,2,3,5,8,12,16,23,31,32,47,64")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--train", action="store_true", help="time a forward and backward step")
    parser.add_argument("--torch-compile", action="store_true")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by process CPU time (a loaded machine; run with OMP_NUM_THREADS=1)")
    args = parser.parse_args()
    timer = time.process_time if args.cpu_time else time.perf_counter
    sizes = [int(s) for s in args.sizes.split(",")]
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="ember-bench-dynamic-")  # cold C builds
    import torch

    import ember
    torch.set_num_threads(1)  # ember's NumPy kernels run one thread here too (OMP_NUM_THREADS=1)
    rng = np.random.default_rng(0)
    arch = args.model
    data = [(rng.standard_normal((b, *SHAPES[arch])).astype(np.float32), rng.integers(0, 10, b)) for b in sizes]
    rows, train = {}, args.train
    eager = make_model(ember, train=train, arch=arch)
    weights = eager.state_dict()
    variants = [("ember dynamic_spec (C)", ember,
                 lambda: ember.compile(_loaded(make_model(ember, True, train, arch), weights))),
                ("ember static (C)", ember, lambda: ember.compile(_loaded(make_model(ember, train=train, arch=arch), weights),
                                                                   dynamic=False, recompile_limit=len(sizes))),
                ("ember eager", ember, lambda: eager),
                ("torch eager", torch, lambda: _torch_model(torch, weights, train, arch))]
    if args.torch_compile:
        variants += [(f"torch.compile dynamic={d}", torch,
                      lambda d=d: torch.compile(_torch_model(torch, weights, train, arch), dynamic=d)) for d in (False, True)]
    reference = None
    for name, lib, build in variants:
        ember.compiler.reset()
        if args.torch_compile:  # each torch.compile variant starts from an empty cache, with room for every size
            torch._dynamo.reset()
            torch._dynamo.config.recompile_limit = len(sizes)
        run = build()
        inputs = [(lib.tensor(x), lib.tensor(y)) for x, y in data]
        compile_time, steady, outputs = sweep(lib, run, inputs, args.repeat, train, timer)
        if reference is None:
            reference = outputs
        error = max(float(np.abs(a - b).max()) for a, b in zip(outputs, reference))
        graphs = ember._dynamo.utils.counters["stats"]["unique_graphs"] if lib is ember else None
        rows[name] = {"compile_s": compile_time, "steady_s": steady, "graphs": graphs, "max_abs_diff": error}
    base = rows["torch eager"]["steady_s"]
    print(f"CPU: {cpu_name()}, torch on 1 thread, {'process CPU' if args.cpu_time else 'wall'} time; {arch} {'training step' if train else 'forward'}; batch sizes "
          f"{sizes}; steady = one call per size, best of {args.repeat}")
    print(f"{'variant':28s} {'graphs':>6s} {'compile s':>10s} {'steady ms':>10s} {'vs torch':>9s} {'max |diff|':>11s}")
    for name, r in rows.items():
        print(f"{name:28s} {'' if r['graphs'] is None else r['graphs']:>6} {r['compile_s']:10.3f} "
              f"{r['steady_s'] * 1e3:10.2f} {r['steady_s'] / base:9.2f} {r['max_abs_diff']:11.2e}")
    print(json.dumps({"benchmark": "dynamic", "cpu": cpu_name(), "model": arch, "sizes": sizes, "train": train,
                      "timer": "cpu" if args.cpu_time else "wall",
                      "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "rows": rows}))


def _loaded(model, weights):
    model.load_state_dict(weights)
    return model


def _torch_model(torch, weights, train=False, arch="mlp"):
    model = make_model(torch, train=train, arch=arch)
    model.load_state_dict({k: torch.tensor(v.numpy()) for k, v in weights.items()})
    return model


if __name__ == "__main__":
    main()
