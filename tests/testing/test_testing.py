"""ember.testing against torch.testing: assert_close passes and fails where torch's does, with
its exception class and message; make_tensor draws torch's values for the same seed."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
nan, inf = float("nan"), float("inf")

# Each case: fn(L) -> (actual, expected, keyword arguments).
CASES = {
    "close": lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-6]), {}),
    "float32-off": lambda L: (L.tensor([1.0, 2, 3]), L.tensor([1.0, 2.5, 3]), {}),
    "2-d-off": lambda L: (L.tensor([[1.0, 2], [3, 4]]), L.tensor([[1.0, 2], [3, 5]]), {}),
    "float16-off": lambda L: (L.tensor([1.0, 2], dtype=L.float16), L.tensor([1.0, 2.01], dtype=L.float16), {}),
    "float64-within": lambda L: (L.tensor([1.0], dtype=L.float64), L.tensor([1.0 + 5e-8], dtype=L.float64), {}),
    "int-off": lambda L: (L.tensor([1, 2]), L.tensor([1, 3]), {}),
    "complex-off": lambda L: (L.tensor([1 + 1j]), L.tensor([1 + 2j]), {}),
    "shape": lambda L: (L.tensor([1.0, 2]), L.tensor([1.0, 2, 3]), {}),
    "dtype": lambda L: (L.tensor([1.0, 2]), L.tensor([1.0, 2], dtype=L.float64), {}),
    "dtype-unchecked": lambda L: (L.tensor([1], dtype=L.int32), L.tensor([1]), dict(check_dtype=False)),
    "stride": lambda L: (L.ones(2, 2), L.ones(2, 2).t(), dict(check_stride=True)),
    "nan": lambda L: (L.tensor([1.0, nan]), L.tensor([1.0, nan]), {}),
    "nan-equal": lambda L: (L.tensor([1.0, nan]), L.tensor([1.0, nan]), dict(equal_nan=True)),
    "inf": lambda L: (L.tensor([inf, -inf]), L.tensor([inf, -inf]), {}),
    "explicit-tolerances": lambda L: (L.tensor([1.0, 2]), L.tensor([1.0, 2.5]), dict(rtol=0.1, atol=0)),
    "only-rtol": lambda L: (L.ones(3), L.ones(3), dict(rtol=1e-3)),
    "only-atol": lambda L: (L.ones(3), L.ones(3), dict(atol=1e-3)),
    "empty": lambda L: (L.zeros(0, 3), L.zeros(0, 3), {}),
    "0-d": lambda L: (L.tensor(1.0), L.tensor(1.5), {}),
    "0-d-bool": lambda L: (L.tensor(True), L.tensor(False), {}),
    "numbers": lambda L: (1.0, 1.1, {}),
    "ints": lambda L: (1, 2, {}),
    "bools": lambda L: (True, False, {}),
    "list": lambda L: ([L.tensor(1.0)], [L.tensor(2.0)], {}),
    "nested": lambda L: ([[L.tensor([1.0])]], [[L.tensor([3.0])]], {}),
    "dict": lambda L: ({"a": [1.0]}, {"a": [2.0]}, {}),
    "dict-keys": lambda L: ({"a": 1}, {"b": 1}, {}),
    "length": lambda L: ([1, 2], [1, 2, 3], {}),
    "numpy": lambda L: (np.array([1.0, 2]), np.array([1.0, 3]), {}),
    "msg": lambda L: (L.tensor([1.0]), L.tensor([2.0]), dict(msg="custom")),
    "msg-callable": lambda L: (L.tensor([1.0]), L.tensor([2.0]), dict(msg=lambda m: "X" + m[:12])),
    "tensor-and-list": lambda L: (L.tensor([1.0]), [1.0], {}),
    "strings": lambda L: ("a", "a", {}),
}


def outcome(lib, name):
    actual, expected, kwargs = CASES[name](lib)
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except Exception as error:  # the class and message are what is compared
        return type(error), str(error).replace("torch", "ember")
    return None


@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_matches_torch(name):
    assert outcome(ember, name) == outcome(torch, name)


@pytest.mark.parametrize("dtype, kwargs", [
    ("float32", {}), ("float64", dict(low=-2, high=0.5)), ("int64", {}), ("int32", dict(low=-3, high=3)),
    ("uint8", {}), ("bool", {}), ("float32", dict(exclude_zero=True, low=0, high=1)),
    ("int64", dict(exclude_zero=True, low=-1, high=2)), ("float32", dict(noncontiguous=True)),
])
def test_make_tensor_draws_torchs_values(dtype, kwargs):
    values = []
    for lib in (ember, torch):
        lib.manual_seed(3)
        t = lib.testing.make_tensor(4, 5, dtype=getattr(lib, dtype), device="cpu", **kwargs)
        values.append((t.numpy(), t.is_contiguous(), str(t.dtype).split(".")[1]))
    # float64 within an ulp: the last rounding of x * (high - low) + low can differ from
    # torch's compiled kernel (float32 and the integer dtypes are equal).
    np.testing.assert_allclose(values[0][0], values[1][0], rtol=1e-15, atol=0)
    assert values[0][1:] == values[1][1:]


def test_make_tensor_arguments():
    t = ember.testing.make_tensor((2, 3), dtype=ember.complex64, device="cpu", requires_grad=True)
    assert t.shape == (2, 3) and t.dtype is ember.complex64 and t.requires_grad
    assert np.all(np.abs(t.detach().numpy().real) <= 9) and np.any(t.detach().numpy().imag != 0)
    for kwargs, message in ((dict(low=3, high=1), "`low` must be less than `high`, but got 3 >= 1"),
                            (dict(low=nan), "`low` and `high` cannot be NaN, but got low=nan and high=None")):
        with pytest.raises(ValueError, match=message):
            ember.testing.make_tensor(3, dtype=ember.float32, device="cpu", **kwargs)
    with pytest.raises(TypeError, match="device"):
        ember.testing.make_tensor(3, dtype=ember.float32)


CLOSENESS = [
    ("1 vs inf", lambda lib: (lib.tensor([1.]), lib.tensor([float("inf")])), {}),
    ("inf vs -inf", lambda lib: (lib.tensor([float("inf")]), lib.tensor([-float("inf")])), {}),
    ("inf vs inf", lambda lib: (lib.tensor([float("inf")]), lib.tensor([float("inf")])), {}),
    ("complex infinity", lambda lib: (lib.tensor([complex(1, float("inf"))]), lib.tensor([1 + 2j])), {}),
    ("numbers 1 vs inf", lambda lib: (1.0, float("inf")), {}),
    ("ints exact", lambda lib: (lib.tensor([1, 2]), lib.tensor([1, 3])), {}),
    ("ints with rtol", lambda lib: (lib.tensor([1, 2]), lib.tensor([1, 3])), dict(rtol=0.5, atol=0)),
    ("ints with atol equal to the difference", lambda lib: (lib.tensor([1, 2]), lib.tensor([1, 3])),
     dict(rtol=0, atol=1)),
]


@pytest.mark.parametrize("name, make, options", CLOSENESS, ids=[c[0] for c in CLOSENESS])
def test_assert_close_on_infinities_and_integer_tolerances_as_torch(name, make, options):
    """A non-finite value is close only to itself; integers honour given tolerances (ember
    passed 1 vs inf and failed ints within rtol/atol)."""
    outcomes = []
    for lib in (ember, torch):
        try:
            lib.testing.assert_close(*make(lib), **options)
            outcomes.append("pass")
        except AssertionError:
            outcomes.append("fail")
    assert outcomes[0] == outcomes[1]


def test_assert_allclose_is_deprecated_and_keeps_its_old_tolerances_as_torchs():
    cases = [([1.0, 2.0], [1.0, 2.00015]), ([1.0], [1.00005]), (1.0, 1.0 + 2e-6), ([float("nan")], [float("nan")]),
             ([1, 2], [1.0, 2.0])]
    seen = set()
    for dtype in ("float16", "float32", "float64"):
        for a, e in cases:
            outcomes = []
            for L in (ember, torch):
                actual = L.tensor(a, dtype=getattr(L, dtype)) if isinstance(a, list) and isinstance(a[0], float) else a
                with pytest.warns(FutureWarning, match=r"assert_allclose\(\)` is deprecated since 1.12"):
                    try:
                        L.testing.assert_allclose(actual, e)
                        outcomes.append(True)
                    except AssertionError:
                        outcomes.append(False)
            assert outcomes[0] == outcomes[1], (dtype, a, e)
            seen.add(outcomes[0])
    assert seen == {True, False}


def test_set_multithreading_enabled_is_a_context_and_decorator_as_torchs():
    with ember.autograd.set_multithreading_enabled(False):
        x = ember.ones(2, requires_grad=True)
        (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]

    @ember.autograd.set_multithreading_enabled(False)
    def f():
        return 7
    assert f() == 7
