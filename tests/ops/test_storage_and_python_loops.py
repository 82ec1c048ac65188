"""Storages (``Tensor.untyped_storage()``, the deprecated ``Tensor.storage()``,
``torch.UntypedStorage``) and the slow Python loops ``apply_``/``map_``, with ``resize_as_``
(issue 8: names older programs call), against torch 2.13 on the same calls."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _storages(L):
    x = L.arange(6.).reshape(2, 3)
    v = x[1]
    u = v.untyped_storage()
    out = [u.data_ptr() == x.data_ptr(), u.nbytes(), u.size(), len(u), u[0], str(u.device), u.element_size(),
           u.is_shared(), u.type(), repr(L.tensor([1, 2], dtype=L.int16).untyped_storage()),
           repr(L.zeros(0).untyped_storage()), len(L.UntypedStorage(3)), repr(u[1:3]),
           isinstance(u, L.UntypedStorage), isinstance(u, L.storage.UntypedStorage)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = v.storage()
    out += [s.size(), len(s), str(s.dtype), s[4], s.tolist(), s.data_ptr() == x.data_ptr(), s.nbytes(),
            s.element_size(), repr(s), isinstance(s, L.TypedStorage), s.untyped().nbytes()]
    s[0] = 9  # writes the tensor
    out.append(x.tolist())
    t = L.arange(3)
    t.untyped_storage().fill_(1)
    out.append(t.tolist())
    # views share a storage; a clone does not
    out += [x.t().untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
            x[:, 1:].contiguous().untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
            x.clone().untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
            x.untyped_storage().tolist()[:8], L.tensor(2.5).untyped_storage().tolist(),
            L.tensor([1.5], dtype=L.bfloat16).untyped_storage().tolist()]
    return out


def test_storages_are_torchs():
    assert _storages(ember) == _storages(torch)


def test_storage_warns_once_as_torch_and_indexes_out_of_range():
    import ember.storage as storage
    ember._ops.args.WARNED_ONCE.discard(storage.TYPED_STORAGE_DEPRECATED)
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        ember.ones(2).storage()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.ones(2).storage()  # once per process
    with pytest.raises(IndexError):
        ember.ones(2).untyped_storage()[8]


def _loops(L):
    out = []
    y = L.arange(4.)
    y.apply_(lambda a: a * 2)
    out.append(y.tolist())
    y.map_(L.ones(4), lambda a, b: a + b)
    out.append(y.tolist())
    z = L.ones(2, 3)
    z.map_(L.arange(3.), lambda a, b: a + b)  # broadcast
    out.append(z.tolist())
    z = L.ones(3, dtype=L.int64)
    z.apply_(lambda a: a / 2)  # truncated to the dtype
    out.append(z.tolist())
    w = L.arange(6.).reshape(2, 3)
    w.t().apply_(lambda a: -a)  # through a view
    out.append(w.tolist())
    out.append(L.zeros(0).apply_(lambda a: 1).shape == (0,))
    out.append(list(L.zeros(2).resize_as_(L.ones(2, 3)).shape))
    for f in (lambda: L.ones(3, requires_grad=True).apply_(lambda a: a),
              lambda: L.ones(3, requires_grad=True).map_(L.ones(3), lambda a, b: a),
              lambda: L.ones(3).map_(L.ones(3, dtype=L.int64), lambda a, b: a),
              lambda: L.ones(3).apply_(lambda a: "x"),
              lambda: L.ones(3).map_(L.ones(2, 3), lambda a, b: a)):
        with pytest.raises(Exception) as info:
            f()
        out.append((info.type.__name__, str(info.value)[:40]))
    return out


def test_apply_map_and_resize_as_are_torchs():
    assert _loops(ember) == _loops(torch)


def test_a_storage_sees_writes_to_its_tensor():
    x = ember.zeros(4)
    s = x.untyped_storage()
    x[1] = 1.0
    assert np.frombuffer(bytes(s.tolist()), np.float32).tolist() == [0.0, 1.0, 0.0, 0.0]


def _storage_edges(L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = L.tensor([1.0, 2.0, 3.0])
        t.share_memory_()  # its memory becomes a shared segment's bytes
        s = t.storage()
        s[0] = 5.0
        c = L.tensor([1 + 2j, 3 - 1j])
        u8 = L.zeros(2, dtype=L.uint8)
        u8.untyped_storage()[0] = 300  # a byte wraps, as torch converts
        u8.untyped_storage()[1] = -1
        out = [s.size(), s.element_size(), s.tolist(), t.tolist(), len(L.tensor([1, 2]).share_memory_().storage()),
               c.real.storage().size(), c.real.storage().element_size(), L.view_as_real(c).storage().tolist(),
               u8.tolist(), [L.zeros(1, dtype=d).storage().type() for d in (L.float32, L.int64, L.bool, L.bfloat16)]]
        for f in (lambda: s[1:2], lambda: s[9], lambda: t.untyped_storage()[-20], lambda: u8.storage().__setitem__(0, 300)):
            with pytest.raises(Exception) as info:
                f()
            out.append((info.type.__name__, str(info.value)))
    return out


def test_storages_of_shared_complex_and_byte_tensors_are_torchs():
    assert _storage_edges(ember) == _storage_edges(torch)


def _resizes(L):
    """resize_/resize_as_ of views: the storage's next elements from storage_offset(), not the
    view's in row-major order; the same shape changes nothing (strides kept)."""
    out = []
    x = L.arange(6.).reshape(2, 3).t()
    x.resize_(6)  # a transpose read as its storage
    out.append((x.tolist(), x.stride()))
    base = L.arange(6.)
    y = base[::2]
    y.resize_(2)  # the first two storage elements, still base's memory
    y[0] = 50
    out.append((base.tolist(), y.tolist()))
    z = L.arange(6.).reshape(2, 3).t()
    z.resize_as_(L.zeros(3, 2))  # same shape: nothing changes
    out.append((z.stride(), z.tolist()))
    w = L.arange(8.)[2:]
    w.resize_(3, 2)  # from the storage offset
    out.append((w.tolist(), w.storage_offset()))
    g = L.arange(6.)[2:]
    g.resize_(10)  # longer than the storage: the old items, then zeros
    out.append((g.tolist()[:4], g.storage_offset(), g.shape))
    k = L.arange(6.)
    k.resize_(2)
    k.resize_(6)  # grown again within its storage: the old elements, not zeros
    out.append(k.tolist())
    c = L.arange(24.).reshape(1, 2, 3, 4)
    c.resize_(1, 2, 3, 4, memory_format=L.channels_last)
    out.append((c.stride(), c.is_contiguous(memory_format=L.channels_last)))
    for f in (lambda: L.zeros(4).resize_as_(L.zeros(2, 2), memory_format=L.channels_last),
              lambda: L.zeros(4).resize_(2, 2, memory_format=L.preserve_format)):
        with pytest.raises(RuntimeError) as info:
            f()
        out.append(str(info.value))
    return out


def test_resize_of_views_reads_the_storage_as_torch():
    assert _resizes(ember) == _resizes(torch)
