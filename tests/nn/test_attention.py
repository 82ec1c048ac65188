"""F.scaled_dot_product_attention, F.multi_head_attention_forward and nn.MultiheadAttention
against torch: values and gradients (of query, key, value, float masks and every parameter)
over mask kinds and shapes, causal masks, GQA, scales, ranks 2 to 5, layouts, padding and the
bias/zero keys; state_dict keys; the errors torch raises."""
import numpy as np
import pytest
import torch

import ember
from harness import B, Case, I, R, V, check, inf, params
from torchcompare import assert_close, to_ember


def sdpa(**kw):
    return lambda L, q, k, v, *mask: L.nn.functional.scaled_dot_product_attention(
        q, k, v, *mask, **kw)


def sdpa_math(**kw):
    """SDPA through torch's math kernel, which (unlike its CPU flash kernel) has second
    derivatives."""
    def fn(L, *args):
        if L is ember:
            return sdpa(**kw)(L, *args)
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
            return sdpa(**kw)(L, *args)
    return fn


ROW_MASKED = [[True] * 5, [False] * 5, [True, False, True, False, True], [False, False, False, False, True]]
ROW_MASKED_FLOAT = [[0.0] * 5, [-inf] * 5, [0.5, -inf, 1.0, -inf, -2.0], [-inf, -inf, -inf, -inf, 0.3]]

SDPA_CASES = [
    Case("rank4", sdpa_math(), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8), grad2=True),
    Case("rank3", sdpa(), R(3, 4, 8), R(3, 5, 8), R(3, 5, 6)),
    Case("rank2", sdpa(), R(4, 8), R(5, 8), R(5, 8)),
    Case("rank5", sdpa(), R(2, 2, 3, 4, 8), R(2, 2, 3, 5, 8), R(2, 2, 3, 5, 8)),
    Case("value-dim", sdpa(), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 3)),
    Case("broadcast-batch", sdpa(), R(2, 3, 4, 8), R(3, 5, 8), R(1, 3, 5, 8)),
    Case("scale", sdpa(scale=0.3), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8)),
    Case("scale-negative", sdpa(scale=-0.5), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8)),
    Case("scale-zero", sdpa(scale=0.0), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8)),
    Case("causal", sdpa_math(is_causal=True), R(2, 3, 5, 8), R(2, 3, 5, 8), R(2, 3, 5, 8), grad2=True),
    Case("mask-float-grad2", sdpa_math(), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8), R(4, 5), grad2=True),
    Case("causal-and-mask-bool", sdpa(is_causal=True), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8),
         V([[True] * 5, [False, True, True, False, True], [True, False, True, True, False], [True] * 5])),
    Case("causal-and-mask-float", sdpa(is_causal=True), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8),
         R(4, 5, grad=False)),
    Case("causal-and-mask-needing-grad", sdpa(is_causal=True), R(1, 2, 4, 8), R(1, 2, 5, 8), R(1, 2, 5, 8), R(4, 5)),
    Case("causal-short-query", sdpa(is_causal=True), R(2, 3, 4, 8), R(2, 3, 6, 8), R(2, 3, 6, 8)),
    Case("causal-long-query", sdpa(is_causal=True), R(2, 6, 8), R(2, 3, 8), R(2, 3, 8)),
    Case("gqa", sdpa(enable_gqa=True), R(2, 6, 4, 8), R(2, 2, 5, 8), R(2, 3, 5, 8)),
    Case("gqa-rank3", sdpa(enable_gqa=True), R(4, 4, 8), R(1, 5, 8), R(2, 5, 8)),
    Case("gqa-causal", sdpa(enable_gqa=True, is_causal=True), R(1, 4, 5, 8), R(1, 2, 5, 8), R(1, 2, 5, 8)),
    Case("gqa-same-heads", sdpa(enable_gqa=True), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8)),
    Case("empty-query", sdpa(), R(2, 3, 0, 8), R(2, 3, 5, 8), R(2, 3, 5, 8)),
    Case("empty-keys", sdpa(), R(2, 3, 4, 8), R(2, 3, 0, 8), R(2, 3, 0, 8)),
    Case("dropout-all", sdpa(dropout_p=1.0), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8)),
    Case("fully-masked-bool", sdpa(), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8), V(ROW_MASKED)),
    Case("fully-masked-float", sdpa(), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8), V(ROW_MASKED_FLOAT)),
    Case("float32-mask-float64-query", sdpa(), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8), R(4, 5, dtype="float32"),
         dtypes=("float64",)),
] + [
    Case(f"mask-{kind}-{'x'.join(map(str, shape))}", sdpa(), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8), make(*shape))
    for kind, make in (("bool", B), ("float", R))
    for shape in ((4, 5), (1, 5), (4, 1), (3, 4, 5), (2, 1, 4, 5), (2, 3, 4, 5), (1, 1, 1, 1))
] + [
    Case("mask-rank3-query", sdpa(), R(3, 4, 8), R(3, 5, 8), R(3, 5, 8), R(3, 1, 5)),
    # A mask of rank 0 or 1: broadcast on rank-3 inputs, IndexError from torch's 4-D CPU kernel.
    Case("mask-1d-rank3-query", sdpa(), R(3, 4, 8), R(3, 5, 8), R(3, 5, 8), B(5)),
    Case("mask-1d-rank4-query", sdpa(), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8), B(5)),
    Case("mask-0d-rank4-query", sdpa(), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8), V(0.5, grad=False)),
    Case("mask-1d-needing-grad", sdpa(), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8), R(5)),
    # torch raises; ember must raise the same class.
    Case("error-embedding-size", sdpa(), R(2, 4, 8), R(2, 5, 7), R(2, 5, 8)),
    Case("error-heads", sdpa(), R(2, 3, 4, 8), R(2, 2, 5, 8), R(2, 2, 5, 8)),
    Case("error-gqa-heads", sdpa(enable_gqa=True), R(2, 4, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8)),
    Case("error-mask-shape", sdpa(), R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 8), B(3, 5)),
    Case("error-mask-grows", sdpa(), R(3, 4, 8), R(3, 5, 8), R(3, 5, 8), B(1, 3, 4, 5)),
    Case("mask-1d", sdpa(), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8), B(5)),
    Case("error-mask-int", sdpa(), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8), I(4, 5)),
    Case("error-mask-float64", sdpa(), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8), R(4, 5, dtype="float64"),
         dtypes=("float32",)),
    Case("error-int-inputs", sdpa(), I(2, 4, 8), I(2, 5, 8), I(2, 5, 8), dtypes=(None,)),
    Case("error-rank1", sdpa(), R(8), R(5, 8), R(5, 8)),
    Case("error-dtypes", sdpa(), R(2, 4, 8), R(2, 5, 8, dtype="float64"), R(2, 5, 8), dtypes=("float32",)),
    Case("error-dropout", sdpa(dropout_p=1.5), R(2, 4, 8), R(2, 5, 8), R(2, 5, 8)),
]


