"""Advanced indexing inside a compiled graph is C (backends/indexing.py), not NumPy: ``x[idx]``
with index arrays in any place (adjacent, apart, broadcast, negative, empty, on strided views),
its gradient (np.add.at: repeated entries add up), ``index_put`` (last write wins; with
``accumulate``, sums) and ``x[idx] = v``, and the embedding lookup. Values and gradients are
bit-equal to eager's (the sums run in eager's order); an entry out of range raises eager's
IndexError, with its message, from the compiled graph."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.compiler.backends import toolchain

pytestmark = [pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler"),
              pytest.mark.usefixtures("fresh_cache")]


def step(x, w, ids, i, j):
    """Each op reads its own input (x[k]), so each gradient is one op's (the values written are
    constants: a value read from x would add a second path to x's gradient, summed in another
    order by the compiled backward)."""
    y = x[12] * 1
    y[:, j] = 7.0
    return [x[0][i], x[1][:, i], x[2][:, i, j], x[3][i, :, j], x[4][..., j], x[5].transpose(0, 2)[1:, i[:2]],
            x[6][i.reshape(2, 2)], F.embedding(ids, w), F.embedding(ids.t(), w.t().contiguous().t()),
            x[7].index_put((i,), x[7].new_full((), 2.5)), x[8].index_put((i, j), x[8].new_full((1,), -1.5), accumulate=True),
            x[9][ember.tensor([-1, 0, -3])], x[10][i[:0]], x[11][i[None, :], j[:, None]], y]


def _inputs(dtype, i=(2, 0, 2, 1), j=(1, 3, 3, 0), ids=((1, 6, 1), (0, 2, 6))):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((13, 5, 4, 3)).astype(dtype).transpose(0, 3, 2, 1)  # strided [13, 3, 4, 5]
    x[:, 2, 1, 3], x[:, 0, 3, 4] = np.nan, np.inf
    return (ember.tensor(x, requires_grad=True), ember.tensor(rng.standard_normal((7, 3)).astype(dtype), requires_grad=True),
            ember.tensor(np.array(ids)), ember.tensor(np.array(i)), ember.tensor(np.array(j)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_index_kernels_are_c_and_equal_eager(dtype, monkeypatch, capfd):
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    rng = np.random.default_rng(1)
    ws = [ember.tensor(rng.standard_normal(o.shape).astype(dtype)) for o in step(*_inputs(dtype))]

    def run(fn):
        args = _inputs(dtype)
        outs = fn(*args)
        sum((o * w).sum() for o, w in zip(outs, ws)).backward()
        return outs, [args[0].grad, args[1].grad]

    expected, expected_grads = run(step)
    compiled = ember.compile(step, fullgraph=True)
    for _ in range(2):
        actual, grads = run(compiled)
    source = capfd.readouterr().err
    for op in ("index", "index_put", "embedding"):
        assert f"= F_{op}" not in source, op
    for what in ("Index [:, i, j] (indices broadcast to [4]) -> [3, 4]", "Index [i, :, j] (indices broadcast to [4]) -> [4, 4]",
                 "(indices broadcast to [4, 4]) -> [4, 4, 5]", "(indices broadcast to [0]) -> [0, 4, 5]",
                 "(indices broadcast to [2, 2]) -> [3, 4, 5]: index_backward",
                 "IndexPut [:, j, :] (indices broadcast to [4])", "embedding of [3, 2] ids in [7, 3] -> [3, 2, 3]"):
        assert what in source, what
    for k, (a, e) in enumerate(zip(actual + grads, expected + expected_grads)):
        a, e = a.detach().numpy(), e.detach().numpy()
        assert a.dtype == e.dtype and a.shape == e.shape, k
        np.testing.assert_array_equal(a, e, err_msg=str(k))


@pytest.mark.parametrize("shape", [(1, 1), (1,), (1, 3)])
def test_embedding_of_ids_read_before_the_loops_compiles(shape, recwarn):
    """Ids of one element per leading dim (a decoding step's [1, 1] token) are read before the
    loops open; their bounds check named the loops' counters, so the C failed to compile and
    the graph ran as generated Python (the GPT decode row of bench_compile did)."""
    w = ember.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    ids = ember.tensor(np.full(shape, 2))
    compiled = ember.compile(lambda ids: F.embedding(ids, w) * 2, fullgraph=True)
    for _ in range(2):
        out = compiled(ids)
    np.testing.assert_array_equal(out.numpy(), (F.embedding(ids, w) * 2).numpy())
    assert not [str(r.message) for r in recwarn if "failed" in str(r.message)]
    with pytest.raises(IndexError, match="id 4 at position"):
        compiled(ember.tensor(np.full(shape, 4)))


@pytest.mark.parametrize("bad, message", [
    ({"i": (0, 3, 1, 1)}, "index 3 is out of bounds for dimension 0 with size 3"),
    ({"j": (1, 3, -6, 0)}, "index -6 is out of bounds for dimension 2 with size 5"),
    ({"ids": ((1, 7, 1), (0, -1, 6))}, "index out of range in self: id 7 at position (0, 1) is not in [0, 7) (num_embeddings=7)"),
    ({"ids": ((1, 0, 1), (0, -1, 6))}, "id -1 at position (1, 1)"),
])
def test_index_out_of_range_raises_eagers_error(bad, message):
    def lookup(x, w, ids, i, j):
        return x[0][i] * 2, x[0][:, :, j] + 1, F.embedding(ids, w) * 3
    compiled = ember.compile(lookup, fullgraph=True)
    for _ in range(2):
        compiled(*_inputs(np.float32))
    for fn in (lookup, compiled):
        with pytest.raises(IndexError) as caught:
            fn(*_inputs(np.float32, **bad))
        assert message in str(caught.value)


@pytest.mark.parametrize("shape", [(1, 1), (1,), (3, 1)])
def test_embedding_of_one_id_per_row_compiles_to_c(shape, monkeypatch, tmp_path):
    """A decoding step's lookup of [1, 1] ids (the id read once, before the loops): the kernel
    compiles (its error position named loops not yet open, and the graph ran as generated
    Python after a C compile failure) and raises eager's IndexError for a bad id."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    w = ember.tensor(np.random.default_rng(1).standard_normal((7, 4)).astype(np.float32))
    good, bad = np.full(shape, 3), np.full(shape, 9)
    compiled = ember.compile(lambda ids: F.embedding(ids, w) * 3, fullgraph=True)
    try:
        with warnings.catch_warnings(record=True) as caught_warnings:
            warnings.simplefilter("always")
            out = compiled(ember.tensor(good))
        assert not [m for m in caught_warnings if "compiling the generated C failed" in str(m.message)]
        np.testing.assert_array_equal(out.numpy(), (F.embedding(ember.tensor(good), w) * 3).numpy())
        with pytest.raises(IndexError) as expected:
            F.embedding(ember.tensor(bad), w)
        with pytest.raises(IndexError) as caught:
            compiled(ember.tensor(bad))
        assert str(caught.value) == str(expected.value)
    finally:
        ember.compiler.reset()
