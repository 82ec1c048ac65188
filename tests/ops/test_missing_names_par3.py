"""Names and conventions real programs use, each against torch 2.13: the random fills
cauchy_/log_normal_/geometric_ and torch.poisson (torch's numbers for a seed), the fills'
argument checks, in-place shape changes (t_, squeeze_, unsqueeze_, resize_), as_strided,
put/put_, NumPy arrays and scalars as operands, cov of one variable, Tensor._version."""
import numpy as np
import pytest
import torch

import ember

LIBS = (ember, torch)


def _both(fn):
    return [fn(lib) for lib in LIBS]


@pytest.mark.parametrize("draw", [
    "lib.empty(5, 3).cauchy_()", "lib.empty(7, dtype=lib.float64).cauchy_(1.5, 0.5)",
    "lib.empty(20).log_normal_()", "lib.empty(3, dtype=lib.float64).log_normal_(0.5, 0.25)",
    "lib.empty(9).geometric_(0.3)", "lib.empty(6, dtype=lib.int32).geometric_(0.05)",
    "lib.poisson(lib.tensor([0.0, 0.5, 3.0, 9.99, 10.0, 25.0, 400.0, 1e-3]))",
    "lib.poisson(lib.full((4, 5), 7.5, dtype=lib.float64))",
    "lib.randn(3) + lib.empty(3).cauchy_() + lib.randn(3)",  # the stream continues as torch's
])
def test_random_fills_draw_torchs_numbers(draw):
    got = []
    for lib in LIBS:
        lib.manual_seed(7)
        got.append(eval(draw, {"lib": lib}).numpy())
    assert got[0].dtype == got[1].dtype
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6)  # computed in float64, rounded once


@pytest.mark.parametrize("call", [
    "lib.zeros(2, dtype=lib.int64).uniform_()", "lib.zeros(2, dtype=lib.bool).normal_()",
    "lib.zeros(2, dtype=lib.int32).exponential_()", "lib.zeros(2, dtype=lib.int64).cauchy_()",
    "lib.zeros(2, dtype=lib.uint8).log_normal_()", "lib.zeros(2, dtype=lib.bool).geometric_(0.5)",
    "lib.zeros(2).geometric_(0)", "lib.zeros(2).geometric_(1.5)", "lib.zeros(2).cauchy_(0, -1)",
    "lib.zeros(2).log_normal_(0, 0)", "lib.poisson(lib.tensor([1, 2]))", "lib.poisson(lib.tensor([-1.0]))",
    "lib.zeros(2, requires_grad=True).uniform_()", "lib.zeros(2, requires_grad=True).cauchy_()",
])
def test_fill_arguments_are_checked_as_torch(call):
    errors = []
    for lib in LIBS:
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            eval(call, {"lib": lib})
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("change", [
    "x.t_()", "x.unsqueeze_(1)", "x.unsqueeze_(-1).squeeze_()", "x.unsqueeze_(0).squeeze_(0)",
    "x.view(2, 1, 3).squeeze_(1)", "x.t().t_()",
])
def test_in_place_shape_changes(change):
    results = []
    for lib in LIBS:
        x = lib.arange(6.0, dtype=lib.float64).view(2, 3)
        y = eval(change, {"x": x})
        z = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True) * 2
        w = eval(change.replace("x.", "z.", 1), {"z": z})
        (w * lib.arange(6.0, dtype=lib.float64).view(w.shape)).sum().backward()
        results.append((y.numpy(), y.stride(), x.shape, w.shape))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ember.ones(2, 3, requires_grad=True).t_()


def test_resize_keeps_the_first_elements():
    for sizes in [(2, 2), (6,), (3, 1, 2), (0,)]:
        a, b = _both(lambda lib: lib.arange(6.0).view(2, 3).resize_(*sizes))
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = ember.arange(6.0)
    x.resize_(2, 2)[0, 0] = 9
    assert x.shape == (2, 2) and x.resize_(8).shape == (8,) and x[:4].tolist() == [9.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ember.ones(2, requires_grad=True).resize_(3)


@pytest.mark.parametrize("args", [((3, 2), (1, 1), 1), ((2, 2), (1, 2)), ((4,), (0,)), ((2, 3), (3, 1), 0)])
def test_as_strided_views_and_gradient(args):
    got = []
    for lib in LIBS:
        x = lib.arange(1.0, 7.0, dtype=lib.float64, requires_grad=True)
        y = x * 1
        v = y.as_strided(*args)
        (v * lib.arange(v.numel(), dtype=lib.float64).view(v.shape)).sum().backward()
        got.append((v.detach().numpy(), v.stride(), x.grad.numpy(), type(v.grad_fn).__name__))
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
    x = ember.zeros(4)
    ember.as_strided(x, (2,), (2,)).fill_(1)
    assert x.tolist() == [1.0, 0.0, 1.0, 0.0]
    errors = _both(lambda lib: pytest.raises(RuntimeError, lib.arange(6.0).as_strided, (3, 3), (2, 1)).value)
    assert str(errors[0]) == str(errors[1])


def test_put():
    got = []
    for lib in LIBS:
        x = lib.zeros(2, 3)
        index, source = lib.tensor([1, -1, 1]), lib.tensor([9.0, 8.0, 7.0])
        got += [x.put(index[:2], source[:2]), x.clone().put_(index, source, accumulate=True), x]
    for a, b in zip(got[:3], got[3:]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("expr", [
    "lib.ones(2, dtype=lib.int32) + np.array(2)", "lib.ones(2) * np.array(2.0)",
    "lib.ones(2, dtype=lib.int32) * np.array([2])", "lib.ones(2) - np.array([1], dtype=np.int64)",
    "lib.ones(2, dtype=lib.int32) + np.int64(2)", "lib.add(lib.ones(2), lib.ones(2), alpha=np.float64(2))",
    "lib.sub(lib.ones(2, dtype=lib.float16), lib.ones(2, dtype=lib.float16), alpha=np.float32(0.5))",
])
def test_numpy_operands_promote_as_torch(expr):
    a, b = _both(lambda lib: eval(expr, {"lib": lib, "np": np}))
    assert a.dtype == getattr(ember, str(b.dtype).split(".")[1])
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_cov_of_one_variable_is_zero_dimensional():
    for fn in ("cov", "corrcoef"):
        a, b = _both(lambda lib: getattr(lib, fn)(lib.tensor([[1.0, 2.0, 4.0]])))
        assert a.shape == b.shape == ()
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    errors = _both(lambda lib: pytest.raises(RuntimeError, lib.cov, lib.tensor([True, False])).value)
    assert str(errors[0]) == str(errors[1])


def test_version_is_an_int_shared_with_views():
    versions = []
    for lib in LIBS:
        x = lib.zeros(3)
        v = x[1:]
        x.add_(1)
        v.mul_(2)
        versions.append((x._version, v._version, type(x._version)))
    assert versions[0] == versions[1]