@pytest.mark.parametrize("case,dtype", params(SDPA_CASES))
def test_sdpa_vs_torch(case, dtype):
    check(case, dtype)


@pytest.mark.parametrize("mask,message", [
    (lambda L: L.ones(3, 5, dtype=L.bool),
     "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 2"),
    (lambda L: L.ones(1, 2, 3, 4, 5, dtype=L.bool),
     "output with shape [2, 3, 4, 5] doesn't match the broadcast shape [1, 2, 3, 4, 5]"),
    (lambda L: L.zeros(4, 5, dtype=L.int64),
     "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: long int "
     "and  query.dtype: float instead."),
])
def test_sdpa_mask_messages(mask, message):
    for lib in (torch, ember):
        q, k = lib.zeros(2, 3, 4, 8), lib.zeros(2, 3, 5, 8)
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.scaled_dot_product_attention(q, k, k, attn_mask=mask(lib))
        assert message in str(info.value), lib.__name__


def test_sdpa_input_messages():
    q, k = ember.zeros(2, 4, 8), ember.zeros(2, 5, 8)
    with pytest.raises(RuntimeError, match="query.dtype: float key.dtype: double and value.dtype: float"):
        ember.nn.functional.scaled_dot_product_attention(q, k.double(), k)
    with pytest.raises(RuntimeError, match="at least 2 dimensional, but got query.dim: 1 key.dim: 3"):
        ember.nn.functional.scaled_dot_product_attention(q[0, 0], k, k)
    with pytest.raises(RuntimeError, match="must divide the number of heads in query"):
        ember.nn.functional.scaled_dot_product_attention(ember.zeros(1, 3, 4, 8), ember.zeros(1, 2, 5, 8),
                                                         ember.zeros(1, 2, 5, 8), enable_gqa=True)
    with pytest.raises(TypeError, match="argument 'query'"):
        ember.nn.functional.scaled_dot_product_attention([1.0], k, k)


