"""Creation ops against torch: ``tensor`` dtype inference, filled tensors, ranges, ``eye``; random
ops by shape, dtype and range (ember's streams are not torch's), and seed reproducibility."""
import collections

import numpy as np
import pytest
import torch

import ember
from harness import Case, I, R, check, compare, params

N = (None,)


def _scalars(L):
    return [L.tensor(x) for x in (1, 2.5, True, -0.0, 10 ** 12)]


CASES = [
    Case("tensor-scalars", _scalars, dtypes=N),
    Case("tensor-lists", lambda L: [L.tensor([1, 2]), L.tensor([1.0, 2]), L.tensor([True, False]),
                                    L.tensor([True, 2]), L.tensor([[1, 2], [3, 4]]), L.tensor([[]]),
                                    L.tensor([]), L.tensor([[1.5], [2]]), L.tensor(((1, 2), (3, 4)))], dtypes=N),
    Case("tensor-numpy", lambda L: [L.tensor(np.arange(3, dtype=d)) for d in
                                    ("float64", "float32", "float16", "int32", "int16", "int8", "uint8", "bool")],
         dtypes=N),
    Case("tensor-numpy-scalars", lambda L: [L.tensor(np.float64(1.5)), L.tensor(np.int32(3)), L.tensor(np.bool_(True)),
                                            L.tensor(np.float32(2.0))], dtypes=N),
    Case("tensor-numpy-in-list", lambda L: [L.tensor([np.float64(1.5), 2.0]), L.tensor([np.int32(1), 2])], dtypes=N),
    Case("tensor-0d-tensors", lambda L: [L.tensor([L.tensor(1.0), L.tensor(2.0)]), L.tensor([L.tensor(1), L.tensor(2)]),
                                         L.tensor([L.tensor(1, dtype=L.int32), 3]),
                                         L.tensor([[L.tensor(1.5)], [L.tensor(2.5)]])], dtypes=N),
    Case("tensor-from-tensor", lambda L, x: L.tensor(x), R(2, 3), grad=False),
    Case("tensor-dtype", lambda L: [L.tensor([1, 2], dtype=L.float64), L.tensor([1.7, -1.7], dtype=L.int64),
                                    L.tensor(3, dtype=L.bool), L.tensor([0.5], dtype=L.float16)], dtypes=N),
    Case("tensor-requires-grad", lambda L: L.tensor([1.0, 2.0], requires_grad=True).requires_grad, dtypes=N),
    Case("tensor-requires-grad-int", lambda L: L.tensor([1, 2], requires_grad=True), dtypes=N),
    Case("tensor-ragged", lambda L: L.tensor([[1, 2], [3]]), dtypes=N),
    Case("tensor-string", lambda L: L.tensor("abc"), dtypes=N),
    Case("tensor-nd-tensors-list", lambda L: L.tensor([L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])]), dtypes=N),
    Case("as_tensor", lambda L: [L.as_tensor([1, 2]), L.as_tensor(np.ones(2, np.float64)),
                                 L.as_tensor([1, 2], dtype=L.float32)], dtypes=N),
    Case("from_numpy", lambda L: [L.from_numpy(np.arange(4).reshape(2, 2)), L.from_numpy(np.ones(3, np.float32))],
         dtypes=N),
    Case("zeros-ones-empty-shapes", lambda L: [f(*s).shape for f in (L.zeros, L.ones, L.empty)
                                               for s in ((2, 3), ((2, 3),), ([2, 3],), ((),), (0,))], dtypes=N),
    Case("zeros-no-size", lambda L: L.zeros(), dtypes=N),
    Case("zeros-ones", lambda L: [L.zeros(2, 3), L.ones((2,)), L.zeros(2, dtype=L.int64), L.ones(3, dtype=L.bool),
                                  L.zeros([]), L.ones(0, 2, dtype=L.float64)], dtypes=N),
    Case("empty-dtype", lambda L: [L.empty(2, 3).dtype, L.empty(2, dtype=L.int32).dtype, L.empty(0).shape], dtypes=N),
    Case("full", lambda L: [L.full((2, 3), 1.5), L.full((2,), 7), L.full((2,), True), L.full((), -1),
                            L.full([2], 2, dtype=L.float64), L.full((1,), float("inf"))], dtypes=N),
    Case("negative-size", lambda L: L.zeros(2, -1), dtypes=N),
    Case("like", lambda L, x: [L.zeros_like(x), L.ones_like(x), L.full_like(x, 3), L.zeros_like(x, dtype=L.int64),
                               L.empty_like(x).shape, L.ones_like(x).requires_grad], R(2, 3), grad=False),
    Case("like-int", lambda L, x: [L.zeros_like(x), L.ones_like(x), L.full_like(x, 2.7)], I(2, 3), dtypes=N),
    Case("new-methods", lambda L, x: [x.new_zeros(2), x.new_ones((1, 2)), x.new_full((2,), 3), x.new_tensor([1, 2]),
                                      x.new_empty(3).shape], R(2), grad=False),
    Case("arange", lambda L: [L.arange(5), L.arange(1, 5), L.arange(1, 10, 3), L.arange(5, 0, -1),
                              L.arange(-3, 3, 2), L.arange(0)], dtypes=N),
    Case("arange-float", lambda L: [L.arange(0, 1, 0.1), L.arange(0.5, 3), L.arange(1, 0, -0.25), L.arange(0, 1, 0.3),
                                    L.arange(2.5), L.arange(0, 10, 2.5)], dtypes=N),
    Case("arange-dtype", lambda L: [L.arange(5, dtype=L.float64), L.arange(0, 2, 0.5, dtype=L.float64),
                                    L.arange(4, dtype=L.int32), L.arange(0.0, 3.0, dtype=L.int64)], dtypes=N),
    Case("arange-tensor-bounds", lambda L: L.arange(L.tensor(3)), dtypes=N),
    Case("arange-bad-sign", lambda L: L.arange(0, 5, -1), dtypes=N),
    Case("arange-zero-step", lambda L: L.arange(0, 5, 0), dtypes=N),
    Case("linspace", lambda L: [L.linspace(0, 1, 5), L.linspace(-1, 1, 1), L.linspace(0, 10, 0),
                                L.linspace(3, -3, 4, dtype=L.float64), L.linspace(0, 10, 6, dtype=L.int64),
                                L.linspace(L.tensor(0.0), L.tensor(2.0), 3)], dtypes=N),
    Case("linspace-negative-steps", lambda L: L.linspace(0, 1, -1), dtypes=N),
    Case("logspace", lambda L: [L.logspace(0, 2, 3), L.logspace(0, 3, 4, base=2)], dtypes=N),
    Case("eye", lambda L: [L.eye(3), L.eye(2, 4), L.eye(3, 1, dtype=L.int64), L.eye(0), L.eye(2, dtype=L.bool)],
         dtypes=N),
    Case("scalar_tensor", lambda L: [L.scalar_tensor(3), L.scalar_tensor(1.5, dtype=L.float64)], dtypes=N),
]


