"""``cat`` and ``stack`` in the C backend at symbolic sizes: each operand copied into its slice
of the result, sizes, offsets and trip counts read at run time, so one build runs every size;
and the backward of ``split`` / ``unbind`` (one cat of the views' gradients, zeros for unused
views) stays in C in a dynamic graph. Compared with eager ember at each size."""
import numpy as np
import pytest

import ember
from ember._dynamo import mark_dynamic
from ember._dynamo.utils import counters
from ember.compiler.backends import toolchain

pytestmark = [pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler"),
              pytest.mark.usefixtures("fresh_compiler")]


def _joins(x, y):
    return ember.cat([x, y.sin()], dim=1), ember.stack([x, y * 2], dim=-1), ember.cat([y, x, y], dim=0)


def test_cat_and_stack_at_symbolic_sizes_run_in_c(c_builds, plans):
    compiled = ember.compile(_joins)
    rng = np.random.default_rng(0)
    for b, t in [(2, 3), (3, 5), (5, 2), (4, 7)]:
        x, y = (ember.tensor(rng.standard_normal((b, t)).astype(np.float32)) for _ in range(2))
        for a in (x, y):
            mark_dynamic(a, 0)
            mark_dynamic(a, 1)
        for got, want in zip(compiled(x, y), _joins(x, y)):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 1
    assert plans.numpy_nodes() == []
    source = c_builds[0].c_source
    assert "/* cat of 2 along dim 1 -> [em_S0, (2 * em_S1)]" in source  # the offset of y's slice is em_S1
    assert "/* stack of 2 along dim 2 -> [em_S0, em_S1, 2]" in source
    assert "/* cat of 3 along dim 0 -> [(3 * em_S0), em_S1]" in source


def _loss(x, w):
    a, _, c = (x @ w).split([2, 3, 1], dim=1)  # the middle piece unused: zeros in the gradient
    rows = x.unbind(-1)
    pairs = ember.stack([rows[1], rows[3] * 2], -1)  # its gradient's unbind: views, in C
    return (a * a).sum() + c.exp().sum() + (rows[0] * rows[2]).sum() + (pairs * a).sum()


def test_split_and_unbind_backward_in_a_dynamic_graph_run_in_c(c_builds, plans):
    compiled = ember.compile(_loss)
    rng = np.random.default_rng(1)
    w_data = rng.standard_normal((4, 6)).astype(np.float32)
    for b in (2, 5, 3, 8):
        data = rng.standard_normal((b, 4)).astype(np.float32)
        grads = []
        for fn in (compiled, _loss):
            x, w = ember.tensor(data, requires_grad=True), ember.tensor(w_data, requires_grad=True)
            mark_dynamic(x, 0)
            fn(x, w).backward()
            grads.append((x.grad.numpy(), w.grad.numpy()))
        for got, want in zip(*grads):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 2  # forward and backward
    assert plans.numpy_nodes() == []
    assert "/* stack of 2 along dim 1 -> [em_S0, 2]" in c_builds[0].c_source
    backward = c_builds[1].c_source
    assert "/* cat of 3 along dim 1 -> [em_S0, 6]" in backward  # the pieces' gradients
    assert "/* stack of 4 along dim 1 -> [em_S0, 4]" in backward  # the rows' (one stack)
