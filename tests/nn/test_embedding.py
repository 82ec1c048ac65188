"""F.embedding, F.embedding_bag, nn.Embedding and nn.EmbeddingBag against torch: values and
gradients (repeated ids, padding_idx, scale_grad_by_freq, every bag mode), max_norm's in-place
renormalisation, from_pretrained, state_dict keys, reprs and the errors torch raises."""
import numpy as np
import pytest
import torch

import ember
from harness import Case, I, R, V, check, params
from torchcompare import assert_close, to_ember


def F(L):
    return L.nn.functional


def _ids(L, values, dtype="int64"):
    return L.tensor(np.asarray(values, dtype=dtype))


EMBEDDING_CASES = [
    Case("lookup", lambda L, i, w: F(L).embedding(i, w), I(4, 5, low=0, high=7), R(7, 3)),
    Case("repeated", lambda L, w: F(L).embedding(_ids(L, [[1, 1, 2], [1, 6, 6]]), w), R(7, 3), grad2=True),
    Case("int32", lambda L, w: F(L).embedding(_ids(L, [3, 0, 3], "int32"), w), R(7, 3)),
    Case("0d", lambda L, w: F(L).embedding(_ids(L, 4), w), R(7, 3)),
    Case("empty", lambda L, w: F(L).embedding(_ids(L, np.zeros((2, 0))), w), R(7, 3)),
    Case("padding", lambda L, w: F(L).embedding(_ids(L, [[2, 5, 2], [0, 2, 6]]), w, padding_idx=2), R(7, 3),
         grad2=True),
    Case("padding-negative", lambda L, w: F(L).embedding(_ids(L, [6, 1, 6, 5]), w, padding_idx=-1), R(7, 3)),
    Case("freq", lambda L, w: F(L).embedding(_ids(L, [[1, 1, 1], [2, 1, 4]]), w, scale_grad_by_freq=True),
         R(7, 3), grad2=True),
    Case("freq-padding", lambda L, w: F(L).embedding(_ids(L, [3, 3, 1, 0, 0]), w, padding_idx=0,
                                                     scale_grad_by_freq=True), R(7, 3)),
    Case("transposed-weight", lambda L, w: F(L).embedding(_ids(L, [1, 2]), w.t()), R(3, 7)),
    Case("out-of-range", lambda L, w: F(L).embedding(_ids(L, [1, 7]), w), R(7, 3)),
    Case("negative-id", lambda L, w: F(L).embedding(_ids(L, [-1]), w), R(7, 3)),
    Case("float-ids", lambda L, w: F(L).embedding(L.tensor([1.0]), w), R(7, 3)),
    Case("weight-1d", lambda L, w: F(L).embedding(_ids(L, [1]), w), R(7)),
    Case("padding-out", lambda L, w: F(L).embedding(_ids(L, [1]), w, padding_idx=7), R(7, 3)),
    Case("padding-out-negative", lambda L, w: F(L).embedding(_ids(L, [1]), w, padding_idx=-8), R(7, 3)),
]


@pytest.mark.parametrize("case,dtype", params(EMBEDDING_CASES))
def test_embedding_vs_torch(case, dtype):
    check(case, dtype)


@pytest.mark.parametrize("ids,message", [
    (lambda L: L.tensor([1, 7]), "index out of range in self"),
    (lambda L: L.tensor([-8]), "index out of range in self"),
])
def test_embedding_index_error_message(ids, message):
    with pytest.raises(IndexError, match=message):
        ember.nn.functional.embedding(ids(ember), ember.randn(7, 3))


