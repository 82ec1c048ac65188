"""``conj()`` as torch's lazy conjugate view, against torch 2.13: writes through the view (and
through views of it) reach its source and the other way round, for a matrix of in-place ops;
``is_conj`` after each view op; layout, printing, errors; gradients through writes."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _data(seed=0, shape=(3, 4)):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _same(e, t):
    assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype)[6:]
    np.testing.assert_allclose(e.detach().resolve_conj().resolve_neg().numpy(),
                               t.detach().resolve_conj().resolve_neg().numpy(), rtol=1e-12, atol=1e-12)


# What a write goes through: (name, fn(source) -> the tensor written to).
VIEWS = [
    ("conj", lambda t: t.conj()),
    ("slice_of_conj", lambda t: t.conj()[1:, ::2]),
    ("transposed_conj", lambda t: t.conj().T),
    ("conj_of_slice", lambda t: t[::2].conj()),
    ("mH", lambda t: t.mH),
    ("conj_of_conj", lambda t: t.conj().conj()),
    ("conj_of_slice_of_conj", lambda t: t.conj()[1].conj()),
    ("row_of_conj", lambda t: t.conj().select(0, 2)),
    ("reshaped_conj", lambda t: t.conj().reshape(12)),
]

# In-place ops: (name, fn(lib, view) applying the op to the view).
WRITES = [
    ("add_number", lambda lib, v: v.add_(1j)),
    ("add_tensor", lambda lib, v: v.add_(lib.tensor(_data(5, tuple(v.shape[-1:]))))),
    ("sub_", lambda lib, v: v.sub_(2 - 1j)),
    ("mul_", lambda lib, v: v.mul_(2j)),
    ("div_", lambda lib, v: v.div_(1 + 1j)),
    ("pow_", lambda lib, v: v.pow_(2)),
    ("neg_", lambda lib, v: v.neg_()),
    ("exp_", lambda lib, v: v.exp_()),
    ("sqrt_", lambda lib, v: v.sqrt_()),
    ("tanh_", lambda lib, v: v.tanh_()),
    ("reciprocal_", lambda lib, v: v.reciprocal_()),
    ("sgn_", lambda lib, v: v.sgn_()),
    ("conj_physical_", lambda lib, v: v.conj_physical_()),
    ("copy_", lambda lib, v: v.copy_(lib.tensor(_data(6, tuple(v.shape))))),
    ("fill_", lambda lib, v: v.fill_(3 - 4j)),
    ("zero_", lambda lib, v: v.zero_()),
    ("setitem", lambda lib, v: v.__setitem__(0, 7j)),
    ("masked_fill_", lambda lib, v: v.masked_fill_(lib.tensor(_data(7, tuple(v.shape)).real > 0), 5j)),
    ("lerp_", lambda lib, v: v.lerp_(lib.zeros(tuple(v.shape), dtype=v.dtype), 0.25)),
    ("addcmul_", lambda lib, v: v.addcmul_(v.detach().clone(), v.detach().clone(), value=0.5)),
    ("iadd", lambda lib, v: v.__iadd__(1 + 2j)),
    ("real_add_", lambda lib, v: v.real.add_(1.5)),
    ("imag_add_", lambda lib, v: v.imag.add_(1.5)),
    ("imag_mul_", lambda lib, v: v.imag.mul_(-2.0)),
    ("real_assign", lambda lib, v: setattr(v, "real", lib.ones(tuple(v.shape), dtype=lib.float64))),
    ("imag_assign", lambda lib, v: setattr(v, "imag", lib.ones(tuple(v.shape), dtype=lib.float64))),
]


@pytest.mark.parametrize("write", [w[1] for w in WRITES], ids=[w[0] for w in WRITES])
@pytest.mark.parametrize("view", [v[1] for v in VIEWS], ids=[v[0] for v in VIEWS])
def test_write_through_conj_view_reaches_source(view, write):
    results = []
    for lib in (ember, torch):
        t = lib.tensor(_data())
        v = view(t)
        before = t._version
        write(lib, v)
        results.append((t, v, t._version - before))
    (e_t, e_v, e_bump), (t_t, t_v, t_bump) = results
    _same(e_t, t_t)
    _same(e_v, t_v)
    assert e_v.is_conj() == t_v.is_conj() and (e_bump > 0) == (t_bump > 0)


@pytest.mark.parametrize("write", [w[1] for w in WRITES[:8]], ids=[w[0] for w in WRITES[:8]])
def test_write_to_source_shows_in_conj_views(write):
    out = []
    for lib in (ember, torch):
        t = lib.tensor(_data(1))
        views = [t.conj(), t.conj()[1:], t.mH, t[1].conj(), t.conj().conj(), t.conj().imag]
        write(lib, t)
        write(lib, t[0])
        out.append(views)
    for e, t in zip(*out):
        _same(e, t)


IS_CONJ_AFTER = [
    lambda c: c, lambda c: c[0], lambda c: c[:, 1:], lambda c: c.T, lambda c: c.mT,
    lambda c: c.detach(), lambda c: c.view(12), lambda c: c.reshape(4, 3),
    lambda c: c.expand(2, 3, 4), lambda c: c.unsqueeze(0), lambda c: c.squeeze(),
    lambda c: c.flatten(), lambda c: c.permute(1, 0), lambda c: c.movedim(0, 1),
    lambda c: c.unbind(0)[1], lambda c: c.split(1)[0], lambda c: c.narrow(0, 0, 2),
    lambda c: c.diagonal(), lambda c: c.unflatten(0, (3, 1)), lambda c: c.contiguous(),
    lambda c: c.clone(), lambda c: c + 0, lambda c: c.sum(), lambda c: c * 1, lambda c: c.flip(0),
    lambda c: c.roll(1), lambda c: c.conj(), lambda c: c.resolve_conj(), lambda c: c.real,
    lambda c: c.imag, lambda c: c.to(c.dtype), lambda c: c.cdouble(), lambda c: c.cfloat(),
    lambda c: c.abs(), lambda c: c.T.contiguous(), lambda c: c.conj_physical(),
]


@pytest.mark.parametrize("op", IS_CONJ_AFTER, ids=range(len(IS_CONJ_AFTER)))
def test_is_conj_after_each_op_as_torch(op):
    e, t = op(ember.tensor(_data()).conj()), op(torch.tensor(_data()).conj())
    assert e.is_conj() == t.is_conj()
    _same(e, t)


def test_conj_view_layout_base_and_version_as_torch():
    for make in (lambda lib: lib.tensor(_data()), lambda lib: lib.tensor(_data())[::2, 1:],
                 lambda lib: lib.tensor(_data()).T, lambda lib: lib.tensor(_data())[1:].flip(0)):
        e_src, t_src = make(ember), make(torch)
        e, t = e_src.conj(), t_src.conj()
        assert e.stride() == t.stride() and e.storage_offset() == t.storage_offset()
        assert e.is_contiguous() == t.is_contiguous()
        assert (e._base is (e_src._base if e_src._base is not None else e_src))
        assert (t._base is (t_src._base if t_src._base is not None else t_src))
        assert e._versions is e_src._versions
    x = ember.ones(3)
    assert x.conj() is x and not x.conj().is_conj() and ember.conj(x) is x
    assert ember.tensor(_data()).conj().conj()._base is not None


def test_conj_view_prints_and_converts_as_torch():
    e = ember.tensor([1 + 2j, -3j], requires_grad=True).conj()
    t = torch.tensor([1 + 2j, -3j], requires_grad=True).conj()
    assert repr(e) == repr(t) and str(e.detach()) == str(t.detach())
    assert e.tolist() == t.tolist() and e.detach()[0].item() == t.detach()[0].item()
    for lib, c in ((ember, e.detach()), (torch, t.detach())):
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that has conjugate bit set"):
            c.numpy()
        assert c.numpy(force=True).tolist() == [1 - 2j, 3j] and c.is_conj()
        with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved conjugated tensors"):
            lib.view_as_real(c)
        assert lib.view_as_real(c.resolve_conj()).tolist() == [[1, -2], [0, 3]]


def test_conj_view_errors_as_torch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            lib.tensor([1j], requires_grad=True).conj().add_(1)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            lib.tensor([1j, 2]).expand(3, 2).conj().add_(1)


GRAD_CASES = [
    ("mul_tensor", lambda lib, t, w: t.conj().mul_(w)),
    ("add_into_slice", lambda lib, t, w: t.conj()[1:].add_(w[1:] * 2)),
    ("copy_", lambda lib, t, w: t.mH.copy_(w.reshape(2, 1) * w.reshape(1, 2))),
    ("imag_add_", lambda lib, t, w: t.conj().imag.add_(w.real)),
    ("real_mul_", lambda lib, t, w: t.conj().real.mul_(w.abs())),
    ("conj_of_conj", lambda lib, t, w: t.conj().conj().mul_(w)),
    ("exp_", lambda lib, t, w: t.conj().exp_()),
]


@pytest.mark.parametrize("write", [g[1] for g in GRAD_CASES], ids=[g[0] for g in GRAD_CASES])
def test_gradients_through_writes_into_conj_views(write):
    x0, w0, k0 = (_data(s, (2, 2)) for s in (3, 4, 8))
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0[0], requires_grad=True)
        t = x * 1
        write(lib, t, w)
        loss = (t * lib.tensor(k0)).real.sum() + t.abs().square().sum()
        loss.backward()
        grads.append((t, x.grad, w.grad))
    for e, t in zip(*grads):
        if t is None:
            assert e is None
        else:
            _same(e, t)


def test_conj_gradient_and_grad_fn_names():
    for lib in (ember, torch):
        x = lib.tensor(_data(9, (3,)), requires_grad=True)
        assert type(x.conj().grad_fn).__name__ == "ConjBackward0"
        assert type(lib.conj_physical(x).grad_fn).__name__ == "ConjPhysicalBackward0"
    e = ember.tensor(_data(9, (3,)), requires_grad=True)
    t = torch.tensor(_data(9, (3,)), requires_grad=True)
    (e.conj() * ember.tensor(_data(1, (3,)))).real.sum().backward()
    (t.conj() * torch.tensor(_data(1, (3,)))).real.sum().backward()
    _same(e.grad, t.grad)


NEG_CASES = [  # (view of the complex tensor t: 2x3, torch's is_neg())
    lambda lib, t: t.conj().imag, lambda lib, t: t.conj().imag[0], lambda lib, t: t.conj().imag.t(),
    lambda lib, t: t.conj().imag[:, 1:].reshape(-1), lambda lib, t: t.conj()[1].imag,
    lambda lib, t: t.conj().imag.clone(), lambda lib, t: t.conj().imag * 1, lambda lib, t: t.conj().real,
    lambda lib, t: t.imag, lambda lib, t: t.conj().conj().imag, lambda lib, t: lib.imag(t.conj()),
    lambda lib, t: t.conj().imag.resolve_neg(), lambda lib, t: t.real.resolve_neg(),
]


@pytest.mark.parametrize("case", range(len(NEG_CASES)))
def test_is_neg_and_resolve_neg_match_torch(case):
    """t.conj().imag carries torch's negative bit: is_neg() through views, cleared by
    resolve_neg() (a copy) and by computing; numpy() refuses it as torch does."""
    z = np.random.default_rng(case).standard_normal((2, 3)) + 1j * np.random.default_rng(9).standard_normal((2, 3))
    e, t = NEG_CASES[case](ember, ember.tensor(z)), NEG_CASES[case](torch, torch.tensor(z))
    assert e.is_neg() == t.is_neg() == ember.is_neg(e)
    np.testing.assert_array_equal(e.resolve_neg().numpy(), t.resolve_neg().numpy())
    if t.is_neg():
        with pytest.raises(RuntimeError) as expected:
            t.numpy()
        with pytest.raises(RuntimeError) as got:
            e.numpy()
        assert str(got.value) == str(expected.value)
        assert e.resolve_neg() is not e and not e.resolve_neg().is_neg()


def test_write_through_a_neg_view_reaches_its_source():
    z = np.array([1 + 2j, 3 - 4j])
    e, t = ember.tensor(z), torch.tensor(z)
    e.conj().imag.add_(1)
    t.conj().imag.add_(1)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
