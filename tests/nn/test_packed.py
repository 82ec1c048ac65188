"""nn.utils.rnn (PackedSequence, packing, padding) compared with torch: the same data,
batch_sizes and indices exactly, round trips, gradients through packing, and errors."""
import numpy as np
import pytest
import torch

import ember
from ember.nn.utils import rnn as E
from torch.nn.utils import rnn as T
from torchcompare import assert_close


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def both(array, grad=False):
    return ember.tensor(array.copy(), requires_grad=grad), torch.tensor(array.copy(), requires_grad=grad)


def same_indices(e, t):
    if t is None:
        assert e is None
    else:
        assert e.dtype == ember.int64 and e.tolist() == t.tolist()


def same_packed(e, t):
    assert isinstance(e, E.PackedSequence)
    assert_close(e.data, t.data, rtol=0, atol=0)
    assert e.batch_sizes.dtype == ember.int64
    assert e.batch_sizes.tolist() == t.batch_sizes.tolist()
    same_indices(e.sorted_indices, t.sorted_indices)
    same_indices(e.unsorted_indices, t.unsorted_indices)


CASES = [([5, 3, 1], True), ([5, 5, 2, 2], True), ([1], True), ([3, 5, 1], False),
         ([2, 4, 4, 1, 3], False), ([6, 6, 6], False)]


