"""Transformer layers and stacks against torch with torch's weights loaded (dropout 0):
outputs, input and parameter gradients in train and eval mode, over norm_first, batch_first,
activations, bias, masks and padding; state_dict keys, the causal mask, warnings and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, to_ember

D_MODEL, NHEAD, FF = 8, 2, 16


def _pair(cls_name, *args, **kwargs):
    """The same module in torch and ember (dropout 0), ember's loaded from torch's state_dict."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor's note, checked in its own test
        t = _build(torch, cls_name, *args, **kwargs)
        e = _build(ember, cls_name, *args, **kwargs)
    assert list(e.state_dict()) == list(t.state_dict())
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    return t, e


def _build(lib, cls_name, *args, **kwargs):
    kwargs = {k: (v(lib) if callable(v) and k == "activation" else v) for k, v in kwargs.items()}
    if cls_name == "TransformerEncoder":
        layer = lib.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, dropout=0.0, **kwargs)
        return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(D_MODEL))
    if cls_name == "TransformerDecoder":
        layer = lib.nn.TransformerDecoderLayer(D_MODEL, NHEAD, FF, dropout=0.0, **kwargs)
        return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(D_MODEL))
    if cls_name == "Transformer":
        return lib.nn.Transformer(D_MODEL, NHEAD, 2, 1, FF, dropout=0.0, **kwargs)
    return getattr(lib.nn, cls_name)(D_MODEL, NHEAD, FF, dropout=0.0, **kwargs)


def _seq(rng, length, batch_first, n=3):
    shape = (n, length, D_MODEL) if batch_first else (length, n, D_MODEL)
    return rng.standard_normal(shape).astype(np.float32)


def _padding(n, length):
    m = np.zeros((n, length), bool)
    m[0, -1] = m[-1, 1] = True
    return m


def _run_and_compare(t, e, arrays, kwargs_np, training, rtol=1e-4, atol=1e-5):
    t.train(training)
    e.train(training)
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_in = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs_np.items()}
    e_kw = {k: ember.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs_np.items()}
    t_out, e_out = t(*t_in, **t_kw), e(*e_in, **e_kw)
    assert_close(e_out, t_out, rtol=rtol, atol=atol)
    g = np.random.default_rng(11).standard_normal(tuple(t_out.shape)).astype(np.float32)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g))
    for x, y in zip(e_in, t_in):
        assert_close(x.grad, y.grad, rtol=rtol, atol=atol)
    e_params = dict(e.named_parameters())
    for name, p in t.named_parameters():
        assert_close(e_params[name].grad, p.grad, rtol=rtol, atol=atol)


LAYER_OPTIONS = {
    "default": {},
    "norm-first": {"norm_first": True},
    "batch-first": {"batch_first": True},
    "gelu-name": {"activation": "gelu", "batch_first": True, "norm_first": True},
    "callable": {"activation": lambda lib: lib.nn.functional.silu},
    "module-activation": {"activation": lambda lib: lib.nn.Tanh()},
    "no-bias": {"bias": False, "layer_norm_eps": 1e-3},
}


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("option", list(LAYER_OPTIONS))
def test_encoder_layer(option, training):
    kwargs = LAYER_OPTIONS[option]
    t, e = _pair("TransformerEncoderLayer", **kwargs)
    bf = kwargs.get("batch_first", False)
    rng = np.random.default_rng(0)
    masks = {"src_key_padding_mask": _padding(3, 5)} if option in ("default", "batch-first") else {}
    if option == "norm-first":
        masks = {"src_mask": np.triu(np.full((5, 5), -np.inf, np.float32), 1), "is_causal": True}
    _run_and_compare(t, e, [_seq(rng, 5, bf)], masks, training)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("option", list(LAYER_OPTIONS))
def test_decoder_layer(option, training):
    kwargs = LAYER_OPTIONS[option]
    t, e = _pair("TransformerDecoderLayer", **kwargs)
    bf = kwargs.get("batch_first", False)
    rng = np.random.default_rng(1)
    masks = {}
    if option in ("default", "batch-first"):
        masks = {"tgt_mask": np.triu(np.full((4, 4), -np.inf, np.float32), 1), "tgt_is_causal": True,
                 "memory_key_padding_mask": _padding(3, 6), "tgt_key_padding_mask": _padding(3, 4)}
    elif option == "norm-first":
        masks = {"memory_mask": np.random.default_rng(2).random((4, 6)) < 0.3}
    _run_and_compare(t, e, [_seq(rng, 4, bf), _seq(rng, 6, bf)], masks, training)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_encoder_stack(batch_first, training):
    t, e = _pair("TransformerEncoder", batch_first=batch_first)
    rng = np.random.default_rng(3)
    causal = np.triu(np.full((5, 5), -np.inf, np.float32), 1)  # detected as causal (is_causal=None)
    _run_and_compare(t, e, [_seq(rng, 5, batch_first)], {"mask": causal, "src_key_padding_mask": _padding(3, 5)},
                     training)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_stack(norm_first):
    t, e = _pair("TransformerDecoder", norm_first=norm_first)
    rng = np.random.default_rng(4)
    _run_and_compare(t, e, [_seq(rng, 4, False), _seq(rng, 6, False)],
                     {"tgt_mask": ember.nn.Transformer.generate_square_subsequent_mask(4).numpy(),
                      "memory_key_padding_mask": _padding(3, 6)}, True)


