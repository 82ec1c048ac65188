"""Top-level names real programs call (torch.set_num_threads, torch.use_deterministic_algorithms,
torch.set_float32_matmul_precision, torch.isin, torch.hsplit, torch.conv2d, torch.relu_, ...)
vs torch 2.13: values, gradients, settings read back, warnings and errors."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def same(e, t):
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b)
    elif isinstance(t, torch.Tensor):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype), (e, t)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)
    else:
        assert e == t, (e, t)


def both(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(torch), build(ember)


@pytest.mark.parametrize("build", [
    lambda L: L.hsplit(L.arange(12.).reshape(3, 4), 2),
    lambda L: L.hsplit(L.arange(4.), [1, 3]),
    lambda L: L.vsplit(L.arange(12.).reshape(3, 4), [1]),
    lambda L: L.dsplit(L.arange(16.).reshape(1, 2, 8), 4),
    lambda L: L.arange(12.).reshape(3, 4).hsplit(4),
    lambda L: L.row_stack([L.ones(3), L.zeros(2, 3)]),
    lambda L: L.split_with_sizes(L.arange(5), [2, 3]),
    lambda L: L.unsafe_chunk(L.arange(5), 2),
    lambda L: L.diagflat(L.tensor([[1, 2], [3, 4]]), 1),
    lambda L: L.diagflat(L.tensor([1., 2.]), -1),
    lambda L: L.unravel_index(L.tensor([4, 7, 0]), (2, 4)),
    lambda L: L.unravel_index(L.tensor(5), (2, 3)),
    lambda L: L.histogram(L.tensor([1., 2, 1, 2.5]), bins=4, range=(0., 3.)),
    lambda L: L.histogram(L.tensor([1., 2, 1]), bins=L.tensor([0., 1, 2, 3]), weight=L.tensor([1., 2, 4]), density=True),
    lambda L: L.tensor([0.5, 2.0, 3.5], dtype=L.float64).histogram(3),
    lambda L: L.isin(L.tensor([[1, 2], [3, 4]]), L.tensor([2, 3])),
    lambda L: L.isin(L.tensor([1, 2]), 2, invert=True),
    lambda L: L.isin(L.tensor([1.5, 2.0]), L.tensor([2])),
    lambda L: L.mvlgamma(L.tensor([2.5, 3.0, 7.0]), 3),
    lambda L: L.range(1, 4),
    lambda L: L.range(1, 2, 0.3),
    lambda L: L.range(0, 5, dtype=L.int64),
    lambda L: L.empty_strided((2, 3), (1, 2)).stride(),
    lambda L: L.frombuffer(bytearray(b"\x00\x00\x80\x3f\x00\x00\x00\x40"), dtype=L.float32),
    lambda L: L.frombuffer(bytearray(range(16)), dtype=L.int32, count=2, offset=4),
    lambda L: L.select_scatter(L.zeros(2, 3), L.ones(3), 0, 1),
    lambda L: L.slice_scatter(L.zeros(4, 2), L.ones(2, 2), start=1, step=2),
    lambda L: L.slice_scatter(L.zeros(2, 5), L.ones(2, 2), dim=1, start=-2),
    lambda L: L.chain_matmul(L.ones(2, 3), L.ones(3, 4) * 2, L.ones(4, 1)),
    lambda L: [L.is_nonzero(L.tensor([2.0])), L.is_nonzero(L.tensor(False)), L.is_signed(L.ones(1, dtype=L.uint8)),
               L.is_signed(L.ones(1)), L.is_same_size(L.ones(2), L.ones(2, 1)), L.typename(L.ones(1, dtype=L.int64)),
               L.typename(3), L.typename(L.ones(2).numpy())],
    lambda L: L.fill(L.ones(2, 3), 7.0),
    lambda L: L.detach(L.ones(2, requires_grad=True) * 2),
    lambda L: L.relu_(L.tensor([-1.0, 2.0])),
    lambda L: L.sigmoid_(L.tensor([-1.0, 2.0])),
    lambda L: L.clamp_(L.tensor([-1.0, 2.0, 5.0]), 0, 3),
    lambda L: L.arccos_(L.tensor([0.5, -0.2])),
    lambda L: L.tensor([1.7, -1.7]).fix_(),
    lambda L: L.conv2d(L.ones(1, 1, 4, 4), L.ones(2, 1, 3, 3), padding=1),
    lambda L: L.layer_norm(L.arange(6.).reshape(2, 3), (3,)),
    lambda L: L.cosine_similarity(L.tensor([[1.0, 2.0]]), L.tensor([[2.0, 1.0]])),
    lambda L: L.pdist(L.tensor([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]])),
    lambda L: L.pixel_shuffle(L.arange(16.).reshape(1, 4, 2, 2), 2),
    lambda L: L.dropout(L.ones(3), 0.0, True),
    lambda L: L.max_pool1d_with_indices(L.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2),
])
def test_values_equal_torchs(build):
    same(*reversed(both(build)))


@pytest.mark.parametrize("build", [
    lambda L: L.hsplit(L.arange(12.).reshape(3, 4), 3),
    lambda L: L.dsplit(L.zeros(2, 2), 2),
    lambda L: L.vsplit(L.zeros(3), 1),
    lambda L: L.hsplit(L.zeros(()), 2),
    lambda L: L.unravel_index(L.tensor([1.0]), (2, 4)),
    lambda L: L.is_nonzero(L.tensor([1, 2])),
    lambda L: L.is_nonzero(L.tensor([])),
    lambda L: L.set_num_threads(0),
    lambda L: L.set_deterministic_debug_mode("loud"),
    lambda L: L.use_deterministic_algorithms("yes"),
    lambda L: L.frombuffer(bytearray(b"\x00" * 6), dtype=L.float32),
])
def test_errors_are_torchs(build):
    with pytest.raises(Exception) as t:
        build(torch)
    with pytest.raises(Exception) as e:
        build(ember)
    assert type(e.value) is type(t.value)
    assert str(e.value) == str(t.value)


def test_scatters_differentiate_to_both_inputs():
    def run(L):
        x = L.arange(8.).reshape(4, 2).requires_grad_()
        src = L.ones(2, 2, requires_grad=True)
        row = L.tensor([5.0, 6.0], requires_grad=True)
        out = L.slice_scatter(x, src * 3, start=1, step=2) * L.arange(1., 9.).reshape(4, 2)
        out2 = L.select_scatter(x, row ** 2, 0, 2).sum()
        return list(L.autograd.grad(out.sum() + out2, [x, src, row]))
    t, e = both(run)
    same(e, t)


def test_settings_read_back_as_torchs():
    def run(L):
        saved = (L.get_num_threads(), L.get_float32_matmul_precision(), L.are_deterministic_algorithms_enabled(),
                 L.is_deterministic_algorithms_warn_only_enabled())
        try:
            L.set_num_threads(1)
            L.set_float32_matmul_precision("high")
            L.use_deterministic_algorithms(True, warn_only=True)
            first = [L.get_num_threads(), L.get_float32_matmul_precision(), L.are_deterministic_algorithms_enabled(),
                     L.is_deterministic_algorithms_warn_only_enabled(), L.get_deterministic_debug_mode()]
            L.set_deterministic_debug_mode("error")
            first += [L.get_deterministic_debug_mode(), L.is_deterministic_algorithms_warn_only_enabled()]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                L.set_float32_matmul_precision("fastest")
            first += [L.get_float32_matmul_precision(), [str(w.message)[:60] for w in caught]]
            L.set_default_device("cpu")
            first += [str(L.get_default_device()), L.ones(1).device.type]
            L.set_default_device(None)
            return first
        finally:
            L.set_num_threads(saved[0])
            L.set_float32_matmul_precision(saved[1])
            L.use_deterministic_algorithms(saved[2], warn_only=saved[3])
    t, e = both(run)
    same(e, t)
    a = ember.randn(300, 300)
    before = ember.get_num_threads()  # (torch's count is the tests' 1: restored, ember's stayed 1)
    ember.set_num_threads(1)
    try:
        np.testing.assert_allclose((a @ a).numpy(), a.numpy() @ a.numpy(), rtol=1e-5, atol=1e-4)
    finally:
        ember.set_num_threads(before)


def test_names_resolve_where_torch_has_them():
    for name in ["conv1d", "conv_transpose2d", "group_norm", "prelu", "selu", "celu", "threshold", "rrelu",
                 "hardshrink", "bilinear", "max_pool1d", "max_pool2d", "avg_pool1d", "adaptive_avg_pool1d",
                 "pixel_unshuffle", "pairwise_distance", "alpha_dropout", "feature_alpha_dropout", "rms_norm",
                 "max_pool1d_with_indices",
                 "abs_", "exp_", "log_", "sqrt_", "tanh_", "round_", "neg_", "negative_", "xlogy_",
                 "is_inference_mode_enabled", "is_anomaly_enabled", "set_anomaly_enabled", "set_warn_always",
                 "is_warn_always_enabled", "get_num_interop_threads"]:
        assert hasattr(torch, name) and callable(getattr(ember, name)), name