@pytest.mark.parametrize("case,dtype", params(CASES))
def test_creation(case, dtype):
    check(case, dtype)


def test_default_dtype_float64():
    for lib in (ember, torch):
        lib.set_default_dtype(lib.float64)
    try:
        compare([ember.tensor(1.5), ember.zeros(2), ember.arange(0.0, 2.0), ember.rand(2).dtype, ember.tensor([1, 2]),
                 ember.tensor([1, 2]) / 2, ember.tensor(2) * 1.5, ember.linspace(0, 1, 3), ember.full((1,), 2.0),
                 ember.eye(2), ember.tensor(np.float32(1.0)), ember.get_default_dtype()],
                [torch.tensor(1.5), torch.zeros(2), torch.arange(0.0, 2.0), torch.rand(2).dtype, torch.tensor([1, 2]),
                 torch.tensor([1, 2]) / 2, torch.tensor(2) * 1.5, torch.linspace(0, 1, 3), torch.full((1,), 2.0),
                 torch.eye(2), torch.tensor(np.float32(1.0)), torch.get_default_dtype()])
        assert repr(ember.tensor([1.5])) == "tensor([1.5000])"
        assert repr(ember.tensor([1.5], dtype=ember.float32)) == "tensor([1.5000], dtype=torch.float32)"
    finally:
        for lib in (ember, torch):
            lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("bad", [ember.int64, ember.bool, "float64"])
def test_set_default_dtype_rejects(bad):
    with pytest.raises(TypeError):
        ember.set_default_dtype(bad)


def _random_draws(L, g=None):
    kw = {} if g is None else {"generator": g}
    return [L.rand(2, 3, **kw), L.randn(4, **kw), L.randint(3, 7, (5,), **kw), L.randint(4, (2, 2), **kw),
            L.randperm(6, **kw), L.multinomial(L.tensor([0.1, 0.0, 0.9, 0.5]), 3, **kw),
            L.multinomial(L.tensor([[1.0, 2.0], [3.0, 0.0]]), 4, replacement=True, **kw),
            L.bernoulli(L.full((3, 2), 0.5), **kw), L.normal(L.zeros(3), L.ones(3), **kw),
            L.normal(2.0, 0.5, (2, 2), **kw), L.rand(2, dtype=L.float64, **kw), L.randint(0, 2, (3,), dtype=L.int32, **kw),
            L.randperm(3, dtype=L.float32, **kw)]


def test_random_shapes_and_dtypes():
    e, t = _random_draws(ember), _random_draws(torch)
    for a, b in zip(e, t):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype)[6:] == str(b.dtype)[6:], (a, b)
    rand, randn, ri, ri2, perm, multi, multi_r, bern, norm, norm2 = [np.asarray(x._data) for x in e[:10]]
    assert ((rand >= 0) & (rand < 1)).all()
    assert ((ri >= 3) & (ri < 7)).all() and ((ri2 >= 0) & (ri2 < 4)).all()
    assert sorted(perm.tolist()) == list(range(6))
    assert len(set(multi.tolist())) == 3 and 1 not in multi.tolist()
    assert ((multi_r >= 0) & (multi_r < 2)).all() and (multi_r[1] == 0).all()
    assert set(np.unique(bern).tolist()) <= {0.0, 1.0}
    # Without replacement, zero-weight categories are drawn once the others run out (as in torch).
    assert ember.multinomial(ember.tensor([1.0, 0.0]), 2).tolist() == [0, 1]
    for lib in (ember, torch):
        x = lib.rand(2, 3)
        assert lib.rand_like(x).shape == x.shape and lib.randn_like(x).dtype == x.dtype
        assert lib.randint_like(x, 5).dtype == x.dtype