@pytest.mark.parametrize("ids,cls,message", [
    (lambda L: L.tensor([1.0]), RuntimeError, "Long, Int; but got torch.FloatTensor instead"),
    (lambda L: L.tensor([1], dtype=L.int16), RuntimeError, "but got torch.ShortTensor instead"),
    (lambda L: L.tensor([True]), RuntimeError, "but got CPUBoolType instead"),
    (lambda L: [1, 2], TypeError, "must be Tensor, not list"),
])
def test_embedding_id_type_errors(ids, cls, message):
    with pytest.raises(cls) as ours:
        ember.nn.functional.embedding(ids(ember), ember.randn(7, 3))
    with pytest.raises(cls) as theirs:
        torch.nn.functional.embedding(ids(torch), torch.randn(7, 3))
    assert message in str(ours.value) and message in str(theirs.value)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_max_norm_renormalises_looked_up_rows_in_place(norm_type):
    rng = np.random.default_rng(0)
    weight = (rng.standard_normal((8, 4)) * 3).astype(np.float32)
    ids = np.array([[1, 2, 1], [0, 7, 7]])
    e_w, t_w = ember.tensor(weight.copy(), requires_grad=True), torch.tensor(weight.copy(), requires_grad=True)
    e_out = ember.nn.functional.embedding(ember.tensor(ids), e_w, max_norm=1.5, norm_type=norm_type)
    t_out = torch.nn.functional.embedding(torch.tensor(ids), t_w, max_norm=1.5, norm_type=norm_type)
    assert_close(e_out, t_out)
    assert_close(e_w, t_w)  # rows 0, 1, 2, 7 shrunk, the others untouched
    assert not np.allclose(e_w.detach().numpy(), weight)
    np.testing.assert_array_equal(e_w.detach().numpy()[3:7], weight[3:7])
    g = rng.standard_normal(t_out.shape).astype(np.float32)
    e_out.backward(ember.tensor(g))
    t_out.backward(torch.tensor(g))
    assert_close(e_w.grad, t_w.grad)
    assert e_w.grad_fn is None and e_w._version > 0


def test_embedding_module_matches_torch_and_gradients():
    t = torch.nn.Embedding(10, 4, padding_idx=-3, scale_grad_by_freq=True)
    e = ember.nn.Embedding(10, 4, padding_idx=-3, scale_grad_by_freq=True)
    assert e.padding_idx == t.padding_idx == 7
    assert np.all(e.weight.detach().numpy()[7] == 0)
    assert list(e.state_dict()) == list(t.state_dict()) == ["weight"]
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    ids = [[7, 1, 1, 3], [9, 7, 0, 1]]
    e_out, t_out = e(ember.tensor(ids)), t(torch.tensor(ids))
    assert_close(e_out, t_out)
    (e_out * e_out).sum().backward()
    (t_out * t_out).sum().backward()
    assert_close(e.weight.grad, t.weight.grad)
    assert np.all(e.weight.grad.numpy()[7] == 0)


@pytest.mark.parametrize("args,kwargs", [
    ((10, 3), {}),
    ((10, 3), {"padding_idx": 0, "max_norm": 1.0, "norm_type": 1.0, "scale_grad_by_freq": True, "sparse": True}),
])
def test_embedding_repr(args, kwargs):
    assert repr(ember.nn.Embedding(*args, **kwargs)) == repr(torch.nn.Embedding(*args, **kwargs))


def test_from_pretrained_shares_and_freezes():
    weights = ember.randn(5, 3)
    frozen = ember.nn.Embedding.from_pretrained(weights)
    assert not frozen.weight.requires_grad
    assert frozen.num_embeddings == 5 and frozen.embedding_dim == 3
    np.testing.assert_array_equal(frozen(ember.tensor([4, 0])).numpy(), weights.numpy()[[4, 0]])
    trainable = ember.nn.Embedding.from_pretrained(weights, freeze=False, padding_idx=1)
    assert trainable.weight.requires_grad
    assert not np.all(trainable.weight.detach().numpy()[1] == 0)  # left as given, as in torch
    trainable(ember.tensor([1, 2, 2])).sum().backward()
    np.testing.assert_array_equal(trainable.weight.grad.numpy()[:, 0], [0, 0, 2, 0, 0])
    with pytest.raises(AssertionError, match="expected to be 2-dimensional"):
        ember.nn.Embedding.from_pretrained(ember.randn(5))


def test_embedding_module_errors():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        ember.nn.Embedding(10, 3, padding_idx=10)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        ember.nn.Embedding(10, 3, padding_idx=-11)
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        ember.nn.Embedding(10, 3, _weight=ember.randn(3, 3))
    frozen = ember.nn.Embedding(4, 2, _freeze=True)
    assert not frozen.weight.requires_grad


