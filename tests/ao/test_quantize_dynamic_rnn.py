"""Dynamically quantized LSTM and GRU against torch.ao.nn.quantized.dynamic: the same int8
weights (one scale per matrix), outputs equal to the float layer run on the dequantized
weights, close to torch's within the rounding of activations its int8 kernels add."""
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.ao.quantization import quantize_dynamic
from torchcompare import assert_close, to_torch, torch

tq = pytest.importorskip("torch.ao.quantization")


def pair(mode, dtype, **kwargs):
    ember.manual_seed(0)
    e = nn.Sequential(getattr(nn, mode)(6, 8, **kwargs))
    t = torch.nn.Sequential(getattr(torch.nn, mode)(6, 8, **kwargs))
    t.load_state_dict({k: to_torch(v) for k, v in e.state_dict().items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation notices
        qt = tq.quantize_dynamic(t, {getattr(torch.nn, mode)}, dtype=getattr(torch, dtype))
    qe = quantize_dynamic(e, {getattr(nn, mode)}, dtype=getattr(ember, dtype))
    return e, qe, qt


CASES = [("LSTM", dict(num_layers=2, bidirectional=True)), ("GRU", {}), ("LSTM", dict(batch_first=True))]


@pytest.mark.parametrize("mode,kwargs", CASES)
def test_int8_weights_and_repr_equal_torch(mode, kwargs):
    _, qe, qt = pair(mode, "qint8", **kwargs)
    assert repr(qe[0]) == repr(qt[0])
    weights, tweights = qe[0].get_weight(), qt[0].get_weight()
    assert list(weights) == list(tweights)
    for name, w in weights.items():
        np.testing.assert_array_equal(w.int_repr().numpy(), tweights[name].int_repr().numpy())
        assert w.q_scale() == tweights[name].q_scale()
    biases, tbiases = qe[0].get_bias(), qt[0].get_bias()
    assert sorted(biases) == sorted(tbiases)
    for name, b in biases.items():
        assert_close(b, tbiases[name], rtol=0, atol=0)


@pytest.mark.parametrize("mode,kwargs", CASES)
def test_output_is_the_float_layer_on_dequantized_weights(mode, kwargs):
    e, qe, qt = pair(mode, "qint8", **kwargs)
    reference = e[0]
    with ember.no_grad():
        for names, (w_ih, w_hh, *_) in zip(reference._all_weights, qe[0]._layer_weights()):
            getattr(reference, names[0]).copy_(w_ih)
            getattr(reference, names[1]).copy_(w_hh)
    x = ember.randn(3, 7, 6) if kwargs.get("batch_first") else ember.randn(7, 3, 6)
    out, state = qe(x)
    ref_out, ref_state = reference(x)
    assert_close(out, to_torch(ref_out.detach()), rtol=0, atol=1e-6)
    # torch also rounds each step's input and hidden state to 8 bits: measured 2e-3 to 8e-3 here
    assert_close(out, qt(to_torch(x))[0], rtol=0, atol=0.03)


def test_first_lstm_step_within_the_activation_rounding_bound():
    """One step from h0 = c0 = 0: torch's gate pre-activations differ from ember's by at most
    e = s_x / 2 * sum_k |dequant(W_ih)_jk| (h0 = 0 rounds exactly). With sigmoid' <= 1/4 and
    tanh' <= 1, c1 = i g and h1 = o tanh(c1) differ by at most e_i / 4 + e_g + e_o / 4."""
    _, qe, qt = pair("LSTM", "qint8")
    x = ember.randn(1, 5, 6) * 2
    xs = x.numpy()
    s_x = (max(xs.max(), 0) - min(xs.min(), 0)) / 127
    e = s_x / 2 * np.abs(qe[0].get_weight()["weight_ih_l0"].dequantize().numpy()).sum(1)
    e_i, _, e_g, e_o = e.reshape(4, 8)
    bound = e_i / 4 + e_g + e_o / 4
    diff = np.abs(qe(x)[0].detach().numpy() - qt(to_torch(x))[0].numpy())
    assert (diff <= bound + 1e-6).all()
    assert diff.max() > 0.01 * bound.max()  # torch does round: the comparison is not vacuous


@pytest.mark.parametrize("mode,kwargs", CASES[:2])
def test_float16_matches_torch(mode, kwargs):
    _, qe, qt = pair(mode, "float16", **kwargs)
    assert repr(qe[0]) == repr(qt[0])
    x = ember.randn(7, 3, 6)
    h0 = ember.rand(4 if kwargs else 1, 3, 8) - 0.5
    hx = (h0, 2 * h0) if mode == "LSTM" else h0
    thx = tuple(map(to_torch, hx)) if mode == "LSTM" else to_torch(hx)
    out, state = qe[0](x, hx)
    tout, tstate = qt[0](to_torch(x), thx)
    assert_close(out, tout, rtol=0, atol=1e-6)
    for s, ts in zip(state if mode == "LSTM" else (state,), tstate if mode == "LSTM" else (tstate,)):
        assert_close(s, ts, rtol=0, atol=1e-6)


def test_int8_lstm_stores_a_quarter_of_the_bytes_and_checks_input():
    ember.manual_seed(0)
    lstm = nn.Sequential(nn.LSTM(64, 64))
    q = quantize_dynamic(lstm, {nn.LSTM})

    def nbytes(m):
        return sum(v.numel() * v.element_size() for v in m.state_dict().values())

    assert nbytes(q) == 2 * 256 * 64 + 4 * 2 * 256 + 2 * (8 + 8)
    assert nbytes(q) / nbytes(lstm) < 0.27
    with pytest.raises(ValueError, match="float32"):
        q[0](ember.randn(3, 2, 64, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="input_size"):
        q[0](ember.randn(3, 2, 63))


def test_projection_and_no_bias_run_the_float_layer_on_dequantized_weights():
    ember.manual_seed(0)
    float_lstm = nn.LSTM(6, 8, num_layers=2, bias=False, proj_size=3, bidirectional=True)
    q = quantize_dynamic(nn.Sequential(float_lstm), {nn.LSTM})[0]
    assert list(q.get_bias()) == [] and "weight_hr_l1_reverse" in q.get_weight()
    position = {"weight_ih": 0, "weight_hh": 1, "weight_hr": 4}
    with ember.no_grad():
        for names, weights in zip(float_lstm._all_weights, q._layer_weights()):
            for name in names:
                getattr(float_lstm, name).copy_(weights[position[name.split("_l")[0]]])
    x = ember.randn(4, 2, 6)
    (out, (h, c)), (ref, (ref_h, ref_c)) = q(x), float_lstm(x)
    for a, b in ((out, ref), (h, ref_h), (c, ref_c)):
        assert_close(a, to_torch(b.detach()), rtol=0, atol=1e-6)
    assert out.shape == (4, 2, 6) and h.shape == (4, 2, 3)
