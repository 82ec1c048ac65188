"""float32 ``log_softmax`` where a row has one dominant logit, so that its result is near 0:
log(1 + s) is taken as log1p(s), s the sum of the other terms, instead of rounding 1 + s in
float32. Compared with a float64 reference computed the same way (its own log(1 + s) would be
off by 1e-16 absolute, thousands of float32 ulps near 0). torch 2.13's float32 kernel rounds
1 + s: on these inputs it is 1e7 ulp off near 0 (-1e-9 comes out 0) and ~4e3 ulp elsewhere."""
import numpy as np
import pytest

import ember

BOUND_ULP = 32  # measured: 26 (the rounding of x - max, |x - max| up to ~100, in exp's argument)


def _reference(x, dim):
    x = x.astype(np.float64)
    at = np.expand_dims(x.argmax(dim), dim)
    shifted = x - np.take_along_axis(x, at, dim)
    terms = np.exp(shifted)
    np.put_along_axis(terms, at, 0, dim)
    return shifted - np.log1p(terms.sum(dim, keepdims=True))


def _ulps(result, reference):
    spacing = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
    return np.abs(result.astype(np.float64) - reference) / spacing


def _logits(seed, rows=16):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 200))
    x = rng.standard_normal((rows, n)) * rng.uniform(1, 25, (rows, 1))
    x[:, 0] += rng.uniform(0, 40, rows)  # one dominant logit per row: results from -1e-17 to -1
    x[0, 1] = x[0, 0]  # a tie: log 2 off the top
    return x.astype(np.float32)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dim", [0, 1])
def test_eager_near_zero_within_bound(seed, dim):
    x = _logits(seed)
    x = x if dim == 1 else np.ascontiguousarray(x.T)
    result = ember.log_softmax(ember.tensor(x), dim).numpy()
    reference = _reference(x, dim)
    assert (np.abs(reference) < 1e-6).any()
    assert _ulps(result, reference).max() <= BOUND_ULP


def test_compiled_near_zero_within_bound():
    compiled = ember.compile(lambda t: ember.nn.functional.log_softmax(t, -1))
    for seed in range(3):
        x = _logits(seed)
        assert _ulps(compiled(ember.tensor(x)).numpy(), _reference(x, 1)).max() <= BOUND_ULP


def test_ties_infinities_and_nan_as_torch():
    x = ember.tensor([[1.0, 1.0], [float("inf"), 0.0], [-float("inf"), -float("inf")], [float("nan"), 1.0], [3.0, 3.0]])
    expected = [[-0.6931471824645996] * 2, [float("nan")] * 2, [float("nan")] * 2, [float("nan")] * 2, [-0.6931471824645996] * 2]
    for result in (ember.log_softmax(x, 1), ember.compile(lambda t: ember.log_softmax(t, 1))(x)):
        np.testing.assert_array_equal(result.numpy(), np.array(expected, np.float32))