# ---- embedding_bag ---------------------------------------------------------------------------
IDS = [1, 2, 4, 5, 4, 3, 2, 9]


def _bag(mode, offsets=(0, 2, 2, 5), **kw):
    def fn(L, w, *psw):
        weights = psw[0] if psw else None
        return F(L).embedding_bag(_ids(L, IDS), w, _ids(L, offsets), mode=mode, per_sample_weights=weights, **kw)
    return fn


BAG_CASES = [
    Case(f"{mode}{suffix}", _bag(mode, **kw), R(10, 3))
    for mode in ("sum", "mean", "max")
    for suffix, kw in (("", {}), ("-padding", {"padding_idx": 4}), ("-last-offset", {"include_last_offset": True, "offsets": (0, 2, 2, 5, 8)}),
                       ("-negative-padding", {"padding_idx": -1}))
] + [
    Case("per-sample-weights", _bag("sum"), R(10, 3), R(8)),
    Case("per-sample-weights-padding", _bag("sum", padding_idx=2), R(10, 3), R(8)),
    Case("2d", lambda L, w: F(L).embedding_bag(_ids(L, [[1, 2, 1], [0, 3, 3]]), w, mode="mean"), R(5, 2)),
    Case("2d-max", lambda L, w: F(L).embedding_bag(_ids(L, [[1, 2, 1], [0, 3, 3]]), w, mode="max"), R(5, 2)),
    Case("2d-psw", lambda L, w, p: F(L).embedding_bag(_ids(L, [[1, 2], [0, 3]]), w, mode="sum",
                                                      per_sample_weights=p), R(5, 2), R(2, 2)),
    Case("max-ties", lambda L, w: F(L).embedding_bag(_ids(L, [0, 1, 2]), w, _ids(L, [0]), mode="max"),
         V([[1.0, 1.0], [1.0, 1.0], [0.0, 2.0]])),
    Case("all-padding", lambda L, w: F(L).embedding_bag(_ids(L, [4, 4, 1]), w, _ids(L, [0, 2]), padding_idx=4),
         R(5, 2)),
    Case("int32-offsets", lambda L, w: F(L).embedding_bag(_ids(L, IDS), w, _ids(L, [0, 2], "int32")), R(10, 3)),
    Case("error-out-of-range", lambda L, w: F(L).embedding_bag(_ids(L, [10]), w, _ids(L, [0])), R(10, 3)),
    Case("error-first-offset", lambda L, w: F(L).embedding_bag(_ids(L, IDS), w, _ids(L, [1, 2])), R(10, 3)),
    Case("error-last-offset", lambda L, w: F(L).embedding_bag(_ids(L, IDS), w, _ids(L, [0, 9])), R(10, 3)),
    Case("error-no-offsets", lambda L, w: F(L).embedding_bag(_ids(L, IDS), w), R(10, 3)),
    Case("error-2d-offsets", lambda L, w: F(L).embedding_bag(_ids(L, [[1]]), w, _ids(L, [0])), R(10, 3)),
    Case("error-mode", lambda L, w: F(L).embedding_bag(_ids(L, [[1]]), w, mode="min"), R(10, 3)),
    Case("error-max-freq", lambda L, w: F(L).embedding_bag(_ids(L, [[1]]), w, mode="max", scale_grad_by_freq=True),
         R(10, 3)),
    Case("error-psw-mean", lambda L, w, p: F(L).embedding_bag(_ids(L, [[1]]), w, mode="mean", per_sample_weights=p),
         R(10, 3), R(1, 1)),
    Case("error-psw-shape", lambda L, w, p: F(L).embedding_bag(_ids(L, [[1]]), w, mode="sum", per_sample_weights=p),
         R(10, 3), R(2)),
    Case("error-padding-out", lambda L, w: F(L).embedding_bag(_ids(L, [[1]]), w, padding_idx=10), R(10, 3)),
    Case("error-3d", lambda L, w: F(L).embedding_bag(_ids(L, [[[1]]]), w), R(10, 3)),
    Case("error-float-offsets", lambda L, w: F(L).embedding_bag(_ids(L, IDS), w, L.tensor([0.0])), R(10, 3)),
]