@pytest.mark.parametrize("kwargs", [{}, {"batch_first": True, "norm_first": True, "activation": "gelu"}])
def test_transformer(kwargs):
    t, e = _pair("Transformer", **kwargs)
    bf = kwargs.get("batch_first", False)
    rng = np.random.default_rng(5)
    masks = {"tgt_mask": np.triu(np.full((4, 4), -np.inf, np.float32), 1), "src_key_padding_mask": _padding(3, 6),
             "memory_key_padding_mask": _padding(3, 6)}
    _run_and_compare(t, e, [_seq(rng, 6, bf), _seq(rng, 4, bf)], masks, True)


def test_transformer_unbatched():
    t, e = _pair("Transformer")
    rng = np.random.default_rng(6)
    src, tgt = rng.standard_normal((6, D_MODEL)).astype(np.float32), rng.standard_normal((4, D_MODEL)).astype(np.float32)
    _run_and_compare(t, e, [src, tgt], {"src_key_padding_mask": np.array([0, 0, 0, 0, 1, 1], bool)}, False)


def test_encoder_inference_fast_path_without_padding():
    """torch's fused inference kernel (eval, no grad, batch_first) agrees with the layers."""
    t, e = _pair("TransformerEncoder", batch_first=True)
    t.eval()
    e.eval()
    x = np.random.default_rng(7).standard_normal((3, 5, D_MODEL)).astype(np.float32)
    with torch.no_grad():
        t_out = t(torch.tensor(x))
    with ember.no_grad():
        e_out = e(ember.tensor(x))
    assert_close(e_out, t_out, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls_name", ["TransformerEncoderLayer", "TransformerDecoderLayer"])
def test_layer_defaults_and_state_dict(cls_name):
    torch.manual_seed(0)
    t, e = getattr(torch.nn, cls_name)(16, 4), getattr(ember.nn, cls_name)(16, 4)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [tuple(v.shape) for v in e.state_dict().values()] == [tuple(v.shape) for v in t.state_dict().values()]
    assert e.linear1.out_features == 2048 and e.dropout.p == 0.1 and e.norm1.eps == 1e-5
    assert e.activation is ember.nn.functional.relu and not e.norm_first
    assert repr(e) == repr(t)


def test_transformer_state_dict_and_init():
    torch.manual_seed(0)
    t = torch.nn.Transformer(16, 4, 2, 2, 32)
    e = ember.nn.Transformer(16, 4, 2, 2, 32)
    assert list(e.state_dict()) == list(t.state_dict())
    assert e.d_model == 16 and e.nhead == 4 and not e.batch_first
    # Every matrix is re-drawn with xavier_uniform_, the LayerNorms and biases keep theirs.
    w = e.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    np.testing.assert_array_equal(e.encoder.norm.weight.detach().numpy(), 1.0)


def test_custom_encoder_decoder():
    encoder = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(8, 2, 16), 1,
                                          enable_nested_tensor=False)
    decoder = ember.nn.Identity()
    model = ember.nn.Transformer(8, 2, custom_encoder=encoder, custom_decoder=decoder)
    assert model.encoder is encoder and model.decoder is decoder
    assert list(model.state_dict()) == [f"encoder.{k}" for k in encoder.state_dict()]


@pytest.mark.parametrize("size", [1, 4])
def test_generate_square_subsequent_mask(size):
    e = ember.nn.Transformer.generate_square_subsequent_mask(size)
    t = torch.nn.Transformer.generate_square_subsequent_mask(size)
    assert_close(e, t)
    assert ember.nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64).dtype is ember.float64


@pytest.mark.parametrize("layer_kwargs", [{}, {"batch_first": True, "norm_first": True},
                                          {"batch_first": True, "activation": "gelu"},
                                          {"batch_first": True, "bias": False}])
def test_enable_nested_tensor_warning_matches_torch(layer_kwargs):
    messages = []
    for lib in (torch, ember):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, **layer_kwargs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.TransformerEncoder(layer, 1)
        messages.append([str(w.message) for w in caught if "enable_nested_tensor" in str(w.message)])
    assert messages[0] == messages[1]


def test_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        ember.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        ember.nn.TransformerDecoderLayer(8, 3)
    model = ember.nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(ember.zeros(5, 2, 8), ember.zeros(4, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(ember.zeros(5, 2, 8), ember.zeros(4, 2, 6))
    layer = ember.nn.TransformerEncoderLayer(8, 2, 16)
    with pytest.raises(AssertionError, match="only bool and floating types of src_key_padding_mask"):
        layer(ember.zeros(5, 2, 8), src_key_padding_mask=ember.zeros(2, 5, dtype=ember.int64))
