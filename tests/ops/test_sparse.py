"""Sparse COO tensors vs torch 2.13: construction, printing, the operations PyTorch's sparse
backend has (with its result layouts), gradients through values and to_dense/to_sparse, and
PyTorch's errors for the rest."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", "Sparse invariant checks")


def both(build):
    """``build(lib)`` under torch and under ember."""
    return build(torch), build(ember)


def assert_same(t, e):
    assert e.layout is (ember.sparse_coo if t.layout is torch.sparse_coo else ember.strided)
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    if t.layout is torch.sparse_coo:
        t, e = t.coalesce(), e.coalesce()
        np.testing.assert_array_equal(e.indices().numpy(), t.indices().numpy())
        t, e = t.values(), e.values()
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)


def random_sparse(lib, shape=(5, 4), density=0.4, seed=0, requires_grad=False):
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal(shape) * (rng.random(shape) < density)
    return lib.tensor(dense, dtype=lib.float64, requires_grad=requires_grad)


@pytest.mark.parametrize("build", [
    lambda L: L.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3, 4, 5], (2, 3)),
    lambda L: L.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], L.tensor([3., 4, 5], dtype=L.float64),
                                  (2, 3), requires_grad=True),
    lambda L: L.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], L.tensor([3., 4, 5], dtype=L.float64)) * 2,
    lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (2, 3)),
    lambda L: L.tensor([[0., 2], [3, 0]], requires_grad=True).to_sparse(),
    lambda L: L.tensor([[0., 2], [3, 0]]).to_sparse().sum(0),
    lambda L: L.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1., 2, 3], (2, 2)).coalesce(),
])
def test_printed_form_equals_torchs(build):
    t, e = both(build)
    assert repr(e) == repr(t)


@pytest.mark.parametrize("build", [
    lambda L: random_sparse(L).to_sparse(),
    lambda L: random_sparse(L).to_sparse().to_dense(),
    lambda L: L.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1., 2, 3], (2, 2)).to_dense(),  # duplicates sum
    lambda L: L.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1., 2, 3], (2, 2)).coalesce(),
    lambda L: L.sparse_coo_tensor([[0, 2], [1, 0]], [1, 2]),  # size from the largest index
    lambda L: L.sparse_coo_tensor(np.array([[0, 2], [1, 0]], np.int32), L.ones(2), (3, 2), dtype=L.int64),
    lambda L: L.eye(3, 2) + L.sparse_coo_tensor([[0, 2], [1, 0]], [1, 2], (3, 2)),  # float + int64
    lambda L: random_sparse(L).to_sparse() + random_sparse(L, seed=1).to_sparse(),
    lambda L: random_sparse(L).to_sparse() * 2.5,
    lambda L: random_sparse(L).to_sparse() - random_sparse(L, seed=1).to_sparse(),
    lambda L: random_sparse(L, seed=1) - random_sparse(L).to_sparse(),
    lambda L: random_sparse(L).to_sparse() * random_sparse(L, seed=1),
    lambda L: -random_sparse(L).to_sparse() / 4,
    lambda L: random_sparse(L).to_sparse().t(),
    lambda L: random_sparse(L).to_sparse().float(),
    lambda L: random_sparse(L).to_sparse().sum(),
    lambda L: random_sparse(L).to_sparse().sum(1),
    lambda L: random_sparse(L, (3, 4, 2)).to_sparse().sum((0, 2)),
    lambda L: L.mm(random_sparse(L).to_sparse(), random_sparse(L, (4, 3), 1.0, 2)),
    lambda L: L.spmm(random_sparse(L).to_sparse(), random_sparse(L, (4, 3), 1.0, 2)),
    lambda L: random_sparse(L).to_sparse() @ random_sparse(L, (4,), 1.0, 2),
    lambda L: random_sparse(L, (3, 5), 1.0, 2) @ random_sparse(L).to_sparse(),
    lambda L: L.mv(random_sparse(L).to_sparse(), random_sparse(L, (4,), 1.0, 2)),
    lambda L: random_sparse(L, (0, 4)).to_sparse(),
    lambda L: L.sparse.mm(random_sparse(L).to_sparse(), random_sparse(L, (4, 3), 1.0, 2)),
    lambda L: L.sparse.addmm(random_sparse(L, (5, 3), 1.0, 3), random_sparse(L).to_sparse(),
                             random_sparse(L, (4, 3), 1.0, 2), beta=0.5, alpha=2.0),
    lambda L: L.sparse.sum(random_sparse(L).to_sparse()),
    lambda L: L.sparse.sum(random_sparse(L).to_sparse(), 0),
    lambda L: L.sparse.sum(random_sparse(L, (3, 4, 2)).to_sparse(), (0, 2)),
    lambda L: L.sparse.sum(random_sparse(L).to_sparse(), dtype=L.float32),
])
def test_operations_equal_torchs_with_its_layouts(build):
    assert_same(*both(build))


@pytest.mark.parametrize("name", ["abs", "sqrt", "sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh",
                                  "expm1", "log1p", "floor", "ceil", "trunc", "deg2rad", "rad2deg", "signbit",
                                  "isnan", "isinf", "neg", "frac"])
def test_zero_preserving_functions_stay_sparse(name):
    """torch's sparse backend applies these to the values (f(0) = 0): sparse results, the
    same values (float32 ulps aside)."""
    t, e = both(lambda L: getattr(L, name)(L.sparse_coo_tensor([[0, 1, 1], [1, 0, 2]], [0.25, -0.5, 0.75], (2, 3))))
    assert_same(t, e)


def grad_of(build, shape=(5, 4)):
    def run(L):
        x = random_sparse(L, shape, requires_grad=True)
        build(L, x).sum().backward()
        return x.grad
    return run


@pytest.mark.parametrize("build", [
    lambda L, x: (L.ones(5, 4) * 3 + x.to_sparse()) * random_sparse(L, seed=1),  # unmasked
    lambda L, x: (x.to_sparse() * 2).to_dense() * random_sparse(L, seed=1, density=1),  # masked
    lambda L, x: (x.to_sparse() * random_sparse(L, seed=1, density=1)).to_dense(),
    lambda L, x: x.to_sparse().sum(),
    lambda L, x: x.to_sparse().t() @ random_sparse(L, (5, 3), 1.0, 2),
    lambda L, x: random_sparse(L, (3, 5), 1.0, 2) @ x.to_sparse(),
    lambda L, x: (x.to_sparse() + x.to_sparse()).to_dense() * random_sparse(L, seed=3, density=1),
    lambda L, x: x.to_sparse().values() * L.arange(1., 1 + int((x != 0).sum()), dtype=L.float64),
    lambda L, x: L.mm(x.to_sparse(), random_sparse(L, (4, 3), 1.0, 2)) ** 2,
    lambda L, x: x.to_sparse().coalesce().to_dense() ** 2,
    lambda L, x: L.sparse.mm(x.to_sparse(), random_sparse(L, (4, 3), 1.0, 2)) ** 2,
    lambda L, x: L.sparse.sum(x.to_sparse()) * 3,
])
def test_gradients_equal_torchs(build):
    assert_same(*both(grad_of(build)))


def test_gradient_reaches_the_values_of_sparse_coo_tensor():
    def run(L):
        values = L.tensor([1., 2, 3, 4], dtype=L.float64, requires_grad=True)
        s = L.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], values, (2, 3))  # one duplicate
        out = L.spmm(s, L.arange(6., dtype=L.float64).view(3, 2))
        (out ** 2).sum().backward()
        return values.grad, type(s.grad_fn).__name__, type(out.grad_fn).__name__
    (tg, tname, tout), (eg, ename, eout) = both(run)
    np.testing.assert_allclose(eg.numpy(), tg.numpy())
    assert (ename, eout) == (tname, tout)


def test_accessors_and_flags():
    def run(L):
        s = L.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1., 2, 3], (2, 2))
        c = s.coalesce()
        return (s.is_sparse, s.is_coalesced(), c.is_coalesced(), s._nnz(), c._nnz(), s.sparse_dim(),
                s.dense_dim(), s.numel(), s.dim(), tuple(s.shape), s._indices().tolist(),
                s._values().tolist(), c.indices().tolist(), c.values().tolist(), repr(s.layout),
                L.ones(2).is_sparse, repr(L.ones(2).layout), repr(L.strided), c.coalesce() is c)
    t, e = both(run)
    assert e == t


@pytest.mark.parametrize("build", [
    lambda L: random_sparse(L).to_sparse() + random_sparse(L),        # add(sparse, dense)
    lambda L: L.exp(random_sparse(L).to_sparse()),
    lambda L: L.sparse_coo_tensor([[0, 0], [1, 1]], [1., 2], (2, 2)).indices(),
    lambda L: L.sparse_coo_tensor([[0, 0], [1, 1]], [1., 2], (2, 2)).values(),
    lambda L: L.ones(2).indices(),
    lambda L: L.ones(2).coalesce(),
    lambda L: L.ones(2).is_coalesced(),
    lambda L: L.ones(2)._nnz(),
    lambda L: L.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3, 4, 5], (2, 2), check_invariants=True),
    lambda L: L.sparse_coo_tensor([[0, -1], [2, 0]], [3, 4], (2, 3), check_invariants=True),
    lambda L: L.sparse_coo_tensor([0, 1, 1], [3, 4, 5]),
    lambda L: L.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3, 4]),
    lambda L: L.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3, 4, 5], (2, 3, 4)),
])
def test_errors_are_torchs(build):
    with pytest.raises(Exception) as t:
        build(torch)
    with pytest.raises(Exception) as e:
        build(ember)
    assert isinstance(e.value, type(t.value)), (e.value, t.value)
    first = str(t.value).split(".")[0].split(" This")[0]
    assert str(e.value).startswith(first), (str(e.value), str(t.value))


def test_creation_functions_take_size_by_keyword():
    for name in ("zeros", "ones", "empty", "rand", "randn"):
        assert tuple(getattr(ember, name)(size=(2, 3)).shape) == (2, 3)
    with pytest.raises(TypeError):
        ember.zeros(2, size=(2, 3))


@pytest.mark.parametrize("build", [
    lambda L, s: s == s, lambda L, s: s > 0, lambda L, s: L.equal(s, s), lambda L, s: L.ones(2) + s,
])
def test_no_silent_answers_where_torch_refuses(build):
    """Comparisons and a broadcasting dense + sparse raised nothing (s == s was False)."""
    for L in (torch, ember):
        with pytest.raises((NotImplementedError, RuntimeError)):
            build(L, L.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse())
    with pytest.raises(TypeError):
        ember.tensor([[0.0, 1.0]]).to_sparse().numpy()


def test_compiled_function_with_a_sparse_argument_runs_eagerly():
    s, d = ember.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(), ember.ones(2, 2)
    f = ember.compile(lambda s, d: s @ d + 1)
    assert [f(s, d).tolist() for _ in range(3)] == [[[2.0, 2.0], [3.0, 3.0]]] * 3


def test_saved_and_loaded_in_torchs_format_both_ways():
    """ember.save writes a sparse tensor as torch does (torch.load with weights_only reads it),
    ember.load reads torch's; an index out of range in a file is refused, not trusted."""
    import io
    s = ember.sparse_coo_tensor([[0, 1, 1], [1, 0, 2]], [1.0, 2.0, 3.0], (2, 3))
    buffer = io.BytesIO()
    ember.save({"s": s, "c": s.coalesce(), "d": ember.ones(2)}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded["s"].layout is torch.sparse_coo and not loaded["s"].is_coalesced() and loaded["c"].is_coalesced()
    np.testing.assert_array_equal(loaded["s"].to_dense().numpy(), s.to_dense().numpy())
    buffer.seek(0)
    again = ember.load(buffer)
    assert again["s"].is_sparse and again["c"].is_coalesced()
    np.testing.assert_array_equal(again["s"].to_dense().numpy(), s.to_dense().numpy())
    theirs = io.BytesIO()
    torch.save([torch.sparse_coo_tensor([[0, 2], [1, 0]], [5.0, 6.0], (3, 2)).coalesce()], theirs)
    theirs.seek(0)
    (ours,) = ember.load(theirs)
    assert_same(torch.sparse_coo_tensor([[0, 2], [1, 0]], [5.0, 6.0], (3, 2)), ours)
    bad = io.BytesIO()
    torch.save(torch.sparse_coo_tensor([[0, 7]], [5.0, 6.0], (3,), check_invariants=False), bad)
    bad.seek(0)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        ember.load(bad)


@pytest.mark.parametrize("build", [
    lambda L: L.zeros_like(L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))),
    lambda L: L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)).new_zeros(3),
    lambda L: L.zeros(2, 3, layout=L.sparse_coo),
    lambda L: L.empty(4, layout=L.sparse_coo, dtype=L.float64),
    lambda L: L.tensor(3.0).to_sparse(),
    lambda L: L.tensor(0.0).to_sparse(),
])
def test_sparse_factories_and_0d_to_sparse_as_torch(build):
    t, e = both(build)
    assert repr(e) == repr(t)


@pytest.mark.parametrize("build", [
    lambda L: L.ones_like(L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))),
    lambda L: L.ones(2, 3, layout=L.sparse_coo),
    lambda L: L.full((2,), 1.0, layout=L.sparse_coo),
    lambda L: L.zeros(2, layout="strided"),
])
def test_sparse_factories_refuse_as_torch(build):
    with pytest.raises(Exception) as t:
        build(torch)
    with pytest.raises(Exception) as e:
        build(ember)
    assert isinstance(e.value, type(t.value))
    assert str(e.value).split(" backend")[0] == str(t.value).split(" backend")[0].replace("fill_.Scalar", "fill_")