@pytest.mark.parametrize("case,dtype", params(BAG_CASES))
def test_embedding_bag_vs_torch(case, dtype):
    check(case, dtype)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(mode):
    """Each row's gradient divided by its id's count in the batch, compared with torch's
    ``F.embedding`` followed by the bag reduction: torch 2.13's own CPU ``embedding_bag``
    divides by the wrong count when ids repeat (pytorch/pytorch#190063)."""
    ids, offsets = [1, 2, 4, 5, 4, 3, 2, 9, 4], [0, 2, 2, 5]
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((10, 3))
    e_w, t_w = ember.tensor(weight, requires_grad=True), torch.tensor(weight, requires_grad=True)
    e_out = ember.nn.functional.embedding_bag(ember.tensor(ids), e_w, ember.tensor(offsets), mode=mode,
                                              scale_grad_by_freq=True)
    rows = torch.nn.functional.embedding(torch.tensor(ids), t_w, scale_grad_by_freq=True)
    reduce = torch.sum if mode == "sum" else torch.mean
    bags = [rows[a:b] for a, b in zip(offsets, offsets[1:] + [len(ids)])]
    t_out = torch.stack([reduce(bag, 0) if len(bag) else t_w.new_zeros(3) for bag in bags])
    assert_close(e_out, t_out)
    g = rng.standard_normal(t_out.shape)
    e_out.backward(ember.tensor(g))
    t_out.backward(torch.tensor(g))
    assert_close(e_w.grad, t_w.grad)


@pytest.mark.parametrize("call,message", [
    (lambda L, w: L.nn.functional.embedding_bag(L.tensor([10]), w, L.tensor([0])),
     "Index 0 of input takes value 10 which is not in the valid range [0, 10)"),
    (lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 2]), w, L.tensor([1])),
     "offsets[0] has to be 0"),
    (lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 2]), w, L.tensor([0, 3])),
     "offsets[-1] can not be greater than input's length 2 but got offsets[-1] of 3"),
    (lambda L, w: L.nn.functional.embedding_bag(L.tensor([[1]]), w, padding_idx=10),
     "padding_idx must be within the number of embeddings, -10 through 9, but got 10"),
    (lambda L, w: L.nn.functional.embedding_bag(L.tensor([1]), w.double(), L.tensor([0]),
                                                per_sample_weights=L.tensor([1.0]), mode="sum"),
     "torch.DoubleTensor does not equal torch.FloatTensor"),
])
def test_embedding_bag_error_messages(call, message):
    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.randn(10, 3))
    with pytest.raises(RuntimeError) as ours:
        call(ember, ember.randn(10, 3))
    assert message in str(theirs.value) and message in str(ours.value)


def test_embedding_bag_repr():
    kwargs = {"mode": "max", "padding_idx": -2, "max_norm": 1.0, "norm_type": 1.0, "scale_grad_by_freq": True}
    assert repr(ember.nn.EmbeddingBag(10, 3, **kwargs)) == repr(torch.nn.EmbeddingBag(10, 3, **kwargs))
    assert repr(ember.nn.EmbeddingBag(10, 3)) == repr(torch.nn.EmbeddingBag(10, 3))


@pytest.mark.parametrize("kwargs", [{}, {"mode": "sum", "padding_idx": 2, "max_norm": 1.0, "norm_type": 1.0}])
def test_embedding_bag_module(kwargs):
    t, e = torch.nn.EmbeddingBag(10, 3, **kwargs), ember.nn.EmbeddingBag(10, 3, **kwargs)
    assert list(e.state_dict()) == list(t.state_dict()) == ["weight"]
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    ids, offsets = [1, 2, 4, 2, 2, 9], [0, 3]
    e_out, t_out = e(ember.tensor(ids), ember.tensor(offsets)), t(torch.tensor(ids), torch.tensor(offsets))
    assert_close(e_out, t_out)
    (e_out ** 2).sum().backward()
    (t_out ** 2).sum().backward()
    assert_close(e.weight.grad, t.weight.grad)
    assert_close(e.weight, t.weight)  # max_norm renormalised the same rows


