"""nn.init compared with torch: gains, fans, distribution statistics, structure, errors."""
import math

import numpy as np
import pytest
import torch

import ember
from ember.nn import init


def values(t):
    return t.detach().numpy().astype(np.float64)


@pytest.mark.parametrize("name,param", [("linear", None), ("conv2d", None), ("sigmoid", None),
                                        ("tanh", None), ("relu", None), ("leaky_relu", None),
                                        ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu", None),
                                        ("conv_transpose3d", None)])
def test_calculate_gain_matches_torch(name, param):
    assert init.calculate_gain(name, param) == pytest.approx(torch.nn.init.calculate_gain(name, param))


@pytest.mark.parametrize("args", [("softmax", None), ("leaky_relu", "x"), ("leaky_relu", True)])
def test_calculate_gain_errors_match_torch(args):
    with pytest.raises(ValueError) as e_err:
        init.calculate_gain(*args)
    with pytest.raises(ValueError) as t_err:
        torch.nn.init.calculate_gain(*args)
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3, 3), (2, 7, 4)])
def test_fans_match_torch(shape):
    assert (init._calculate_fan_in_and_fan_out(ember.empty(shape))
            == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape)))


def test_fan_errors_match_torch():
    for fn, args in [(lambda lib, t: lib.nn.init._calculate_fan_in_and_fan_out(t), ()),
                     (lambda lib, t: lib.nn.init.xavier_uniform_(t), ()),
                     (lambda lib, t: lib.nn.init.orthogonal_(t), ()),
                     (lambda lib, t: lib.nn.init.eye_(t), ()),
                     (lambda lib, t: lib.nn.init.dirac_(t), ())]:
        with pytest.raises(ValueError) as e_err:
            fn(ember, ember.empty(5))
        with pytest.raises(ValueError) as t_err:
            fn(torch, torch.empty(5))
        assert str(e_err.value) == str(t_err.value)
    with pytest.raises(ValueError) as e_err:
        init.kaiming_uniform_(ember.empty(3, 4), mode="fan_avg")
    with pytest.raises(ValueError) as t_err:
        torch.nn.init.kaiming_uniform_(torch.empty(3, 4), mode="fan_avg")
    assert str(e_err.value) == str(t_err.value)


@pytest.fixture(autouse=True)
def seeded():
    ember.manual_seed(0)


def check_uniform(v, low, high):
    """Bounds hold, and the sample mean and std are within 5 standard errors of U(low, high)'s."""
    assert v.min() >= low and v.max() <= high
    std = (high - low) / math.sqrt(12)
    n = v.size
    assert abs(v.mean() - (low + high) / 2) < 5 * std / math.sqrt(n)
    assert abs(v.std() - std) < 5 * 0.45 * std / math.sqrt(n)


def check_normal(v, mean, std):
    """The sample mean and std are within 5 standard errors of N(mean, std^2)'s."""
    n = v.size
    assert abs(v.mean() - mean) < 5 * std / math.sqrt(n)
    assert abs(v.std() - std) < 5 * 0.71 * std / math.sqrt(n)


SHAPE = (250, 40, 3)  # fan_in = 120, fan_out = 750


@pytest.mark.parametrize("kwargs", [{}, {"a": 0.2, "mode": "fan_out"}, {"nonlinearity": "relu"}])
def test_kaiming_uniform_and_normal(kwargs):
    fan = 750 if kwargs.get("mode") == "fan_out" else 120
    gain = torch.nn.init.calculate_gain(kwargs.get("nonlinearity", "leaky_relu"), kwargs.get("a", 0))
    std = gain / math.sqrt(fan)
    t = ember.empty(SHAPE)
    assert init.kaiming_uniform_(t, **kwargs) is t
    check_uniform(values(t), -std * math.sqrt(3), std * math.sqrt(3))
    check_normal(values(init.kaiming_normal_(ember.empty(SHAPE), **kwargs)), 0.0, std)


