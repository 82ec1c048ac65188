"""Tensors over storages against torch 2.13: ``Tensor.set_`` in its forms, the constructors that
take a storage (``FloatTensor(storage)``, ``Tensor(storage)``, ``tensor(storage)``: sharing its
memory), the typed conversions of storages (``TypedStorage.float()`` ...) and ``resize_`` past
the storage's end, which grows the storage every tensor on it shares."""
import warnings

import pytest
import torch
from test_storage import outcome

import ember


def described(t):
    return (tuple(t.shape), t.stride(), t.storage_offset(), str(t.dtype), t.tolist(), t.requires_grad,
            t.untyped_storage().nbytes())


def _set_forms(L):
    out = []
    x = L.arange(6.)
    y = L.zeros(2, dtype=L.float64)
    out.append((described(y.set_()), y._version))
    y = L.zeros(2)
    out.append(described(y.set_(x)))
    y[1] = 7.0  # writes x
    x[2] = -1.0  # writes y
    out.append((x.tolist(), y.tolist(), y.data_ptr() == x.data_ptr()))
    out.append(described(L.zeros(2).set_(x[1:].view(5)[::2])))
    out.append(described(L.zeros(2).set_(x.untyped_storage())))
    out.append(described(L.zeros(2).set_(x.untyped_storage(), 1, (2, 2), (1, 2))))
    out.append(described(L.zeros(2).set_(x.untyped_storage(), 1, L.Size([2, 2]))))
    out.append(described(L.zeros(2).set_(source=x.untyped_storage(), storage_offset=2, size=[2], stride=[2])))
    out.append(described(L.zeros(2).set_(x, 3, (3,))))  # a tensor's storage, from its start
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = x.storage()
        out.append(described(L.zeros(1).set_(typed, 1, (2,))))
        out.append(described(L.zeros(1).set_(typed)))
        out.append(outcome(lambda: L.zeros(1, dtype=L.float64).set_(typed)))
        out.append(outcome(lambda: L.zeros(1, dtype=L.int16).set_(typed)))
    out.append(described(L.zeros(1, dtype=L.int16).set_(x.untyped_storage(), 1, (3,))))
    out.append(described(L.zeros(1, dtype=L.float64).set_(x.untyped_storage())))
    for dtype in (L.float64, L.float16, L.int64, L.bool, L.complex64):
        out.append(outcome(lambda: L.zeros(1).set_(L.zeros(2, dtype=dtype))))
    out.append(outcome(lambda: L.zeros(1).set_(x.untyped_storage(), -1, (3,))))
    out.append(outcome(lambda: L.zeros(1).set_(x.untyped_storage(), 0, (2,), (1, 2))))
    for args in ((x, 0), (3,), (x.untyped_storage(), 0)):
        out.append(outcome(lambda: L.zeros(1).set_(*args))[0])
    v = L.zeros(4)[1:3]
    v.set_(L.ones(3))
    out.append((described(v), v._version))
    return out


def test_set_forms_share_memory_as_torch():
    assert _set_forms(ember) == _set_forms(torch)


def _set_grows(L):
    x = L.arange(4.)
    view = x[1:]
    y = L.zeros(1).set_(x.untyped_storage(), 2, (4,))  # past the end: the shared storage grows
    y[3] = 9.0
    z = L.zeros(1).set_(x.untyped_storage(), 5, (1,))
    return [x.untyped_storage().nbytes(), view.untyped_storage().nbytes(), y[:2].tolist(), z.tolist(),
            view.tolist(), x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr(),
            outcome(lambda: L.zeros(1).set_(x.untyped_storage()[4:], 0, (7,)))]


def test_set_past_the_end_grows_the_shared_storage_as_torch():
    assert _set_grows(ember) == _set_grows(torch)


def _set_autograd(L):
    out = []
    x = L.arange(3.)
    leaf = L.zeros(2, requires_grad=True)
    for args in ((x,), (), (x.untyped_storage(),)):
        out.append(outcome(lambda: leaf.set_(*args)))
    with L.no_grad():
        out.append(described(leaf.set_(x)))
    out.append((leaf.is_leaf, leaf.requires_grad))
    w = L.zeros(2, requires_grad=True)
    m = L.zeros(2).set_(w)
    out.append((m.requires_grad, type(m.grad_fn).__name__, [type(n).__name__ for n, _ in m.grad_fn.next_functions]))
    out.append(outcome(lambda: m.sum().backward()))
    m = w * 2
    m.set_(x)
    out.append((m.requires_grad, type(m.grad_fn).__name__))
    with L.no_grad():
        out.append(L.ones(2).set_(L.zeros(3, requires_grad=True)).requires_grad)
    return out