def test_embedding_bag_without_bags():
    """Empty offsets give no bags (torch 2.13 crashes on this input, so it is checked alone)."""
    weight = ember.randn(10, 3, dtype=ember.float64, requires_grad=True)
    out = ember.nn.functional.embedding_bag(ember.tensor(IDS), weight, ember.tensor(np.zeros(0, np.int64)))
    assert out.shape == (0, 3) and out.dtype is ember.float64
    out.sum().backward()
    assert np.all(weight.grad.numpy() == 0)


def test_embedding_bag_from_pretrained():
    weights = ember.randn(4, 2)
    bag = ember.nn.EmbeddingBag.from_pretrained(weights, mode="sum")
    assert not bag.weight.requires_grad
    np.testing.assert_allclose(bag(ember.tensor([[0, 3]])).numpy()[0], weights.numpy()[[0, 3]].sum(0), rtol=1e-6)
    assert ember.nn.EmbeddingBag.from_pretrained(weights, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        ember.nn.EmbeddingBag(4, 2, padding_idx=4)


def test_embedding_gradient_accumulates_over_large_batches():
    """The sparse-product gradient against a plain loop, on a batch where every id repeats."""
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 50, (64, 33))
    weight = ember.randn(50, 16, requires_grad=True)
    g = rng.standard_normal((64, 33, 16)).astype(np.float32)
    ember.nn.functional.embedding(ember.tensor(ids), weight).backward(ember.tensor(g))
    expected = np.zeros((50, 16))
    for i, row in zip(ids.reshape(-1), g.reshape(-1, 16)):
        expected[i] += row
    np.testing.assert_allclose(weight.grad.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_half_weights():
    weight = ember.randn(6, 2, dtype=ember.float16, requires_grad=True)
    out = ember.nn.functional.embedding(ember.tensor([1, 1, 5]), weight)
    assert out.dtype is ember.float16
    out.sum().backward()
    assert weight.grad.dtype is ember.float16
    np.testing.assert_array_equal(weight.grad.numpy()[:, 0], [0, 2, 0, 0, 0, 1])


def test_ids_written_in_place_after_the_forward_raise_as_in_torch():
    """The backward reads the forward's ids (saved, version-checked): torch raises too."""
    for lib in (ember, torch):
        ids = lib.tensor([1, 1, 3])
        weight = lib.zeros(5, 2, requires_grad=True)
        out = lib.nn.functional.embedding(ids, weight)
        ids.fill_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


@pytest.mark.parametrize("padding_idx, scale", [(None, False), (1, False), (None, True), (2, True)])
def test_second_derivative_through_the_weight_gradient(padding_idx, scale):
    """The weight gradient is an op (EmbeddingBackward) whose own derivative is the lookup
    again. The weight gradient equals torch's; its derivative with respect to the output
    gradient is checked in closed form (position i gets ``c_i * C[ids[i]]``, c_i its
    coefficient): torch 2.13's double backward leaves out the frequency scaling."""
    rng = np.random.default_rng(0)
    ids, w, g = rng.integers(0, 5, (2, 3)), rng.standard_normal((5, 4)), rng.standard_normal((2, 3, 4))
    C = np.arange(20.0).reshape(5, 4)
    weight = ember.tensor(w, requires_grad=True)
    grad_out = ember.tensor(g, requires_grad=True)
    out = ember.nn.functional.embedding(ember.tensor(ids), weight, padding_idx=padding_idx, scale_grad_by_freq=scale)
    (grad_weight,) = ember.autograd.grad(out, weight, grad_out, create_graph=True)
    (grad_weight * ember.tensor(C)).sum().backward()
    reference = torch.nn.functional.embedding(torch.tensor(ids), torch.tensor(w, requires_grad=True),
                                              padding_idx=padding_idx, scale_grad_by_freq=scale)
    (expected,) = torch.autograd.grad(reference, reference.grad_fn.next_functions[0][0].variable, torch.tensor(g))
    np.testing.assert_allclose(grad_weight.detach().numpy(), expected.numpy(), rtol=1e-12)
    counts = np.bincount(ids.ravel(), minlength=5)[ids] if scale else np.ones(ids.shape)
    coefficient = (ids != padding_idx) / counts
    np.testing.assert_allclose(grad_out.grad.numpy(), coefficient[..., None] * C[ids], rtol=1e-12)