def test_sdpa_mask_with_is_causal_is_an_error():
    """torch 2.13 refuses the pair except on 4-D inputs, where its CPU kernel applies both
    (the causal-and-mask cases above)."""
    q = ember.zeros(1, 4, 8)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        ember.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(4, 4, dtype=ember.bool),
                                                         is_causal=True)


def test_sdpa_dropout_zeroes_weights_and_rescales():
    ember.manual_seed(0)
    q, k = ember.zeros(1, 64, 8), ember.zeros(1, 64, 8)
    v = ember.ones(1, 64, 1)
    out = ember.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    # Uniform weights 1/64: each output is (kept keys) * 2 / 64, around 1, never all 1.
    values = out.numpy().reshape(-1)
    assert not np.allclose(values, 1.0)
    assert abs(values.mean() - 1.0) < 0.15
    plain = ember.nn.functional.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(plain.numpy(), 1.0, rtol=1e-6)


# ---- multi-head attention ----------------------------------------------------------------------
def _pair(cls_name, *args, **kwargs):
    """The same module in torch and ember, ember's loaded from torch's state_dict."""
    t = getattr(torch.nn, cls_name)(*args, **kwargs)
    e = getattr(ember.nn, cls_name)(*args, **kwargs)
    assert list(e.state_dict()) == list(t.state_dict())
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    return t, e


def _compare_grads(e_module, t_module, e_inputs, t_inputs, rtol=1e-4, atol=1e-5):
    e_params = dict(e_module.named_parameters())
    for name, p in t_module.named_parameters():
        if p.grad is None:
            assert e_params[name].grad is None or not np.any(e_params[name].grad.numpy()), name
        else:
            assert_close(e_params[name].grad, p.grad, rtol=rtol, atol=atol)
    for e, t in zip(e_inputs, t_inputs):
        if t.requires_grad:
            assert_close(e.grad, t.grad, rtol=rtol, atol=atol)


# Each scenario: module kwargs, inputs ("self", "kv" shared key/value, "cross"), forward kwargs,
# and masks given as numpy builders of (batch, L, S, heads).
def _kpm_bool(n, L, S, h):
    m = np.zeros((n, S), bool)
    m[0, 1] = m[-1, -1] = True
    return m


def _kpm_float(n, L, S, h):
    return np.where(_kpm_bool(n, L, S, h), -1e4, 0.25).astype(np.float32)


def _attn_bool(n, L, S, h):
    m = np.zeros((L, S), bool)
    m[0, 2:] = True
    return m


def _attn_float3(n, L, S, h):
    return np.random.default_rng(5).standard_normal((n * h, L, S)).astype(np.float32)


def _causal(n, L, S, h):
    return np.triu(np.full((L, S), -np.inf, np.float32), 1)


MHA_SCENARIOS = {
    "self": ({}, "self", {}),
    "self-no-weights": ({}, "self", {"need_weights": False}),
    "cross": ({}, "cross", {}),
    "shared-kv": ({}, "kv", {"average_attn_weights": False}),
    "batch-first": ({"batch_first": True}, "self", {}),
    "batch-first-cross-no-weights": ({"batch_first": True}, "cross", {"need_weights": False}),
    "kdim-vdim": ({"kdim": 5, "vdim": 7}, "cross", {}),
    "kdim-vdim-batch-first": ({"kdim": 5, "vdim": 7, "batch_first": True}, "cross", {"need_weights": False}),
    "no-bias": ({"bias": False}, "self", {}),
    "bias-kv": ({"add_bias_kv": True}, "cross", {"key_padding_mask": _kpm_bool, "attn_mask": _attn_bool}),
    "zero-attn": ({"add_zero_attn": True}, "self", {"key_padding_mask": _kpm_float}),
    "bias-kv-zero-attn": ({"add_bias_kv": True, "add_zero_attn": True}, "cross",
                          {"attn_mask": _attn_float3, "need_weights": False}),
    "padding-bool": ({}, "cross", {"key_padding_mask": _kpm_bool}),
    "padding-bool-no-weights": ({"batch_first": True}, "self", {"key_padding_mask": _kpm_bool, "need_weights": False}),
    "padding-float": ({}, "self", {"key_padding_mask": _kpm_float, "average_attn_weights": False}),
    "attn-mask-bool": ({}, "cross", {"attn_mask": _attn_bool}),
    "attn-mask-3d-float": ({}, "cross", {"attn_mask": _attn_float3, "need_weights": False}),
    "both-masks-bool": ({"batch_first": True}, "cross", {"attn_mask": _attn_bool, "key_padding_mask": _kpm_bool}),
    "causal-hint": ({"batch_first": True}, "self", {"attn_mask": _causal, "is_causal": True, "need_weights": False}),
    "causal-hint-weights": ({}, "self", {"attn_mask": _causal, "is_causal": True}),
    "causal-hint-padding": ({}, "self", {"attn_mask": _causal, "is_causal": True, "need_weights": False,
                                         "key_padding_mask": _kpm_bool}),
}


