"""Weights trained in PyTorch load into ember's sequence modules and give torch's outputs:
nn.Transformer, nn.LSTM (with projections), nn.GRU, nn.RNN and nn.MultiheadAttention.

A torch module's state_dict is saved "as arrays" (``{k: v.numpy()}`` with ``np.savez``, or
with safetensors when it is installed), read back with NumPy, loaded into the ember module
with ``load_state_dict({k: ember.tensor(v)})``, and both modules are run in eval mode
(dropout 0) on the same inputs, masks included.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402


def save_npz(module, path):
    np.savez(path / "weights.npz", **{k: v.detach().numpy() for k, v in module.state_dict().items()})
    with np.load(path / "weights.npz") as arrays:
        return {k: arrays[k] for k in arrays.files}


def save_safetensors(module, path):
    safetensors = pytest.importorskip("safetensors.numpy")
    safetensors.save_file({k: v.detach().numpy() for k, v in module.state_dict().items()},
                          str(path / "weights.safetensors"))
    return safetensors.load_file(str(path / "weights.safetensors"))


@pytest.fixture(params=[save_npz, save_safetensors], ids=["npz", "safetensors"])
def transfer(request, tmp_path):
    """Saves a torch module's weights as arrays and loads them into an ember module;
    returns both modules in eval mode."""
    def load(torch_module, ember_module):
        arrays = request.param(torch_module, tmp_path)
        assert set(arrays) == set(ember_module.state_dict())
        result = ember_module.load_state_dict({k: ember.tensor(v) for k, v in arrays.items()})
        assert list(result.missing_keys) == list(result.unexpected_keys) == []
        for key, value in ember_module.state_dict().items():
            np.testing.assert_array_equal(value.numpy(), arrays[key], err_msg=key)
        return torch_module.eval(), ember_module.eval()
    return load


def random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_same_outputs(ember_out, torch_out):
    if isinstance(torch_out, (tuple, list)):
        assert isinstance(ember_out, (tuple, list)) and len(ember_out) == len(torch_out)
        for e, t in zip(ember_out, torch_out):
            assert_same_outputs(e, t)
    elif torch_out is None:
        assert ember_out is None
    else:
        assert tuple(ember_out.shape) == tuple(torch_out.shape)
        np.testing.assert_allclose(ember_out.detach().numpy(), torch_out.detach().numpy(),
                                   rtol=1e-4, atol=3e-5)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer(transfer, batch_first, norm_first):
    kwargs = dict(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                  dim_feedforward=32, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    torch.manual_seed(0)
    torch_model, model = transfer(torch.nn.Transformer(**kwargs), ember.nn.Transformer(**kwargs))
    batch, source_length, target_length = 3, 5, 4
    src = random(batch, source_length, 16) if batch_first else random(source_length, batch, 16)
    tgt = random(*((batch, target_length) if batch_first else (target_length, batch)), 16, seed=1)
    padding = np.zeros((batch, source_length), dtype=bool)
    padding[1, -2:] = True
    causal = torch.nn.Transformer.generate_square_subsequent_mask(target_length).numpy()

    def run(lib, module, masked):
        if not masked:
            return module(lib.tensor(src), lib.tensor(tgt))
        return module(lib.tensor(src), lib.tensor(tgt), tgt_mask=lib.tensor(causal),
                      src_key_padding_mask=lib.tensor(padding),
                      memory_key_padding_mask=lib.tensor(padding), tgt_is_causal=True)
    for masked in (False, True):
        assert_same_outputs(run(ember, model, masked), run(torch, torch_model, masked))


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("kwargs", [
    dict(num_layers=2, bidirectional=True),
    dict(num_layers=2, bidirectional=True, proj_size=5),
    dict(num_layers=2, batch_first=True, proj_size=3),
], ids=["bidirectional", "bidirectional-proj", "batch_first-proj"])
def test_lstm(transfer, kwargs):
    torch.manual_seed(0)
    torch_lstm, lstm = transfer(torch.nn.LSTM(7, 8, **kwargs), ember.nn.LSTM(7, 8, **kwargs))
    layers = 2 * (2 if kwargs.get("bidirectional") else 1)
    batch = 3 if kwargs.get("batch_first") else 4
    x = random(3, 4, 7)
    h0 = random(layers, batch, kwargs.get("proj_size", 8), seed=1)
    c0 = random(layers, batch, 8, seed=2)
    assert_same_outputs(lstm(ember.tensor(x)), torch_lstm(torch.tensor(x)))
    assert_same_outputs(lstm(ember.tensor(x), (ember.tensor(h0), ember.tensor(c0))),
                        torch_lstm(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0))))


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(batch_first=True),
    dict(kdim=5, vdim=6),
    dict(add_bias_kv=True, add_zero_attn=True),
    dict(bias=False),
], ids=["default", "batch_first", "kdim-vdim", "bias_kv-zero_attn", "no-bias"])
def test_multihead_attention(transfer, kwargs):
    torch.manual_seed(0)
    torch_mha, mha = transfer(torch.nn.MultiheadAttention(12, 3, **kwargs),
                              ember.nn.MultiheadAttention(12, 3, **kwargs))
    batch, target_length, source_length = 2, 4, 5
    query_shape = (batch, target_length) if kwargs.get("batch_first") else (target_length, batch)
    source_shape = (batch, source_length) if kwargs.get("batch_first") else (source_length, batch)
    query = random(*query_shape, 12)
    key = random(*source_shape, kwargs.get("kdim", 12), seed=1)
    value = random(*source_shape, kwargs.get("vdim", 12), seed=2)
    padding = np.zeros((batch, source_length), dtype=bool)
    padding[0, -1] = True
    blocked = random(target_length, source_length, seed=3) > 1.0
    blocked[:, 0] = False  # no query row is fully masked
    bool_masks = dict(key_padding_mask=padding, attn_mask=blocked)
    float_masks = dict(key_padding_mask=np.where(padding, -np.inf, 0).astype(np.float32),
                       attn_mask=random(target_length, source_length, seed=4))

    def run(lib, module, masks=None, **options):
        return module(lib.tensor(query), lib.tensor(key), lib.tensor(value),
                      **{k: lib.tensor(v) for k, v in (masks or {}).items()}, **options)
    for masks in (bool_masks, float_masks):
        for average in (True, False):
            assert_same_outputs(run(ember, mha, masks, average_attn_weights=average),
                                run(torch, torch_mha, masks, average_attn_weights=average))
    assert_same_outputs(run(ember, mha, need_weights=False), run(torch, torch_mha, need_weights=False))


@pytest.mark.parametrize("kind,kwargs", [
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("RNN", dict(num_layers=2, nonlinearity="relu", batch_first=True)),
], ids=["gru-bidirectional", "rnn-relu-batch_first"])
def test_gru_and_rnn(transfer, kind, kwargs):
    torch.manual_seed(0)
    torch_rnn, rnn = transfer(getattr(torch.nn, kind)(7, 8, **kwargs), getattr(ember.nn, kind)(7, 8, **kwargs))
    x = random(3, 4, 7)
    h0 = random(2 * (2 if kwargs.get("bidirectional") else 1), 3 if kwargs.get("batch_first") else 4, 8, seed=1)
    assert_same_outputs(rnn(ember.tensor(x)), torch_rnn(torch.tensor(x)))
    assert_same_outputs(rnn(ember.tensor(x), ember.tensor(h0)), torch_rnn(torch.tensor(x), torch.tensor(h0)))
