"""A sparse COO tensor a compiled function reads from its closure breaks the graph, as torch's
dynamo does ("Attempted to wrap sparse Tensor: torch.compile does not support sparse Tensors"):
the statement reading it runs eagerly, the others are compiled, and every call gives eager's
values. Before, the function failed: on its first call (``sparse.mm``: the capture copied the
sparse array as a constant) or on its second (``(S * 2).to_dense()``: the C driver read the
sparse array's ``.flags``); with dynamic shapes, on the first (the probes' snapshot read it)."""
import numpy as np
import pytest
import torch

import ember
from ember._dynamo.exc import Unsupported
from ember._dynamo.utils import counters

pytestmark = [pytest.mark.usefixtures("fresh_compiler"), pytest.mark.filterwarnings("ignore:Sparse invariant checks")]

INDICES, VALUES = [[0, 1, 2, 2], [2, 0, 1, 2]], [1.0, 2.0, 3.0, -4.0]


def _functions(lib):
    S = lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES), (3, 3))

    def product(x):
        y = x * 2 + 1
        z = lib.sparse.mm(S, y)
        return z.relu() * 3

    def densified(x):
        return (S * 2).to_dense() @ x + 1

    def matmul(x):
        return (S @ x).tanh()

    def returned(x):
        return S * 2, x + 1
    return product, densified, matmul, returned


def _dense(t):
    return (t.to_dense() if t.is_sparse else t).detach().numpy()


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("which", range(4))
def test_a_sparse_tensor_from_the_closure_breaks_the_graph_and_every_call_is_right(which, dynamic):
    f, oracle = _functions(ember)[which], _functions(torch)[which]
    compiled = ember.compile(f, dynamic=dynamic)
    rng = np.random.default_rng(which)
    for call, n in enumerate((2, 2, 3, 4)):
        data = rng.standard_normal((3, n)).astype(np.float32)
        got, want = compiled(ember.tensor(data)), oracle(torch.tensor(data))
        eager = f(ember.tensor(data))
        for g, w, e in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want, eager))):
            assert g.is_sparse == w.is_sparse == e.is_sparse
            np.testing.assert_allclose(_dense(g), _dense(w), rtol=1e-6, atol=1e-6, err_msg=f"call {call}")
            np.testing.assert_array_equal(_dense(g), _dense(e), err_msg=f"call {call}")
    assert any("Attempted to wrap sparse Tensor" in reason for reason in counters["graph_break"])


def test_the_dense_statements_around_the_sparse_one_are_compiled_and_fullgraph_refuses():
    product = _functions(ember)[0]
    compiled = ember.compile(product)
    for _ in range(3):
        x = ember.randn(3, 2)
        np.testing.assert_array_equal(compiled(x).numpy(), product(x).numpy())
    assert compiled._split is not None and counters["stats"]["unique_graphs"] == 2  # before, after
    with pytest.raises(Unsupported, match="Attempted to wrap sparse Tensor"):  # torch's class and words
        ember.compile(product, fullgraph=True)(ember.randn(3, 2))