def test_random_statistics():
    ember.manual_seed(0)
    assert abs(ember.randn(20000).mean().item()) < 0.05
    assert abs(ember.randn(20000).std().item() - 1) < 0.05
    assert abs(ember.rand(20000).mean().item() - 0.5) < 0.02
    assert abs(ember.normal(3.0, 2.0, (20000,)).std().item() - 2) < 0.1
    assert abs(ember.bernoulli(ember.full((20000,), 0.3)).mean().item() - 0.3) < 0.02
    counts = np.bincount(ember.multinomial(ember.tensor([1.0, 3.0]), 20000, replacement=True)._data, minlength=2)
    assert abs(counts[1] / 20000 - 0.75) < 0.02


def test_manual_seed_reproducible():
    ember.manual_seed(123)
    first = _random_draws(ember)
    ember.manual_seed(123)
    second = _random_draws(ember)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a._data, b._data)
    g1, g2 = ember.Generator().manual_seed(5), ember.Generator().manual_seed(5)
    for a, b in zip(_random_draws(ember, g1), _random_draws(ember, g2)):
        np.testing.assert_array_equal(a._data, b._data)
    ember.manual_seed(1)
    a = ember.rand(5)
    ember.manual_seed(2)
    assert not np.array_equal(ember.rand(5)._data, a._data)


@pytest.mark.parametrize("call", [
    lambda L: L.rand(2, dtype=L.int64), lambda L: L.randn(2, dtype=L.int64), lambda L: L.randint(5, 5, (2,)),
    lambda L: L.multinomial(L.tensor([1.0, 0.0]), 3), lambda L: L.multinomial(L.tensor([-1.0, 2.0]), 1),
    lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1), lambda L: L.bernoulli(L.tensor([1.5])),
    lambda L: L.normal(L.zeros(2), -L.ones(2)),
], ids=["rand-int", "randn-int", "randint-empty-range", "multinomial-too-many", "multinomial-negative",
        "multinomial-zero-row", "bernoulli-p", "normal-negative-std"])
def test_random_errors(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type):
        call(ember)


def test_tensor_reads_any_python_sequence():
    for data in (collections.deque([1.0, 2.5]), range(4), collections.deque([1, 2])):
        e, t = ember.tensor(data), torch.tensor(data)
        assert e.tolist() == t.tolist() and str(e.dtype) == str(t.dtype)


def test_linspace_values_are_torchs_bit_for_bit():
    # torch computes start + step * i for the first half and end - step * (steps - 1 - i) for
    # the rest, each a multiply-add rounded once, in the result's type (the step in float64
    # for integers): the correctly rounded values NumPy gives differ in the last bit, and
    # affine_grid's identity grid with them (a spatial transformer's first step).
    for steps in list(range(0, 70)) + [100, 257, 1000, 2049]:
        for start, end in ((-1, 1), (0, 1), (0.5, 7.3), (-3.5, 10), (1e-3, 3.7), (2, -1.5), (-1e5, 3e6)):
            for dtype in ("float32", "float64", "int64", "int32"):
                t = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
                e = ember.linspace(start, end, steps, dtype=getattr(ember, dtype)).numpy()
                assert e.dtype == t.dtype
                np.testing.assert_array_equal(e, t, err_msg=f"linspace({start}, {end}, {steps}, {dtype})")


@pytest.mark.parametrize("args", [
    (1j, 2, "float32"), (-1, 2 + 1j, "int64"), (0, 1j, "bool"), (0, 1, "bool"),  # no such cast / kernel
    (300, 1, "uint8"), (-0.5, 1, "uint8"), (1, -128.5, "int8"), (1e5, 1, "float16"), (float("nan"), 1, "int64"),
    (1, 300, "uint8", 1), (-300, 1, "int8", 0),  # one step converts start only, none converts nothing
    (0.005, -204, "uint8"), (-3, 10, "uint8"),  # uint8 takes -255..-1 as 256 + value
    ("t", 1, "float64"),  # a complex 0-d tensor end
])
def test_linspace_checks_its_ends_as_torch(args):
    start, end, dtype, steps = args + (9,) if len(args) == 3 else args
    results = []
    for lib in (torch, ember):
        s = lib.tensor(1 + 2j) if start == "t" else start
        try:
            results.append(lib.linspace(s, end, steps, dtype=getattr(lib, dtype) if start != "t" else None).tolist())
        except (RuntimeError, NotImplementedError) as e:
            results.append((type(e).__name__, str(e)))
    assert results[1] == results[0]
