"""Open ranges and automatic dynamic shapes, with recompile counts checked against real torch:
``dynamic=None`` compiles a static graph, then one graph with the batch a symbol over [2, inf];
``dynamic=True`` one graph from the first call; ``dynamic=False`` a graph per shape up to
``recompile_limit``."""
import contextlib
import warnings

import numpy as np
import pytest
import torch

import ember

BATCHES = range(8, 101, 4)


def _counts(lib, dynamic, weight, bias):
    """Unique graphs of ``lib.compile`` over BATCHES, and the results next to eager ones."""
    lib.compiler.reset()
    counters = lib._dynamo.utils.counters
    counters.clear()
    w, b = lib.tensor(weight), lib.tensor(bias)

    def f(x):
        return (x @ w + b).relu().sum(1) * x.shape[0]
    kwargs = {"backend": "eager"} if lib is torch else {}
    compiled = lib.compile(f, dynamic=dynamic, **kwargs)
    pairs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dynamic=False: the recompile limit's warning
        for n in BATCHES:
            x = lib.tensor(np.random.default_rng(n).standard_normal((n, 4), dtype=np.float32))
            pairs.append((compiled(x).numpy(), f(x).numpy()))
    return counters["stats"]["unique_graphs"], pairs


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_batches_8_to_100_compile_as_many_graphs_as_torch(dynamic):
    rng = np.random.default_rng(0)
    weight, bias = rng.standard_normal((4, 3), dtype=np.float32), rng.standard_normal(3, dtype=np.float32)
    graphs, pairs = _counts(ember, dynamic, weight, bias)
    torch_graphs, torch_pairs = _counts(torch, dynamic, weight, bias)
    assert graphs == torch_graphs == {None: 2, True: 1, False: 8}[dynamic]
    for (got, want), (truth, _) in zip(pairs, torch_pairs):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, truth, rtol=1e-4, atol=1e-4)


def test_an_open_range_still_checks_each_new_size():
    """The graph fitted at small batches is not trusted where a branch on the size flips:
    the first call at 40 is recorded, differs and gets a graph of its own (torch guards the
    branch and recompiles too; ember's graph is for 40 alone, torch's for [34, inf])."""
    def f(x):
        return x * 2 if x.shape[0] <= 33 else x - 1
    graphs = []
    for lib, kwargs in ((ember, {}), (torch, {"backend": "eager"})):
        lib.compiler.reset()
        lib._dynamo.utils.counters.clear()
        compiled = lib.compile(f, dynamic=True, **kwargs)
        for n in (8, 9, 30, 40):
            x = lib.arange(n, dtype=lib.float32)
            np.testing.assert_array_equal(compiled(x).numpy(), f(x).numpy())
        graphs.append(lib._dynamo.utils.counters["stats"]["unique_graphs"])
    assert graphs == [2, 2]


def test_automatic_dynamic_shapes_off_compiles_a_graph_per_shape(monkeypatch):
    """``config.automatic_dynamic_shapes = False``: ``dynamic=None`` keeps static graphs (as
    torch's), while ``mark_dynamic`` still makes a dimension a symbol."""
    monkeypatch.setattr(ember._dynamo.config, "automatic_dynamic_shapes", False)
    graphs = []
    for lib, kwargs in ((ember, {}), (torch, {"backend": "eager"})):
        with lib._dynamo.config.patch(automatic_dynamic_shapes=False) if lib is torch else contextlib.nullcontext():
            graphs.append(_marked_later(lib, kwargs))
    assert graphs == [4, 4]


def _marked_later(lib, kwargs):
    """Unique graphs of three sizes, then three sizes marked dynamic."""
    lib.compiler.reset()
    lib._dynamo.utils.counters.clear()
    compiled = lib.compile(lambda x: x.sum(0) * 2, **kwargs)
    for n in (3, 4, 5):
        x = lib.ones(n, 2)
        np.testing.assert_array_equal(compiled(x).numpy(), np.full(2, 2.0 * n))
    for n in (6, 7, 8):
        x = lib.ones(n, 2)
        lib._dynamo.mark_dynamic(x, 0)
        np.testing.assert_array_equal(compiled(x).numpy(), np.full(2, 2.0 * n))
    return lib._dynamo.utils.counters["stats"]["unique_graphs"]