def test_xavier_uniform_and_normal():
    gain = 1.7
    std = gain * math.sqrt(2.0 / (120 + 750))
    check_uniform(values(init.xavier_uniform_(ember.empty(SHAPE), gain=gain)),
                  -std * math.sqrt(3), std * math.sqrt(3))
    check_normal(values(init.xavier_normal_(ember.empty(SHAPE), gain=gain)), 0.0, std)


def test_uniform_normal_constant_ones_zeros():
    check_uniform(values(init.uniform_(ember.empty(30000), -2.0, 3.0)), -2.0, 3.0)
    check_normal(values(init.normal_(ember.empty(30000), 1.5, 0.5)), 1.5, 0.5)
    assert np.all(values(init.constant_(ember.empty(3, 2), 0.3)) == np.float32(0.3))
    assert np.all(values(init.ones_(ember.empty(4))) == 1)
    assert np.all(values(init.zeros_(ember.ones(4))) == 0)


def test_trunc_normal_matches_torch_statistics():
    mean, std, a, b = 0.5, 2.0, -1.0, 3.0
    e = values(init.trunc_normal_(ember.empty(40000), mean, std, a, b))
    t = values(torch.nn.init.trunc_normal_(torch.empty(40000), mean, std, a, b))
    assert e.min() >= a and e.max() <= b
    assert abs(e.mean() - t.mean()) < 0.03 and abs(e.std() - t.std()) < 0.03


def test_init_on_parameters_records_no_graph_and_keeps_identity():
    p = ember.nn.Parameter(ember.empty(5, 4))
    for fn in (init.xavier_uniform_, init.kaiming_normal_, init.orthogonal_, init.zeros_,
               lambda t: init.trunc_normal_(t, std=0.02), init.eye_, lambda t: init.constant_(t, 2.0)):
        out = fn(p)
        assert out is p and p.grad_fn is None and p.requires_grad and p.is_leaf


def test_generator_makes_draws_reproducible():
    g1, g2 = ember.Generator().manual_seed(3), ember.Generator().manual_seed(3)
    a = init.kaiming_uniform_(ember.empty(4, 5), generator=g1)
    b = init.kaiming_uniform_(ember.empty(4, 5), generator=g2)
    assert np.array_equal(values(a), values(b))
    assert not np.array_equal(values(a), values(init.kaiming_uniform_(ember.empty(4, 5), generator=g1)))


@pytest.mark.parametrize("shape", [(6, 6), (3, 8), (8, 3), (4, 2, 3)])
def test_orthogonal(shape):
    gain = 2.0
    w = values(init.orthogonal_(ember.empty(shape), gain=gain)).reshape(shape[0], -1)
    rows, cols = w.shape
    small = w @ w.T if rows <= cols else w.T @ w
    assert np.allclose(small, gain ** 2 * np.eye(min(rows, cols)), atol=1e-5)


def test_eye_and_dirac_match_torch():
    for shape in [(3, 5), (4, 2)]:
        assert np.array_equal(values(init.eye_(ember.empty(shape))),
                              torch.nn.init.eye_(torch.empty(shape)).numpy())
    for shape, groups in [((4, 4, 3), 1), ((6, 2, 3, 3), 2), ((4, 3, 2, 3, 3), 1), ((4, 1, 5), 2)]:
        assert np.array_equal(values(init.dirac_(ember.empty(shape), groups)),
                              torch.nn.init.dirac_(torch.empty(shape), groups).numpy())
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(ember.empty(3, 2, 3), groups=2)


def test_sparse_zeroes_a_fraction_of_each_column():
    w = values(init.sparse_(ember.empty(10, 300), sparsity=0.3, std=0.5))
    assert np.all((w == 0).sum(0) == 3)
    check_normal(w[w != 0], 0.0, 0.5)


def test_zero_element_tensor_warns_and_is_left_alone():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        out = init.kaiming_uniform_(ember.empty(0, 3))
    assert out.shape == (0, 3)