@pytest.mark.parametrize("lengths, in_order", CASES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("trailing", [(), (2,), (2, 3)])
def test_pack_padded_and_back(lengths, in_order, batch_first, trailing):
    steps, batch = max(lengths) + 1, len(lengths)
    shape = (batch, steps) if batch_first else (steps, batch)
    ex, tx = both(rand(*shape, *trailing), grad=True)
    for lengths_arg in (lengths, torch.tensor(lengths)):
        e_lengths = lengths_arg if isinstance(lengths_arg, list) else ember.tensor(lengths)
        ep = E.pack_padded_sequence(ex, e_lengths, batch_first, enforce_sorted=in_order)
        tp = T.pack_padded_sequence(tx, lengths_arg, batch_first, enforce_sorted=in_order)
        same_packed(ep, tp)
    for total_length in (None, steps + 2):
        ey, e_len = E.pad_packed_sequence(ep, batch_first, padding_value=-1.5, total_length=total_length)
        ty, t_len = T.pad_packed_sequence(tp, batch_first, padding_value=-1.5, total_length=total_length)
        assert_close(ey, ty, rtol=0, atol=0)
        assert e_len.dtype == ember.int64 and e_len.tolist() == t_len.tolist() == lengths
    # Gradients flow through pack then pad back to the padded input (zero at the padding).
    w = rand(*ty.shape, seed=1)
    (ey * ember.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    assert_close(ex.grad, tx.grad, rtol=0, atol=0)


def test_gradient_of_packed_data_flows_to_padded_input():
    ex, tx = both(rand(4, 3, 2), grad=True)
    ep = E.pack_padded_sequence(ex, [2, 4, 3], enforce_sorted=False)
    tp = T.pack_padded_sequence(tx, [2, 4, 3], enforce_sorted=False)
    w = rand(*tp.data.shape, seed=2)
    (ep.data * ember.tensor(w)).sum().backward()
    (tp.data * torch.tensor(w)).sum().backward()
    assert_close(ex.grad, tx.grad, rtol=0, atol=0)


def test_gradient_of_gradient_through_packing():
    ex, tx = both(rand(4, 3), grad=True)
    results = []
    for lib, R, x in ((ember, E, ex), (torch, T, tx)):
        padded, _ = R.pad_packed_sequence(R.pack_padded_sequence(x, [4, 2, 1]))
        (g,) = lib.autograd.grad((padded ** 3).sum(), [x], create_graph=True)
        g.sum().backward()
        results.append(x.grad)
    assert_close(*results, rtol=1e-12, atol=0)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("trailing", [(), (3,)])
def test_pad_sequence(batch_first, padding_side, trailing):
    arrays = [rand(n, *trailing, seed=n) for n in (2, 5, 1)]
    pairs = [both(a, grad=True) for a in arrays]
    ey = E.pad_sequence([e for e, _ in pairs], batch_first, 7.0, padding_side)
    ty = T.pad_sequence([t for _, t in pairs], batch_first, 7.0, padding_side)
    assert_close(ey, ty, rtol=0, atol=0)
    w = rand(*ty.shape, seed=3)
    (ey * ember.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    for e, t in pairs:
        assert_close(e.grad, t.grad, rtol=0, atol=0)


def test_pad_sequence_of_a_tensor_reads_its_rows():
    ex, tx = both(rand(3, 4))
    assert_close(E.pad_sequence(ex), T.pad_sequence(tx), rtol=0, atol=0)


@pytest.mark.parametrize("in_order", [True, False])
def test_pack_and_unpack_sequence(in_order):
    arrays = [rand(n, 2, seed=n) for n in ((4, 3, 1) if in_order else (3, 4, 1, 2))]
    e_seqs = [ember.tensor(a) for a in arrays]
    t_seqs = [torch.tensor(a) for a in arrays]
    ep, tp = E.pack_sequence(e_seqs, in_order), T.pack_sequence(t_seqs, in_order)
    same_packed(ep, tp)
    for e, t, a in zip(E.unpack_sequence(ep), T.unpack_sequence(tp), arrays, strict=True):
        assert_close(e, t, rtol=0, atol=0)
        np.testing.assert_array_equal(e.numpy(), a)


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first):
    arrays = [rand(n, 2, seed=n) for n in (2, 5, 3)]
    ex = E.pad_sequence([ember.tensor(a) for a in arrays], batch_first)
    tx = T.pad_sequence([torch.tensor(a) for a in arrays], batch_first)
    before = ex.shape
    e_out = E.unpad_sequence(ex, ember.tensor([2, 5, 3]), batch_first)
    t_out = T.unpad_sequence(tx, torch.tensor([2, 5, 3]), batch_first)
    for e, t in zip(e_out, t_out, strict=True):
        assert_close(e, t, rtol=0, atol=0)
    assert ex.shape == before  # torch transposes its argument in place; ember leaves it alone


def test_packed_sequence_fields_and_conversions():
    ep = E.pack_sequence([ember.ones(3, 2), ember.ones(1, 2)], enforce_sorted=False)
    assert ep._fields == T.PackedSequence._fields
    data, batch_sizes, sorted_indices, unsorted_indices = ep
    assert data is ep.data and batch_sizes is ep.batch_sizes
    as_double = ep.to(ember.float64)
    assert isinstance(as_double, E.PackedSequence) and as_double.data.dtype == ember.float64
    assert as_double.batch_sizes is ep.batch_sizes
    assert ep.double().data.dtype == ember.float64 and ep.double().float().data.dtype == ember.float32
    assert ep.to(ember.float32) is ep
    assert not ep.is_cuda
    rebuilt = E.PackedSequence(ep.data, ep.batch_sizes, ep.sorted_indices)
    assert rebuilt.unsorted_indices.tolist() == ep.unsorted_indices.tolist()
    from_pair = E.PackedSequence((ep.data, ep.batch_sizes))
    assert from_pair.batch_sizes is ep.batch_sizes and from_pair.sorted_indices is None


def test_invert_permutation():
    perm = [3, 0, 2, 1]
    assert E.invert_permutation(ember.tensor(perm)).tolist() == \
        T.invert_permutation(torch.tensor(perm)).tolist()
    assert E.invert_permutation(None) is None


def test_importable_as_torch_users_do():
    import ember.nn.utils.rnn as by_path
    assert ember.nn.utils.rnn is by_path
    assert ember.nn.utils.rnn.PackedSequence is E.PackedSequence


def _errors(call):
    found = []
    for R, lib in ((T, torch), (E, ember)):
        with pytest.raises(Exception) as info:
            call(R, lib)
        found.append((type(info.value), str(info.value)))
    assert found[0] == found[1]


X = rand(5, 3, 2)

ERRORS = [
    lambda R, lib: R.pack_padded_sequence(lib.tensor(X), [2, 5, 3]),
    lambda R, lib: R.pack_padded_sequence(lib.tensor(X), [5, 3, 0]),
    lambda R, lib: R.pack_padded_sequence(lib.tensor(X), [5, 3]),
    lambda R, lib: R.pack_padded_sequence(lib.tensor(X), lib.tensor([[5, 3, 1]])),
    lambda R, lib: R.pack_sequence([lib.ones(1), lib.ones(2)]),
    lambda R, lib: R.pad_sequence([]),
    lambda R, lib: R.pad_sequence([lib.ones(2)], padding_side="up"),
    lambda R, lib: R.pad_packed_sequence(R.pack_padded_sequence(lib.tensor(X), [5, 3, 1]), total_length=3),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    _errors(call)


def test_length_beyond_padding_is_an_error():
    with pytest.raises(RuntimeError, match="at most the padded length 5"):
        E.pack_padded_sequence(ember.tensor(X), [6, 3, 1])


def test_docstring_examples_run():
    import doctest
    result = doctest.testmod(E)
    assert result.attempted > 0 and result.failed == 0
