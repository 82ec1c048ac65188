"""Numbers a compiled function reads that torch 2.13 takes as symbols after one recompile where
ember made a graph per value (issue 10, session 31): a float argument beyond float32's range
(1e300). Graphs are counted against torch's ``CompileCounter`` call by call (graph_counts.py),
values against torch's eager results, compared by repr (-0.0 told from 0.0, nan equal to nan)."""
import math

import torch

from graph_counts import graph_counts

import ember

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