def _mha_inputs(lib_tensor, kind, module_kwargs, n, L, S, E, rng):
    bf = module_kwargs.get("batch_first", False)

    def draw(length, dim):
        shape = (n, length, dim) if bf else (length, n, dim)
        return rng.standard_normal(shape).astype(np.float32)

    q = draw(L, E)
    if kind == "self":
        return [q]
    k = draw(S, module_kwargs.get("kdim", E))
    if kind == "kv":
        return [q, k]
    return [q, k, draw(S, module_kwargs.get("vdim", E))]


def _as_qkv(tensors):
    return tensors * 3 if len(tensors) == 1 else [tensors[0], tensors[1], tensors[1]] if len(tensors) == 2 \
        else tensors


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name", list(MHA_SCENARIOS))
def test_multihead_attention_vs_torch(name, training):
    module_kwargs, kind, forward_kwargs = MHA_SCENARIOS[name]
    torch.manual_seed(0)
    n, L, E, heads = 3, 4, 8, 2
    S = L if kind == "self" else 5
    t, e = _pair("MultiheadAttention", E, heads, **module_kwargs)
    t.train(training)
    e.train(training)
    rng = np.random.default_rng(1)
    arrays = _mha_inputs(None, kind, module_kwargs, n, L, S, E, rng)
    t_leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_leaves = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_kw, e_kw = {}, {}
    for key, value in forward_kwargs.items():
        if callable(value):
            array = value(n, L, S, heads)
            t_kw[key], e_kw[key] = torch.tensor(array), ember.tensor(array)
        else:
            t_kw[key] = e_kw[key] = value
    t_out, t_weights = t(*_as_qkv(t_leaves), **t_kw)
    e_out, e_weights = e(*_as_qkv(e_leaves), **e_kw)
    assert_close(e_out, t_out, rtol=1e-4, atol=1e-5)
    if t_weights is None:
        assert e_weights is None
    else:
        assert_close(e_weights, t_weights, rtol=1e-4, atol=1e-6)
    g = rng.standard_normal(tuple(t_out.shape)).astype(np.float32)
    loss_t = (t_out * torch.tensor(g)).sum() + (0 if t_weights is None else (t_weights ** 2).sum())
    loss_e = (e_out * ember.tensor(g)).sum() + (0 if e_weights is None else (e_weights ** 2).sum())
    loss_t.backward()
    loss_e.backward()
    _compare_grads(e, t, e_leaves, t_leaves)


