"""Numbers a compiled function reads that torch 2.13 takes as symbols after one recompile where
ember made a graph per value (issue 10, session 31): a float argument beyond float32's range
(1e300), a float in the cell of a closure made per call of a factory, a float attribute of blocks
of one class compiled one by one. Graphs are counted against torch's ``CompileCounter``, values
against torch's eager results (by repr: -0.0 told from 0.0, nan equal to nan)."""
import math

import numpy as np

import torch
from torch._dynamo.testing import CompileCounter

from graph_counts import graph_counts

import ember
from ember._dynamo.utils import counters

HUGE = (0.5, 0.25, 1e300, 2.0, -1e300, 3.5e38, 1e39, math.inf, math.nan, -0.0)


def _mod(x):
    return torch if isinstance(x, torch.Tensor) else ember


def _products(x, lr):
    t = _mod(x)
    return t.cat([x * lr, (lr - x) / lr, x.half() * lr, x.double() * lr + lr, t.full((2,), lr, dtype=t.float64)])


def _checked(x, lr):
    # (a float32 fill, then a float64 one of the same float: eager's float32 fill raises beyond its range)
    t = _mod(x)
    return t.cat([t.full((2,), lr), t.full((2,), lr, dtype=t.float64).float(), x.clamp(max=lr)])


def test_a_float_beyond_float32s_range_is_on_the_graph():
    """``x * 1e300`` is inf in eager and in the graph's cast: no graph of its own (torch 2, ember
    was 3); where an op converts the float checked (``full`` of float32, ``clamp``), eager's
    RuntimeError, on the graph whatever else takes the float."""
    calls = [(v,) for v in HUGE]
    for fn in (_products, _checked):
        want_counts, want = graph_counts(fn, torch, calls)
        got_counts, got = graph_counts(fn, ember, calls)
        assert repr(got) == repr(want), fn.__name__
        # (torch 2.13 recompiles at nan: 3; ember's guard takes nan)
        assert got_counts[:8] == want_counts[:8] == [1, 2, 2, 2, 2, 2, 2, 2] and got_counts[-1] == 2, fn.__name__
    assert want[2][0] == "RuntimeError"


def _factory():
    """A closure over a float made per call, and a function setting its cell."""
    def make(lr):
        def step(x):
            return x * lr + 1

        def set_lr(v):
            nonlocal lr
            lr = v
        return step, set_lr
    return make


def _factory_run(module):
    """Graph count and values of closures made per value, then each called again after its cell changed."""
    if module is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        compile_, count = (lambda f: torch.compile(f, backend=counter)), lambda: counter.frame_count
    else:
        ember.compiler.reset()
        compile_, count = ember.compile, lambda: counters["stats"]["unique_graphs"]
    make, x, made, out = _factory(), module.arange(3.0), [], []
    for v in (0.5, 0.25, 3.0, -0.0, math.inf, 1e300, -7.5, 0.1):
        step, set_lr = make(v)
        made.append((compile_(step), set_lr))
        out.append(made[-1][0](x).tolist())
    for i, (step, set_lr) in enumerate(made):
        set_lr(i * 1.5 - 2)
        out.append(step(x).tolist())
    return count(), out


def test_a_closure_made_per_call_of_a_factory_shares_the_float_symbol():
    """A new function object of the code over another float: torch 2.13 takes the cell's float as a
    symbol after one recompile (2 graphs); ember recorded each function's first call (8). The
    floats read are the code's (``shared_cache.Family.reads``) and a float's value no longer keeps
    another function's graph from being rebound (``rebind.canonical``)."""
    want, got = _factory_run(torch), _factory_run(ember)
    assert repr(got) == repr(want) and got[0] == 2


def _blocks_run(module):
    """Graph count and values of six blocks of one class differing in a float attribute, each
    compiled on its own, called, then called again after one's float went past float32's range."""
    class Block(module.nn.Module):
        def __init__(self, scale):
            super().__init__()
            self.scale, self.lin = scale, module.nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x) * self.scale

    module.manual_seed(0)
    if module is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        backend, count = counter, lambda: counter.frame_count
    else:
        ember.compiler.reset()
        backend, count = "aot_eager", lambda: counters["stats"]["unique_graphs"]
    blocks = [Block(0.5 + i) for i in range(6)]
    for b in blocks:
        b.compile(backend=backend)
    x, out = module.ones(1, 2), []
    for turn in range(2):
        blocks[2].scale = 1e300 if turn else blocks[2].scale
        out += [b(x).tolist() for b in blocks]
    return count(), out


def test_blocks_of_one_class_share_their_float_attribute_symbol():
    """torch 2.13: 2 graphs (the float a symbol after one recompile, per code object); ember made
    one per block (7)."""
    (want_count, want), (got_count, got) = _blocks_run(torch), _blocks_run(ember)
    assert got_count == want_count == 2
    assert np.allclose(np.array(got), np.array(want), rtol=1e-6, atol=1e-7)
