"""ember.ao.quantization.quantize_dynamic against torch.ao.quantization.quantize_dynamic.

Weights: the int8 integers, scales and zero points equal torch's exactly (same observers,
float32 arithmetic). Outputs: ember's reference kernel computes x dequant(W)^T + b, so
- against the float model, each weight is off by at most scale/2, hence output feature j is
  off by at most sum_k |x_k| * scale_j / 2;
- against torch, whose fbgemm kernel also rounds x to 7-bit unsigned integers with scale
  s_x = (max(x, 0) - min(x, 0)) / 127 (each entry off by at most s_x / 2), output j is off by
  at most s_x / 2 * sum_k |dequant(W)_jk|.
"""
import io
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.ao.quantization import (default_dynamic_qconfig, float16_dynamic_qconfig, per_channel_dynamic_qconfig,
                                   quantize_dynamic)
from torchcompare import assert_close, to_torch, torch

tq = pytest.importorskip("torch.ao.quantization")
SLACK = 1e-5  # float32 rounding of sums of ~100 products of size ~1


def torch_twin(model, make):
    """A torch model built by ``make`` holding ``model``'s state."""
    twin = make()
    twin.load_state_dict({k: to_torch(v) for k, v in model.state_dict().items()})
    return twin


def mlp():
    ember.manual_seed(0)
    e = nn.Sequential(nn.Linear(48, 32), nn.ReLU(), nn.Linear(32, 10))
    t = torch_twin(e, lambda: torch.nn.Sequential(torch.nn.Linear(48, 32), torch.nn.ReLU(),
                                                  torch.nn.Linear(32, 10)))
    return e, t


def quantize_both(e, t, spec, dtype="qint8"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation notices
        tspec = spec if spec is None else _to_torch_spec(spec)
        qt = tq.quantize_dynamic(t, tspec, dtype=getattr(torch, dtype))
    return quantize_dynamic(e, spec, dtype=getattr(ember, dtype)), qt


def _to_torch_spec(spec):
    qconfigs = {id(default_dynamic_qconfig): tq.default_dynamic_qconfig,
                id(per_channel_dynamic_qconfig): tq.per_channel_dynamic_qconfig,
                id(float16_dynamic_qconfig): tq.float16_dynamic_qconfig}
    key = {nn.Linear: torch.nn.Linear, nn.LSTM: torch.nn.LSTM, nn.GRU: torch.nn.GRU}
    if isinstance(spec, set):
        return {key.get(k, k) for k in spec}
    return {key.get(k, k): qconfigs[id(v)] for k, v in spec.items()}


@pytest.mark.parametrize("spec", [{nn.Linear}, None, {nn.Linear: per_channel_dynamic_qconfig}])
def test_int8_weights_equal_torch(spec):
    e, t = mlp()
    qe, qt = quantize_both(e, t, spec)
    per_channel = isinstance(spec, dict)
    for i in (0, 2):
        we, wt = qe[i].weight(), qt[i].weight()
        assert we.dtype is ember.qint8 and we.int_repr().dtype is ember.int8
        assert repr(we.qscheme()) == repr(wt.qscheme())
        np.testing.assert_array_equal(we.int_repr().numpy(), wt.int_repr().numpy())
        if per_channel:
            assert_close(we.q_per_channel_scales(), wt.q_per_channel_scales(), rtol=0, atol=0)
            assert_close(we.q_per_channel_zero_points(), wt.q_per_channel_zero_points())
            assert we.q_per_channel_axis() == wt.q_per_channel_axis() == 0
        else:
            assert we.q_scale() == wt.q_scale() and we.q_zero_point() == wt.q_zero_point() == 0
        assert_close(we.dequantize(), wt.dequantize(), rtol=0, atol=0)
        assert_close(qe[i].bias(), qt[i].bias())
        assert repr(qe[i]) == repr(qt[i])


@pytest.mark.parametrize("spec", [{nn.Linear}, {nn.Linear: per_channel_dynamic_qconfig}])
def test_linear_output_within_the_scale_bounds(spec):
    e, t = mlp()
    qe, qt = quantize_both(e, t, spec)
    x = ember.randn(16, 48) * 3
    layer, tlayer = qe[0], qt[0]
    w = layer.weight()
    scale = (w.q_per_channel_scales().numpy() if isinstance(spec, dict)
             else np.full(32, w.q_scale())).astype(np.float32)
    xs = x.numpy()
    y_q, y_f = layer(x).detach().numpy(), e[0](x).detach().numpy()
    float_bound = np.abs(xs).sum(1, keepdims=True) * scale / 2
    assert (np.abs(y_q - y_f) <= float_bound + SLACK).all()
    assert np.abs(y_q - y_f).max() > 0.1 * float_bound.max()  # the bound is not vacuous
    s_x = (max(xs.max(), 0) - min(xs.min(), 0)) / 127
    torch_bound = s_x / 2 * np.abs(w.dequantize().numpy()).sum(1)
    y_t = tlayer(to_torch(x)).numpy()
    assert (np.abs(y_q - y_t) <= torch_bound + SLACK).all()
    assert_close(qe(x), qt(to_torch(x)), rtol=0, atol=float(torch_bound.max()) * 10)


def test_float16_matches_torch():
    e, t = mlp()
    qe, qt = quantize_both(e, t, {nn.Linear}, dtype="float16")
    assert repr(qe) == repr(qt)
    assert_close(qe[0].weight(), qt[0].weight(), rtol=0, atol=0)
    assert qe[0]._packed_params.qweight.dtype is ember.float16
    x = ember.randn(5, 48)
    assert_close(qe(x), qt(to_torch(x)), rtol=1e-5, atol=1e-5)


def test_int8_storage_is_a_quarter_of_the_float_bytes(tmp_path):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 128))
    q = quantize_dynamic(model, {nn.Linear}, dtype=ember.qint8)

    def nbytes(m):
        return sum(v.numel() * v.element_size() for v in m.state_dict().values())

    # weights 1 byte instead of 4; float32 biases and one float64 scale per layer remain
    assert nbytes(model) == 4 * (256 * 256 + 256 + 256 * 128 + 128)
    assert nbytes(q) == (256 * 256 + 256 * 128) + 4 * (256 + 128) + 2 * (8 + 8)
    assert nbytes(q) / nbytes(model) < 0.26
    ember.save(model.state_dict(), tmp_path / "float.pt")
    ember.save(q.state_dict(), tmp_path / "int8.pt")
    ratio = (tmp_path / "int8.pt").stat().st_size / (tmp_path / "float.pt").stat().st_size
    assert 0.24 < ratio < 0.27