def test_set_autograd_rules_are_torchs():
    assert _set_autograd(ember) == _set_autograd(torch)


def _constructors(L):
    out = []
    x = L.arange(6.)
    memory = x.untyped_storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = x.storage()
        f = L.FloatTensor(typed)
        f[0] = 42.0  # x's memory
        out.append((x.tolist(), described(f)))
        out.append(described(L.FloatTensor(memory)))
        out.append(described(L.ByteTensor(memory)))
        out.append(described(L.Tensor(typed)))
        out.append(described(L.LongTensor(L.LongStorage([1, 2]))))
        out.append(described(L.FloatTensor(L.FloatStorage(0))))
        for name in ("DoubleTensor", "IntTensor", "HalfTensor"):
            out.append(outcome(lambda: getattr(L, name)(typed)))
        t = L.tensor(memory[4:12])  # the bytes, read as int64, shared
        out.append((described(t), t.data_ptr() == x.data_ptr() + 4))
        t = L.tensor(typed)
        t[1] = -3.0
        out.append((described(t), x.tolist()))
        out.append(described(L.tensor(memory[0:5])))
        out.append(described(L.tensor(memory[0:0])))
        out.append(described(L.tensor(memory[0:8], dtype=L.uint8)))
        out.append(described(L.tensor(memory, dtype=L.float16)))
        out.append(described(L.tensor(L.UntypedStorage(3), dtype=L.float16))[:2])
        out.append(described(L.tensor(memory, dtype=L.float32, requires_grad=True)))
        out.append(outcome(lambda: L.tensor(memory, requires_grad=True)))
        out.append(outcome(lambda: L.tensor(typed, dtype=L.float64)))
        out.append(described(L.as_tensor(memory)))
    return out


def test_constructors_from_storages_share_memory_as_torch():
    assert _constructors(ember) == _constructors(torch)


@pytest.mark.parametrize("method", ["double", "float", "half", "bfloat16", "long", "int", "short", "char", "byte",
                                    "bool", "complex_float", "complex_double"])
def test_storage_conversions_copy_as_torch(method):
    def converted(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = L.tensor([0.0, 1.5, -2.7, 300.25, 1e-8])
            typed = x.storage()
            c = getattr(typed, method)()
            first = c[0]
            c[0] = 1  # a copy: x keeps its value
            raw = getattr(L.tensor([1, 200], dtype=L.int16).untyped_storage(), method)()  # the bytes as numbers
            return [type(c).__name__, str(c.dtype), c.tolist()[1:], first, x.tolist(), c.data_ptr() != typed.data_ptr(),
                    type(raw).__name__, str(raw.dtype), raw.tolist()]
    assert converted(ember) == converted(torch)


def _resize_grows(L):
    x = L.arange(3.)
    view = x[1:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory, typed, part = x.untyped_storage(), x.storage(), x.untyped_storage()[4:8]  # storage objects held
    y = x[:]  # another tensor on the same storage
    y.resize_(5)
    y[4] = 8.0
    other = L.zeros(1).set_(x.untyped_storage(), 4, (1,))  # sees the growth
    out = [x.untyped_storage().nbytes(), view.untyped_storage().nbytes(), y.tolist()[:3], other.tolist(),
           view.tolist(), x.tolist(), memory.nbytes(), typed.size(), typed[4], part.nbytes(),
           memory.data_ptr() == y.untyped_storage().data_ptr()]
    z = L.zeros(2)
    z.set_(x)
    z.resize_(10)
    z[9] = 99.0
    out.append((x.untyped_storage().nbytes(), x.tolist(), z.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()))
    out.append(outcome(lambda: L.zeros(4)[1:].set_(x.untyped_storage()[4:]).resize_(20)))
    return out


def test_resize_past_the_end_grows_the_shared_storage_as_torch():
    assert _resize_grows(ember) == _resize_grows(torch)
