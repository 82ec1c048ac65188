"""Dynamically quantized LSTMCell, GRUCell and RNNCell against torch.ao.nn.quantized.dynamic:
the same int8 weights (one scale per matrix) and biases, outputs equal to the float cell run
on the dequantized weights, and close to torch's within the rounding of activations its int8
kernels add.

Bound against torch: its kernels round the input x and the hidden state h to 7-bit unsigned
integers (scale s = (max(t, 0) - min(t, 0)) / 127 per tensor, each entry off by at most s / 2),
so row j of ``x W_ih^T`` is off by at most ``e_x[j] = s_x / 2 * sum_k |dequant(W_ih)_jk|`` and of
``h W_hh^T`` by ``e_h[j]`` likewise. With sigmoid' <= 1/4, tanh and relu 1-Lipschitz, and gates
in [0, 1], g and n in [-1, 1], the step's output moves by at most (e = e_x + e_h per gate):
- RNNCell: e;
- LSTMCell: c' by |c| e_f / 4 + e_i / 4 + e_g, h' by that plus e_o / 4;
- GRUCell (A = h W_hn^T + b_hn): r and z by e_r / 4 and e_z / 4, n by
  e_x,n + e_r / 4 (|A| + e_h,n) + e_h,n, h' = (1 - z) n + z h by that plus e_z / 4 |h - n|.
"""
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.ao.quantization import quantize_dynamic
from torchcompare import assert_close, to_torch, torch

tq = pytest.importorskip("torch.ao.quantization")
nnqd = pytest.importorskip("torch.ao.nn.quantized.dynamic")
SLACK = 1e-6  # float32 rounding of the gate arithmetic