@pytest.mark.parametrize("spec", [{nn.Linear, nn.LSTM}, {nn.Linear: per_channel_dynamic_qconfig}])
def test_save_load_round_trip(spec):
    ember.manual_seed(0)
    make = lambda: nn.Sequential(nn.Linear(6, 8), nn.LSTM(8, 5))  # noqa: E731
    q = quantize_dynamic(make(), spec)
    buffer = io.BytesIO()
    ember.save(q.state_dict(), buffer)
    buffer.seek(0)
    fresh = quantize_dynamic(make(), spec)
    x = ember.randn(3, 6)
    assert not np.allclose(fresh(x)[0].detach().numpy(), q(x)[0].detach().numpy())
    fresh.load_state_dict(ember.load(buffer))
    assert_close(fresh(x)[0], to_torch(q(x)[0].detach()), rtol=0, atol=0)
    for k, v in q.state_dict().items():
        assert_close(fresh.state_dict()[k], to_torch(v), rtol=0, atol=0)


def test_copy_inplace_eval_and_top_module():
    e, _ = mlp()
    e.train()
    before = {k: v.clone() for k, v in e.state_dict().items()}
    q = quantize_dynamic(e, {nn.Linear})
    assert q is not e and type(e[0]) is nn.Linear and not q.training
    for k, v in e.state_dict().items():
        assert_close(v, to_torch(before[k]), rtol=0, atol=0)
    assert not hasattr(q[0], "qconfig") and not hasattr(q, "qconfig")
    same = quantize_dynamic(e, {nn.Linear}, inplace=True)
    assert same is e and type(e[0]).__name__ == "Linear" and e[0]._get_name() == "DynamicQuantizedLinear"
    lone = nn.Linear(3, 2)
    assert type(quantize_dynamic(lone, {nn.Linear})) is nn.Linear  # the top module is never swapped