def test_multihead_attention_inference_fast_path():
    """torch's eval/no-grad fast path (native MHA kernel) gives the same values."""
    torch.manual_seed(0)
    t, e = _pair("MultiheadAttention", 8, 2, batch_first=True)
    t.eval()
    e.eval()
    x = np.random.default_rng(2).standard_normal((3, 5, 8)).astype(np.float32)
    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    with torch.no_grad():
        t_out, t_w = t(torch.tensor(x), torch.tensor(x), torch.tensor(x), key_padding_mask=torch.tensor(kpm))
    with ember.no_grad():
        xe = ember.tensor(x)
        e_out, e_w = e(xe, xe, xe, key_padding_mask=ember.tensor(kpm))
    assert_close(e_out, t_out, rtol=1e-4, atol=1e-5)
    assert_close(e_w, t_w, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_output_strides_are_torchs(batch_first):
    """batch_first output is a transposed view (``view`` refuses it), except on torch's fused
    inference path, whose output is contiguous; so ``.view`` works or fails as in torch."""
    outputs = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        m, x = lib.nn.MultiheadAttention(4, 2, batch_first=batch_first), lib.randn(2, 3, 4)
        strides = [m(x, x, x)[0].stride(), m(x, x, x, need_weights=False)[0].stride()]
        m.eval()
        with lib.no_grad():
            strides += [m(x, x, x)[0].stride(), m(x, x * 1, x)[0].stride()]
        strides.append(m(x, x, x)[0].stride())
        try:
            m.train()(x, x, x)[0].view(-1)
            strides.append("view ok")
        except RuntimeError as error:
            strides.append(type(error))
        outputs[lib.__name__] = strides
    assert outputs["ember"] == outputs["torch"]


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_every_key_padded(need_weights):
    """A batch entry whose keys are all padding: NaN through the weights path (a plain
    softmax), the output bias through SDPA's path (zero attention), as in torch."""
    torch.manual_seed(0)
    t, e = _pair("MultiheadAttention", 8, 2)
    x = np.random.default_rng(3).standard_normal((4, 2, 8)).astype(np.float32)
    kpm = np.zeros((2, 4), bool)
    kpm[1] = True
    t_out, _ = t(*[torch.tensor(x)] * 3, key_padding_mask=torch.tensor(kpm), need_weights=need_weights)
    e_out, _ = e(*[ember.tensor(x)] * 3, key_padding_mask=ember.tensor(kpm), need_weights=need_weights)
    assert_close(e_out, t_out, rtol=1e-4, atol=1e-5)
    assert np.isnan(e_out.detach().numpy()[:, 1]).all() == need_weights


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_unbatched(batch_first):
    torch.manual_seed(0)
    t, e = _pair("MultiheadAttention", 8, 4, batch_first=batch_first, kdim=6, vdim=6)
    rng = np.random.default_rng(4)
    q, kv = rng.standard_normal((3, 8)).astype(np.float32), rng.standard_normal((5, 6)).astype(np.float32)
    kpm = np.array([False, True, False, False, False])
    mask = rng.standard_normal((4, 3, 5)).astype(np.float32)
    t_out, t_w = t(torch.tensor(q), torch.tensor(kv), torch.tensor(kv), key_padding_mask=torch.tensor(kpm),
                   attn_mask=torch.tensor(mask), average_attn_weights=False)
    e_out, e_w = e(ember.tensor(q), ember.tensor(kv), ember.tensor(kv), key_padding_mask=ember.tensor(kpm),
                   attn_mask=ember.tensor(mask), average_attn_weights=False)
    assert_close(e_out, t_out, rtol=1e-4, atol=1e-5)
    assert_close(e_w, t_w, rtol=1e-4, atol=1e-6)


def test_multihead_attention_mask_gradient():
    torch.manual_seed(0)
    t, e = _pair("MultiheadAttention", 8, 2)
    x = np.random.default_rng(6).standard_normal((4, 2, 8)).astype(np.float32)
    mask = np.random.default_rng(7).standard_normal((4, 4)).astype(np.float32)
    t_mask, e_mask = torch.tensor(mask, requires_grad=True), ember.tensor(mask, requires_grad=True)
    t(*[torch.tensor(x)] * 3, attn_mask=t_mask)[0].sum().backward()
    e(*[ember.tensor(x)] * 3, attn_mask=e_mask)[0].sum().backward()
    assert_close(e_mask.grad, t_mask.grad, rtol=1e-4, atol=1e-6)


def test_mismatched_mask_types_warn_like_torch():
    torch.manual_seed(0)
    t, e = _pair("MultiheadAttention", 8, 2)
    x = np.zeros((4, 2, 8), np.float32)
    kpm, mask = np.zeros((2, 4), bool), np.zeros((4, 4), np.float32)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        e(*[ember.tensor(x)] * 3, key_padding_mask=ember.tensor(kpm), attn_mask=ember.tensor(mask))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        t(*[torch.tensor(x)] * 3, key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(mask))


def test_functional_multi_head_attention_static_kv():
    torch.manual_seed(0)
    t, _ = _pair("MultiheadAttention", 8, 2)
    rng = np.random.default_rng(8)
    q = rng.standard_normal((4, 3, 8)).astype(np.float32)
    static_k, static_v = (rng.standard_normal((6, 5, 4)).astype(np.float32) for _ in range(2))

    def run(lib, convert, params):
        return lib.nn.functional.multi_head_attention_forward(
            convert(q), convert(q), convert(q), 8, 2, params["in_proj_weight"], params["in_proj_bias"], None, None,
            False, 0.0, params["out_proj.weight"], params["out_proj.bias"], static_k=convert(static_k),
            static_v=convert(static_v), average_attn_weights=False)

    t_params = dict(t.named_parameters())
    e_params = {k: to_ember(v, requires_grad=True) for k, v in t_params.items()}
    t_out, t_w = run(torch, torch.tensor, t_params)
    e_out, e_w = run(ember, ember.tensor, e_params)
    assert_close(e_out, t_out, rtol=1e-4, atol=1e-5)
    assert_close(e_w, t_w, rtol=1e-4, atol=1e-6)
    t_out.sum().backward()
    e_out.sum().backward()
    for k, p in t_params.items():
        assert_close(e_params[k].grad, p.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 3, "vdim": 5, "add_bias_kv": True, "bias": False}])
