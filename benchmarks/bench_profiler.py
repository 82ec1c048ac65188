"""What the profiler's hook costs when nothing profiles, and what profiling costs: prints a
table and one JSON line.

Cases:
  add_loop    5,000 ``a + b`` on 10-element tensors that require grad (dispatch-bound: the
              hook's one check is the largest share it can ever be)
  mlp_epoch   bench_core's MLP epoch (64-128-64-10 on the digits, batch 64, SGD), forward,
              backward and step

Columns: ember as shipped (hook present, nobody observing), the same ember with the hook
removed (``apply`` and the backward engine recompiled without their ``OBSERVERS`` checks),
their ratio (issue 5 asks <= 1.03 for mlp_epoch), and the case run under
``ember.profiler.profile()``.

Times are process CPU time with one thread (the machine is shared): the best of ``--repeat``
runs; the variants take turns within each repeat and the ratios are medians of per-repeat
ratios.

Run: python benchmarks/bench_profiler.py [--repeat N]
"""
import argparse
import contextlib
import gc
import inspect
import json
import sys
import textwrap
import time

from threadpoolctl import threadpool_limits

threadpool_limits(1)

import numpy as np  # noqa: E402  (BLAS pinned to one thread before NumPy loads it)

import ember  # noqa: E402
from ember._ops import core  # noqa: E402
from ember.autograd import engine  # noqa: E402


def _recompiled(fn, edits):
    """``fn`` compiled again from its source with ``edits`` (old, new) applied, in its module."""
    source = textwrap.dedent(inspect.getsource(fn))
    for old, new in edits:
        if old not in source:
            raise RuntimeError(f"bench_profiler: {fn.__qualname__} no longer contains {old!r}")
        source = source.replace(old, new)
    namespace = {}
    exec(compile(source, inspect.getsourcefile(fn), "exec"), vars(sys.modules[fn.__module__]), namespace)
    return namespace[fn.__name__]


@contextlib.contextmanager
def hook_removed():
    """ember with the observer checks cut out of ``apply`` and ``_execute``, everywhere they
    were imported."""
    bare_apply = _recompiled(core.apply, [
        ("    if OBSERVERS and not getattr(_observing, \"inside\", False):\n"
         "        return _observed_apply(op, inputs, attrs)\n", "")])
    bare_execute = _recompiled(engine._execute, [
        ("_observed(OBSERVERS, node, node.apply, slots) if OBSERVERS else node.apply(slots)",
         "node.apply(slots)"),
        ("                    if OBSERVERS:\n", "                    if False:\n")])
    swapped = []
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("ember"):
            for name, original, bare in (("apply", core.apply, bare_apply),
                                         ("_execute", engine._execute, bare_execute)):
                if getattr(module, name, None) is original:
                    swapped.append((module, name, original))
                    setattr(module, name, bare)
    try:
        yield
    finally:
        for module, name, original in swapped:
            setattr(module, name, original)


def add_loop(context):
    a, b = ember.ones(10, requires_grad=True), ember.ones(10)
    with context():
        start = time.process_time()
        for _ in range(5000):
            a + b
        return time.process_time() - start


def mlp_epoch_case():
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import bench_core
    from ember.datasets import load_digits
    bench_core.TIMER[0] = time.process_time
    digits = load_digits()
    x = np.asarray(digits.x_train, dtype=np.float32).reshape(len(digits.y_train), -1)
    y = np.asarray(digits.y_train, dtype=np.int64)

    def run(context):
        with context():
            return bench_core.mlp_epoch(ember, x, y, repeat=1)
    return run


def profiled():
    return ember.profiler.profile()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()
    cases = {"add_loop": add_loop, "mlp_epoch": mlp_epoch_case()}
    variants = {"shipped": contextlib.nullcontext, "hook_removed": hook_removed, "profiling": profiled}
    times = {(c, v): [] for c in cases for v in variants}
    order = list(variants.items())
    for r in range(args.repeat):
        for c, fn in cases.items():
            # Variants take turns in a rotating order, each after a full collection, so that
            # neither the garbage a profiled run leaves nor a position in the loop biases one.
            for v, context in order[r % 3:] + order[:r % 3]:
                gc.collect()
                times[c, v].append(fn(context))

    def paired(c, v, w):
        # The median of per-repeat ratios: neighbours' load drifts between repeats, not
        # within the few milliseconds that separate the runs of one repeat.
        return float(np.median(np.divide(times[c, v], times[c, w])))

    print(f"{'case':<12}{'shipped':>12}{'hook removed':>14}{'ratio':>8}{'profiling':>12}{'ratio':>8}")
    ratios = {}
    for c in cases:
        shipped, bare, prof = (min(times[c, v]) for v in variants)
        hook, profiling = paired(c, "shipped", "hook_removed"), paired(c, "profiling", "shipped")
        ratios[c] = {"shipped_over_hook_removed": round(hook, 4), "profiling_over_shipped": round(profiling, 3)}
        print(f"{c:<12}{shipped * 1e3:>10.2f}ms{bare * 1e3:>12.2f}ms{hook:>8.3f}{prof * 1e3:>10.2f}ms{profiling:>8.2f}")
    print(json.dumps({"benchmark": "profiler", "timer": "cpu", "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                      "ratios": ratios}))


if __name__ == "__main__":
    main()