def test_spec_by_name_and_container_propagation_match_torch():
    e, t = mlp()
    for spec, tspec in (({"2": default_dynamic_qconfig}, {"2": tq.default_dynamic_qconfig}),
                        ({nn.Sequential: default_dynamic_qconfig}, {torch.nn.Sequential: tq.default_dynamic_qconfig})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            qt = tq.quantize_dynamic(t, tspec)
        assert repr(quantize_dynamic(e, spec)) == repr(qt)


def test_unsupported_modules_are_left_unchanged():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Linear(2, 2),
                          nn.TransformerEncoderLayer(8, 2, dim_feedforward=16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = quantize_dynamic(model)  # default spec: silently skips what has no dynamic version
    assert type(q[0]) is nn.Conv2d
    attention = q[3].self_attn
    assert type(attention.out_proj).__name__ == "NonDynamicallyQuantizableLinear"  # as in torch
    assert q[3].linear1._get_name() == "DynamicQuantizedLinear"
    with pytest.warns(UserWarning, match="Conv2d"):
        q = quantize_dynamic(model, {nn.Conv2d, nn.Linear})
    assert type(q[0]) is nn.Conv2d and q[2]._get_name() == "DynamicQuantizedLinear"


def test_bad_dtype_raises_like_torch():
    e, t = mlp()
    for spec, tspec, error in ((None, None, ValueError), ({nn.Linear}, {torch.nn.Linear}, RuntimeError)):
        with pytest.raises(error), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tq.quantize_dynamic(t, tspec, dtype=torch.float32)
        with pytest.raises(error, match="float32"):
            quantize_dynamic(e, spec, dtype=ember.float32)
        with pytest.raises(error, match="int8"):
            quantize_dynamic(e, spec, dtype=ember.int8)


def test_quint8_is_weight_only_embedding_quantization_as_in_torch():
    e, t = mlp()
    for spec, tspec in (({nn.Linear}, {torch.nn.Linear}), ({"0"}, {"0"}), ({nn.Sequential}, {torch.nn.Sequential})):
        with pytest.raises(AssertionError) as t_error, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tq.quantize_dynamic(t, tspec, dtype=torch.quint8)
        with pytest.raises(AssertionError) as e_error:
            quantize_dynamic(e, spec, dtype=ember.quint8)
        assert str(e_error.value) == str(t_error.value)
        assert "torch.quint8" in str(e_error.value)
    for spec, tspec in ((None, None), (set(), set()), ({}, {})):  # no Linear selected: unchanged
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            qt = tq.quantize_dynamic(t, tspec, dtype=torch.quint8)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            q = quantize_dynamic(e, spec, dtype=ember.quint8)
        assert repr(q) == repr(qt) and type(q[0]) is nn.Linear
    # torch quantizes Embedding here; ember has no quantized Embedding: it stays float, with a warning
    for spec in (None, {nn.Embedding}):
        with pytest.warns(UserWarning, match="Embedding"):
            q = quantize_dynamic(nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 2)), spec, dtype=ember.quint8)
        assert type(q[0]) is nn.Embedding and type(q[1]) is nn.Linear


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_quantized_tensor_api():
    x = ember.tensor([[-1.0, 0.26, 0.5], [1.3, -0.04, 2.0]])
    q = ember.quantize_per_tensor(x, 0.1, 3, ember.qint8)
    tq_ = torch.quantize_per_tensor(to_torch(x), 0.1, 3, torch.qint8)
    np.testing.assert_array_equal(q.int_repr().numpy(), tq_.int_repr().numpy())
    assert_close(q.dequantize(), tq_.dequantize())
    assert repr(q) == repr(tq_)
    qc = ember.quantize_per_channel(x, ember.tensor([0.01, 0.02], dtype=ember.float64), ember.tensor([0, 5]), 0,
                                    ember.quint8)
    tqc = torch.quantize_per_channel(to_torch(x), torch.tensor([0.01, 0.02], dtype=torch.float64),
                                     torch.tensor([0, 5]), 0, torch.quint8)
    np.testing.assert_array_equal(qc.int_repr().numpy(), tqc.int_repr().numpy())
    assert repr(qc) == repr(tqc)
    assert qc.q_per_channel_axis() == 0 and repr(qc.qscheme()) == "torch.per_channel_affine"
    with pytest.raises(RuntimeError):
        qc.q_scale()
    with pytest.raises(RuntimeError, match="2 scales"):
        ember.quantize_per_channel(x, ember.tensor([0.1]), ember.tensor([0]), 0, ember.qint8)
    with pytest.raises(RuntimeError, match="float32"):
        ember.quantize_per_tensor(x, 0.1, 0, ember.float32)