def test_multihead_attention_state_dict_and_init(kwargs):
    t = torch.nn.MultiheadAttention(8, 2, **kwargs)
    e = ember.nn.MultiheadAttention(8, 2, **kwargs)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [tuple(v.shape) for v in e.state_dict().values()] == [tuple(v.shape) for v in t.state_dict().values()]
    assert repr(e) == repr(t)
    if "bias" not in kwargs:
        assert not np.any(e.in_proj_bias.detach().numpy()) and not np.any(e.out_proj.bias.detach().numpy())
        bound = np.sqrt(6 / (8 + 24))  # xavier_uniform_ over the packed (24, 8) weight
        w = e.in_proj_weight.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2


@pytest.mark.parametrize("call,cls,message", [
    (lambda L, m, x: m(x, x, x, attn_mask=L.zeros(4, 3)), RuntimeError, "but should be (4, 4)."),
    (lambda L, m, x: m(x, x, x, attn_mask=L.zeros(3, 4, 4)), RuntimeError, "but should be (4, 4, 4)."),
    (lambda L, m, x: m(x, x, x, attn_mask=L.zeros(1, 2, 4, 4)), AssertionError,
     "expected `attn_mask` to be `None`, 2-D or 3-D but found 4-D tensor instead"),
    (lambda L, m, x: m(x, x, x, key_padding_mask=L.zeros(2, 3, dtype=L.bool)), AssertionError,
     "Expected key_padded_mask.shape[1] to be 4, but got 3"),
    (lambda L, m, x: m(x, x, x, key_padding_mask=L.zeros(3, 4, dtype=L.bool)), AssertionError,
     "Expected key_padded_mask.shape[0] to be 2, but got 3"),
    (lambda L, m, x: m(x, x, x, key_padding_mask=L.zeros(2, 4, dtype=L.int64)), AssertionError,
     "only bool and floating types of key_padding_mask are supported"),
    (lambda L, m, x: m(x, x, x, attn_mask=L.zeros(4, 4, dtype=L.int64)), AssertionError,
     "only bool and floating types of attn_mask are supported"),
    (lambda L, m, x: m(x, x, x, is_causal=True), RuntimeError, "Need attn_mask if specifying the is_causal hint"),
    (lambda L, m, x: m(x[:, :, :6], x[:, :, :6], x[:, :, :6]), AssertionError,
     "was expecting embedding dimension of 8, but got 6"),
    (lambda L, m, x: m(x[None], x[None], x[None]), AssertionError,
     "query should be unbatched 2D or batched 3D tensor but received 4-D query tensor"),
    (lambda L, m, x: m(x, x[0], x), AssertionError, "expected `key` and `value` to be 3-D but found 2-D and 3-D"),
    (lambda L, m, x: m(x, x, x[:3]), AssertionError, "does not match value shape"),
])
def test_multihead_attention_errors(call, cls, message):
    torch.manual_seed(0)
    t, e = _pair("MultiheadAttention", 8, 2)
    for lib, module in ((torch, t), (ember, e)):
        with pytest.raises(cls) as info:
            call(lib, module, lib.zeros(4, 2, 8))
        assert message in str(info.value), (lib.__name__, str(info.value))


def test_multihead_attention_constructor_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        ember.nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        ember.nn.MultiheadAttention(0, 1)


def test_gqa_shares_key_heads():
    """Each key/value head serves consecutive query heads: equal to repeating them by hand."""
    rng = np.random.default_rng(9)
    q, k, v = (ember.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((1, 4, 3, 8), (1, 2, 5, 8),
                                                                                    (1, 2, 5, 8)))
    grouped = ember.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    repeated = ember.nn.functional.scaled_dot_product_attention(q, k[:, [0, 0, 1, 1]], v[:, [0, 0, 1, 1]])
    np.testing.assert_allclose(grouped.numpy(), repeated.numpy(), rtol=1e-6)