CELLS = [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu"))]


def pair(mode, kwargs, spec="type", dtype="qint8"):
    """A float cell inside a Sequential, its torch twin, and both quantized with ``spec``:
    "type" ({cell type}), "name" ({"0"}) or None (the default spec)."""
    ember.manual_seed(0)
    e = nn.Sequential(getattr(nn, mode)(6, 8, **kwargs))
    t = torch.nn.Sequential(getattr(torch.nn, mode)(6, 8, **kwargs))
    t.load_state_dict({k: to_torch(v) for k, v in e.state_dict().items()})
    specs = {"type": ({getattr(nn, mode)}, {getattr(torch.nn, mode)}), "name": ({"0"}, {"0"}),
             None: (None, None)}
    espec, tspec = specs[spec]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation notices
        qt = tq.quantize_dynamic(t, tspec, dtype=getattr(torch, dtype))
    qe = quantize_dynamic(e, espec, dtype=getattr(ember, dtype))
    return e, qe, qt


@pytest.mark.parametrize("spec", ["type", "name", None])
@pytest.mark.parametrize("mode,kwargs", CELLS)
def test_int8_weights_biases_and_repr_equal_torch(mode, kwargs, spec):
    _, qe, qt = pair(mode, kwargs, spec)
    assert type(qt[0]) is getattr(nnqd, mode)  # torch converts it with this spec
    assert type(qe[0]) is getattr(ember.ao.nn.quantized.dynamic, mode)
    assert repr(qe[0]) == repr(qt[0])
    weights, tweights = qe[0].get_weight(), qt[0].get_weight()
    assert list(weights) == list(tweights) == ["weight_ih", "weight_hh"]
    for name, w in weights.items():
        assert w.dtype is ember.qint8
        np.testing.assert_array_equal(w.int_repr().numpy(), tweights[name].int_repr().numpy())
        assert w.q_scale() == tweights[name].q_scale() and w.q_zero_point() == tweights[name].q_zero_point()
    biases, tbiases = qe[0].get_bias(), qt[0].get_bias()
    assert list(biases) == list(tbiases) == ["bias_ih", "bias_hh"]
    for name, b in biases.items():
        assert_close(b, tbiases[name].detach(), rtol=0, atol=0)
        assert b is getattr(qe[0], name)
    assert qe[0].weight_dtype is ember.qint8 and not hasattr(qe[0], "weight_ih")


def error_bound(mode, cell, x, h, c):
    """The bound of the module docstring on |ember - torch| for one step (numpy arrays)."""
    weights = {k: w.dequantize().numpy() for k, w in cell.get_weight().items()}
    bias_hh = cell.get_bias()["bias_hh"].numpy()

    def e(t, w):
        s = (max(t.max(), 0) - min(t.min(), 0)) / 127
        return s / 2 * np.abs(w).sum(1)

    e_x, e_h = e(x, weights["weight_ih"]), e(h, weights["weight_hh"])
    if mode == "RNNCell":
        return e_x + e_h
    if mode == "LSTMCell":
        e_i, e_f, e_g, e_o = np.split(e_x + e_h, 4)
        return np.abs(c) * e_f / 4 + e_i / 4 + e_g + e_o / 4
    (ex_r, ex_z, ex_n), (eh_r, eh_z, eh_n) = np.split(e_x, 3), np.split(e_h, 3)
    hidden = h.shape[-1]
    a = h @ weights["weight_hh"][2 * hidden:].T + bias_hh[2 * hidden:]
    d_r, d_z = (ex_r + eh_r) / 4, (ex_z + eh_z) / 4
    d_n = ex_n + d_r * (np.abs(a) + eh_n) + eh_n
    return d_n + d_z * (np.abs(h) + 1)


@pytest.mark.parametrize("mode,kwargs", CELLS)
def test_output_is_the_float_cell_on_dequantized_weights_and_within_the_bound_of_torch(mode, kwargs):
    e, qe, qt = pair(mode, kwargs)
    reference, cell = e[0], qe[0]
    with ember.no_grad():
        for name, w in cell.get_weight().items():
            getattr(reference, name).copy_(w.dequantize())
    x, h, c = ember.randn(5, 6) * 2, ember.randn(5, 8), ember.randn(5, 8)
    hx = (h, c) if mode == "LSTMCell" else h
    out, ref = cell(x, hx), reference(x, hx)
    out, ref = (out[0], ref[0]) if mode == "LSTMCell" else (out, ref)
    assert_close(out, to_torch(ref.detach()), rtol=0, atol=1e-6)
    tout = qt[0](to_torch(x), tuple(map(to_torch, hx)) if mode == "LSTMCell" else to_torch(hx))
    tout = (tout[0] if mode == "LSTMCell" else tout).detach().numpy()
    bound = error_bound(mode, cell, x.numpy(), h.numpy(), c.numpy())
    diff = np.abs(out.detach().numpy() - tout)
    assert (diff <= bound + SLACK).all()
    assert diff.max() > 0.01 * bound.max()  # torch does round: the comparison is not vacuous


@pytest.mark.parametrize("mode,kwargs", CELLS[:3])
def test_unbatched_input_and_zero_state_follow_the_float_cell(mode, kwargs):
    e, qe, _ = pair(mode, kwargs)
    x = ember.randn(6)
    batched = qe[0](x.unsqueeze(0))
    single = qe[0](x)
    for a, b in zip(single if mode == "LSTMCell" else (single,), batched if mode == "LSTMCell" else (batched,)):
        assert a.shape == (8,)
        assert_close(a, to_torch(b[0].detach()), rtol=0, atol=0)


@pytest.mark.parametrize("mode,kwargs", CELLS[:3])
def test_float16_matches_torch(mode, kwargs):
    _, qe, qt = pair(mode, kwargs, dtype="float16")
    assert repr(qe[0]) == repr(qt[0]) and qe[0].weight_dtype is ember.float16
    for name, w in qe[0].get_weight().items():
        assert_close(w, qt[0].get_weight()[name], rtol=0, atol=0)
    x, h = ember.randn(5, 6), ember.randn(5, 8)
    hx = (h, 2 * h) if mode == "LSTMCell" else h
    out = qe[0](x, hx)
    tout = qt[0](to_torch(x), tuple(map(to_torch, hx)) if mode == "LSTMCell" else to_torch(hx))
    for a, b in zip(out if mode == "LSTMCell" else (out,), tout if mode == "LSTMCell" else (tout,)):
        assert_close(a, b.detach(), rtol=0, atol=1e-5)


def test_default_spec_converts_cells_next_to_other_layers():
    ember.manual_seed(0)
    model = nn.ModuleDict({"lin": nn.Linear(4, 6), "lstm": nn.LSTMCell(6, 8), "gru": nn.GRUCell(6, 8),
                           "rnn": nn.RNNCell(6, 8), "emb": nn.Embedding(3, 4)})
    tmodel = torch.nn.ModuleDict({"lin": torch.nn.Linear(4, 6), "lstm": torch.nn.LSTMCell(6, 8),
                                  "gru": torch.nn.GRUCell(6, 8), "rnn": torch.nn.RNNCell(6, 8),
                                  "emb": torch.nn.Embedding(3, 4)})
    for dtype in ("qint8", "float16"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            qt = tq.quantize_dynamic(tmodel, dtype=getattr(torch, dtype))
        assert repr(quantize_dynamic(model, dtype=getattr(ember, dtype))) == repr(qt)


def test_state_dict_round_trip():
    ember.manual_seed(0)
    q = quantize_dynamic(nn.Sequential(nn.LSTMCell(6, 8)))
    fresh = quantize_dynamic(nn.Sequential(nn.LSTMCell(6, 8)))
    x = ember.randn(3, 6)
    assert not np.allclose(fresh(x)[0].detach().numpy(), q(x)[0].detach().numpy())
    fresh.load_state_dict(q.state_dict())
    assert_close(fresh(x)[0], to_torch(q(x)[0].detach()), rtol=0, atol=0)
    assert sorted(q.state_dict()) == sorted(f"0._packed_weight_{k}.{b}" for k in ("ih", "hh")
                                            for b in ("qweight", "scale", "zero_point", "bias"))


@pytest.mark.parametrize("mode", ["LSTMCell", "GRUCell", "RNNCell"])
def test_errors_match_torch(mode):
    def both(make_e, make_t):
        with pytest.raises(Exception) as t_error, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_t()
        with pytest.raises(t_error.type) as e_error:
            make_e()
        return str(t_error.value), str(e_error.value)

    no_bias = both(lambda: quantize_dynamic(nn.Sequential(getattr(nn, mode)(2, 3, bias=False))),
                   lambda: tq.quantize_dynamic(torch.nn.Sequential(getattr(torch.nn, mode)(2, 3, bias=False))))
    assert no_bias[0] == no_bias[1] == "mod.bias must be True"
    quint8 = both(lambda: quantize_dynamic(nn.Sequential(getattr(nn, mode)(2, 3)), {getattr(nn, mode)},
                                           dtype=ember.quint8),
                  lambda: tq.quantize_dynamic(torch.nn.Sequential(getattr(torch.nn, mode)(2, 3)),
                                              {getattr(torch.nn, mode)}, dtype=torch.quint8))
    assert quint8[1] == quint8[0] and "quint8" in quint8[1]
    qcell = quantize_dynamic(nn.Sequential(getattr(nn, mode)(2, 3)))[0]
    with pytest.raises(RuntimeError, match="input_size"):
        qcell(ember.randn(4, 5))
    with pytest.raises(RuntimeError, match="dtype"):  # torch: RuntimeError, expected scalar type Float
        qcell(ember.randn(4, 2, dtype=ember.float64))
    with pytest.raises(AssertionError, match=mode):
        type(qcell).from_float(nn.Linear(2, 3))