@pytest.mark.parametrize("make,tmake", [
    (lambda q: q.MinMaxObserver(dtype=ember.qint8), lambda q: q.MinMaxObserver(dtype=torch.qint8)),
    (lambda q: q.MinMaxObserver(reduce_range=True), lambda q: q.MinMaxObserver(reduce_range=True)),
    (lambda q: q.MinMaxObserver(dtype=ember.quint8, qscheme=ember.per_tensor_symmetric),
     lambda q: q.MinMaxObserver(dtype=torch.quint8, qscheme=torch.per_tensor_symmetric)),
    (lambda q: q.PerChannelMinMaxObserver(ch_axis=1, dtype=ember.qint8),
     lambda q: q.PerChannelMinMaxObserver(ch_axis=1, dtype=torch.qint8)),
    (lambda q: q.PerChannelMinMaxObserver(qscheme=ember.per_channel_symmetric, dtype=ember.qint8),
     lambda q: q.PerChannelMinMaxObserver(qscheme=torch.per_channel_symmetric, dtype=torch.qint8))])
def test_observers_choose_torchs_parameters(make, tmake):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notice that reduce_range is deprecated
        observer, tobserver = make(ember.ao.quantization), tmake(tq)
    for shift in (0.3, -0.7):  # two batches: the running range covers both
        x = ember.randn(5, 4) + shift
        observer(x)
        tobserver(to_torch(x))
    (scale, zero_point), (tscale, tzero_point) = observer.calculate_qparams(), tobserver.calculate_qparams()
    assert_close(scale, tscale, rtol=0, atol=0)
    assert_close(zero_point, tzero_point, check_dtype=False)


def test_affine_weight_qconfig_gives_torchs_zero_point_and_outputs():
    from ember.ao.quantization import MinMaxObserver, QConfig, default_dynamic_quant_observer
    qconfig = QConfig(activation=default_dynamic_quant_observer,
                      weight=MinMaxObserver.with_args(dtype=ember.qint8))
    tqconfig = tq.QConfig(activation=tq.default_dynamic_quant_observer,
                          weight=tq.MinMaxObserver.with_args(dtype=torch.qint8))
    e, t = mlp()
    with ember.no_grad():
        e[0].weight.add_(0.05)  # an off-centre range: nonzero zero point
    t[0].load_state_dict({k: to_torch(v) for k, v in e[0].state_dict().items()})
    qe = quantize_dynamic(e, {nn.Linear: qconfig})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qt = tq.quantize_dynamic(t, {torch.nn.Linear: tqconfig})
    we, wt = qe[0].weight(), qt[0].weight()
    assert we.q_zero_point() == wt.q_zero_point() != 0 and we.q_scale() == wt.q_scale()
    np.testing.assert_array_equal(we.int_repr().numpy(), wt.int_repr().numpy())
    x = ember.randn(4, 48)
    xs = x.numpy()
    s_x = (max(xs.max(), 0) - min(xs.min(), 0)) / 127
    bound = s_x / 2 * np.abs(we.dequantize().numpy()).sum(1)
    assert (np.abs(qe[0](x).detach().numpy() - qt[0](to_torch(x)).numpy()) <= bound + SLACK).all()


def test_bad_qconfig_and_observer_arguments():
    from ember.ao.quantization import MinMaxObserver, QConfig
    with pytest.raises(ValueError, match="instance"):
        QConfig(activation=MinMaxObserver(), weight=MinMaxObserver)
    with pytest.raises(NotImplementedError, match="per_channel_affine"):
        MinMaxObserver(qscheme=ember.per_channel_affine)
    with pytest.raises(AssertionError, match="include 0"):
        MinMaxObserver(dtype=ember.qint8, quant_min=1, quant_max=5)
    with pytest.raises(RuntimeError, match="float32"):
        ember.ao.nn.quantized.dynamic.Linear(3, 2, dtype=ember.float32)


def test_docstring_examples_run():
    import doctest

    from ember.ao.nn.quantized.dynamic import linear, rnn
    from ember.ao.quantization import quantize
    for module in (linear, rnn, quantize):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_pruned_then_quantized_keeps_the_zeros():
    from ember.nn.utils import prune
    e, _ = mlp()
    prune.global_unstructured([(e[0], "weight"), (e[2], "weight")], pruning_method=prune.L1Unstructured,
                              amount=0.5)
    for i in (0, 2):
        prune.remove(e[i], "weight")
    q = quantize_dynamic(e, {nn.Linear}, dtype=ember.qint8)
    for i in (0, 2):  # symmetric int8 has zero point 0, so a pruned weight stays exactly 0
        pruned = e[i].weight.detach().numpy() == 0
        assert pruned.any() and (q[i].weight().int_repr().numpy()[pruned] == 0).all()
    zeros = sum(int((q[i].weight().int_repr() == 0).sum()) for i in (0, 2))
    assert zeros >= (48 * 32 + 32 * 10) // 2
