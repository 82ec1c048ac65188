"""Storages against torch 2.13 on the same calls: ``UntypedStorage.copy_/clone/resize_``, the
legacy classes (``torch.FloatStorage`` & co.), the storage of ``from_numpy`` of a strided array,
and the Python loops ``apply_``/``map_`` (their version counter and expanded tensors)."""
import warnings

import numpy as np
import pytest
import torch

import ember

LEGACY = ["FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "IntStorage",
          "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage"]


def outcome(f):
    """``f()``, or its exception's class and first line."""
    try:
        return f()
    except Exception as e:
        return type(e).__name__, str(e).splitlines()[0][:80]


def _untyped(L):
    out = []
    a = L.UntypedStorage(4)
    out.append((a.copy_(L.tensor([1, 2, 250, 4], dtype=L.uint8).untyped_storage()) is a, a.tolist()))
    x = L.zeros(2)
    x.untyped_storage().copy_(L.tensor([1.5, -2.0]).untyped_storage(), non_blocking=False)  # writes x
    out.append(x.tolist())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x.untyped_storage().copy_(L.tensor([3.0, 4.0]).storage())  # from a typed storage
    out.append(x.tolist())
    out.append(outcome(lambda: L.UntypedStorage(4).copy_(L.UntypedStorage(3))))
    out.append(outcome(lambda: L.UntypedStorage(4).copy_(L.zeros(1))))
    s = L.arange(3, dtype=L.uint8).untyped_storage()
    c = s.clone()
    c[0] = 9
    out.append((s.tolist(), c.tolist(), type(c).__name__, c.data_ptr() != s.data_ptr()))
    s = L.UntypedStorage(3)
    s[0] = 7
    out.append((s.resize_(5) is s, s.size(), s.nbytes(), s[0]))  # the new bytes are uninitialised in torch
    out.append((s.resize_(1) is s, s.tolist()))
    y = L.tensor([1.0, 2.0])
    view = y[1:]
    y.untyped_storage().resize_(16)  # the tensor and its views move with the storage
    y[1] = 5.0
    out.append((y.tolist(), view.tolist(), y.untyped_storage().nbytes(), view.untyped_storage().nbytes(),
                view.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()))
    out.append(outcome(lambda: L.UntypedStorage(3).resize_(-1))[0])
    return out


def test_untyped_storage_copy_clone_resize_are_torchs():
    assert _untyped(ember) == _untyped(torch)


def test_shrinking_a_storage_under_a_tensor_is_refused():
    # torch lets a tensor outlive its storage's end and fails when it is read; ember refuses the resize
    x = ember.zeros(2)
    with pytest.raises(RuntimeError, match=r"tensor of shape \[2\] on this storage reaches byte 8, past the new size 4"):
        x.untyped_storage().resize_(4)
    assert x.untyped_storage().nbytes() == 8


def _legacy(L, name):
    C = getattr(L, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = C([1, 2, 0])
        return [C.__name__, str(C.dtype), C(3).size(), len(C()), str(C(2).dtype), type(C(2)).__name__,
                made.tolist(), made.type(), made.element_size(), made.nbytes(), repr(made),
                C((1, 0)).tolist(), C([[1, 2], [0, 1]]).tolist(),
                isinstance(made, L.TypedStorage), isinstance(made, C), isinstance(made, L.FloatStorage),
                isinstance(L.zeros(1, dtype=C.dtype).storage(), C), isinstance(L.UntypedStorage(1), C),
                outcome(lambda: C(2, 3)), outcome(lambda: C(2.5)), outcome(lambda: C(None)),
                outcome(lambda: C("ab")), outcome(lambda: C(-1))[0]]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_storage_classes_are_torchs(name):
    assert _legacy(ember, name) == _legacy(torch, name)


def test_legacy_storages_convert_numbers_as_torch():
    def conversions(L):
        return [L.IntStorage([1.7, -2.7]).tolist(), L.BoolStorage([2, 0]).tolist(), L.HalfStorage([1e6]).tolist(),
                outcome(lambda: L.ByteStorage([300])), outcome(lambda: L.FloatStorage([1, "a"]))[0],
                L.ByteStorage(2).tolist()]  # zeros: torch's are uninitialised, ember's are 0
    got, expected = conversions(ember), conversions(torch)
    assert got[:5] == expected[:5] and got[5] == [0, 0]


def _wrapped(L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = L.tensor([1.0, 2.0]).untyped_storage()
        as_floats = L.FloatStorage(wrap_storage=memory)
        as_floats[0] = 5.0  # writes the wrapped memory
        return [as_floats.tolist(), L.ShortStorage(wrap_storage=memory).size(), memory.tolist()[:4],
                L.FloatStorage(wrap_storage=L.UntypedStorage(7)).size(),  # a partial item is dropped
                outcome(lambda: L.FloatStorage(wrap_storage=L.zeros(2)))[0],
                outcome(lambda: L.FloatStorage(2, wrap_storage=memory))]


def test_legacy_storages_wrap_an_untyped_storage_as_torch():
    assert _wrapped(ember) == _wrapped(torch)


def _from_numpy(L):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = []
    for array in (base[:, ::2], base[1:, 1:3], base.T, base[2:, ::5], base[1, 2:5], base[:0], base[::2, ::3].T,
                  np.broadcast_to(base[0], (3, 6)), base):
        t = L.from_numpy(array)
        out.append((t.untyped_storage().nbytes(), t.stride(), t.storage_offset(),
                    t.untyped_storage().data_ptr() == t.data_ptr() or array.size == 0, t.tolist()))
    t = L.from_numpy(base[1:, 1:3])
    t[0, 0] = -1.0  # still the array's memory
    out.append(base[1, 1])
    out.append(outcome(lambda: L.from_numpy(base[:, ::-1])))
    out.append(outcome(lambda: L.from_numpy(np.zeros(3)[::-1][:0])))  # even with nothing to read
    return out


def test_from_numpy_storage_is_the_arrays_span_as_torch():
    assert _from_numpy(ember) == _from_numpy(torch)


def test_from_numpy_keeps_memory_counted_once_and_read_only_arrays_read_only():
    array = np.zeros(64, dtype=np.float32)
    before = ember.memory_allocated()
    views = [ember.from_numpy(array[8:16]), ember.from_numpy(array[::4])]
    assert ember.memory_allocated() - before == 256  # one allocation, though two storages
    assert views[0].untyped_storage().nbytes() == 32 and views[1].untyped_storage().nbytes() == 244
    array.setflags(write=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not ember.from_numpy(array[1:]).numpy().flags.writeable


def _loops(L):
    out = []
    x = L.arange(3.)
    x.apply_(lambda a: a + 1)
    x.map_(L.ones(3), lambda a, b: a * 2 + b)
    out.append((x.tolist(), x._version))  # torch's loops do not count as writes
    base = L.zeros(4)
    base[::2].apply_(lambda a: a + 1)
    out.append((base.tolist(), base._version))
    shared = L.zeros(1)
    shared.expand(3).apply_(lambda a: a + 1)  # one element visited three times, each read anew
    out.append(shared.tolist())
    shared = L.ones(1, 2)
    shared.expand(3, 2).map_(L.arange(6.).reshape(3, 2), lambda a, b: a * 10 + b)
    out.append(shared.tolist())
    ints = L.zeros(2, dtype=L.int64).expand(2, 2)
    ints.apply_(lambda a: a + 1.9)  # truncated at each write
    out.append(ints.tolist())
    return out


def test_apply_and_map_visit_elements_and_keep_the_version_as_torch():
    assert _loops(ember) == _loops(torch)
