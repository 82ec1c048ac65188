"""Autograd semantics compared with torch: the engine, hooks, grad modes, Function, errors."""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, to_ember, to_torch


def both(fn, *arrays, requires_grad=True):
    """Runs ``fn(lib, *tensors)`` in ember and torch on the same float64 data."""
    e = [ember.tensor(a, requires_grad=requires_grad) for a in arrays]
    t = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    return (fn(ember, *e), e), (fn(torch, *t), t)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_backward_accumulates_over_paths_and_calls():
    def f(lib, x, y):
        z = x * y + x.exp() * y.sin()
        return (z * z).sum() + x.sum()
    (eo, ei), (to, ti) = both(f, rand(3, 4), rand(4, seed=1))
    eo.backward()
    to.backward()
    for a, b in zip(ei, ti):
        assert_close(a.grad, b.grad)
    # a second backward after rebuilding the graph adds into .grad
    f(ember, *ei).backward()
    f(torch, *ti).backward()
    for a, b in zip(ei, ti):
        assert_close(a.grad, b.grad)


def test_backward_twice_without_retain_graph_raises():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, torch.tensor([1.0, 2.0]).exp() * 4)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_non_scalar_backward_needs_gradient():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(ember.tensor([1.0, 0.5]))
    assert x.grad.tolist() == [2.0, 1.0]


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.tensor([1.0]).sum().backward()


def test_create_graph_gives_second_derivatives():
    def f(lib, x):
        y = (x ** 3 * x.sin()).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg
    (eo, _), (to, _) = both(f, rand(5))
    assert_close(eo[0], to[0])
    assert_close(eo[1], to[1])


def test_autograd_grad_leaves_dot_grad_alone_and_allow_unused():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    z = ember.tensor([3.0], requires_grad=True)
    y = (x * x).sum()
    (gx,) = ember.autograd.grad(y, x, retain_graph=True)
    assert gx.tolist() == [2.0, 4.0] and x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        ember.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = ember.autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None


def test_grad_of_intermediate_and_backward_inputs():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    w = ember.tensor([0.5, -1.0], requires_grad=True)
    h = x * 3
    y = (h * w).sum()
    (gh,) = ember.autograd.grad(y, h, retain_graph=True)
    assert gh.tolist() == [0.5, -1.0]
    y.backward(inputs=[w])
    assert x.grad is None and w.grad.tolist() == [3.0, 6.0]


def test_hooks_modify_gradients_and_retain_grad():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    h = x * 2
    h.retain_grad()
    handle = h.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    x.register_hook(lambda g: g + 1)
    (h * h).sum().backward()
    assert seen == [[4.0, 8.0, 12.0]]
    assert h.grad.tolist() == [40.0, 80.0, 120.0]
    assert x.grad.tolist() == [81.0, 161.0, 241.0]
    handle.remove()
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    th = t * 2
    th.retain_grad()
    th.register_hook(lambda g: g * 10)
    t.register_hook(lambda g: g + 1)
    (th * th).sum().backward()
    assert t.grad.tolist() == x.grad.tolist()
    assert th.grad.tolist() == h.grad.tolist()


def test_grad_modes():
    x = ember.tensor([1.0], requires_grad=True)
    with ember.no_grad():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    with ember.inference_mode():
        assert not (x * 2).requires_grad
    ember.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    ember.set_grad_enabled(True)
    assert (x * 2).requires_grad

    @ember.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    assert ember.is_grad_enabled()


def test_grad_fn_names_and_next_functions():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = (t * 2).sum()
    assert y.grad_fn.name() == ty.grad_fn.name() == "SumBackward0"
    mul = y.grad_fn.next_functions[0][0]
    assert mul.name() == ty.grad_fn.next_functions[0][0].name() == "MulBackward0"
    acc = mul.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and type(acc).__name__ == "AccumulateGrad" and acc.variable is x
    assert mul.next_functions[1] == (None, 0)
    assert x.is_leaf and not y.is_leaf


def test_inplace_on_leaf_requiring_grad_raises():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 5.0
    with ember.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0, 3.0]


def test_modified_saved_tensor_raises():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h.sin()
    h.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_version_counter_shared_with_views():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 1
    v = h[1:]
    y = h.sin()
    v.mul_(2)
    assert h._version == v._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_non_leaf_keeps_history():
    def f(lib, x):
        h = x * 2
        h.add_(1)
        h.mul_(x)
        h[0] = h[1] * 3
        return h.sum()
    (eo, ei), (to, ti) = both(f, rand(4))
    eo.backward()
    to.backward()
    assert_close(eo, to)
    assert_close(ei[0].grad, ti[0].grad)


def test_inplace_through_views_rebases_the_base():
    def f(lib, x, y):
        h = x * 1
        h[1:].mul_(y[1:])
        row = h.view(2, 3)[1]
        row.add_(y[:3].exp())
        h.t()[0].mul_(2) if h.ndim == 2 else None
        return (h * h.exp()).sum() + row.sum()
    (eo, ei), (to, ti) = both(f, rand(6), rand(6, seed=3))
    eo.backward()
    to.backward()
    assert_close(eo, to)
    for a, b in zip(ei, ti):
        assert_close(a.grad, b.grad)


def test_inplace_on_view_of_leaf_raises():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[:1].mul_(2)


def test_setitem_gradient_to_base_and_value():
    def f(lib, x, v):
        h = x.clone()
        h[1:3] = v
        h[[0, 0]] = v[0] * 2
        return (h * h).sum()
    (eo, ei), (to, ti) = both(f, rand(5), rand(2, seed=1))
    eo.backward()
    to.backward()
    for a, b in zip(ei, ti):
        assert_close(a.grad, b.grad)


def test_getitem_repeated_indices_accumulate():
    def f(lib, x):
        idx = lib.tensor([0, 2, 0, 0])
        return (x[idx] * lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64)).sum() + x[x > 0].sum()
    (eo, ei), (to, ti) = both(f, rand(4))
    eo.backward()
    to.backward()
    assert_close(ei[0].grad, ti[0].grad)


class _Cube(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x ** 3 * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return g * 3 * x ** 2 * ctx.k, None


def test_custom_function():
    x = ember.tensor([1.0, -2.0], dtype=ember.float64, requires_grad=True)
    y = _Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "_CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert ember.autograd.gradcheck(lambda t: _Cube.apply(t, 2.0), (x,))


class _SplitSign(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_non_differentiable
        return x.clamp(min=0), x.clamp(max=0)

    @staticmethod
    def backward(ctx, gpos, gneg):
        return gpos * 2 + gneg * 3


def test_custom_function_multiple_outputs_and_unused_output():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    pos, neg = _SplitSign.apply(x)
    (pos.sum() + neg.sum()).backward()
    assert x.grad.tolist() == [5.0, 5.0]
    x.grad = None
    pos, neg = _SplitSign.apply(x)
    pos.sum().backward()  # the other output's gradient is materialised as zeros
    assert x.grad.tolist() == [2.0, 2.0]


class _AddOneInPlace(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


class _ArgMaxAndValue(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        idx = x.argmax()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        ctx.n = x.numel()
        return x.max(), idx

    @staticmethod
    def backward(ctx, g, _):
        (idx,) = ctx.saved_tensors
        out = ember.zeros(ctx.n, dtype=g.dtype)
        out[idx] = g
        return out


def test_mark_dirty_and_non_differentiable():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = _AddOneInPlace.apply(h)
    assert y is h and h._version == 2 and h.grad_fn.name() == "_AddOneInPlaceBackward"
    (y * y).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0]
    x.grad = None
    v, i = _ArgMaxAndValue.apply(x)
    assert v.requires_grad and not i.requires_grad
    v.backward()
    assert x.grad.tolist() == [0.0, 1.0]


def test_gradcheck_and_gradgradcheck():
    x = ember.tensor(rand(3, 2), requires_grad=True)
    w = ember.tensor(rand(2, 4, seed=1), requires_grad=True)
    fn = lambda a, b: (a @ b).tanh().log_softmax(-1)  # noqa: E731
    assert ember.autograd.gradcheck(fn, (x, w))
    assert ember.autograd.gradgradcheck(fn, (x, w))
    bad = lambda a: _WrongGrad.apply(a)  # noqa: E731
    with pytest.raises(ember.autograd.GradcheckError):
        ember.autograd.gradcheck(bad, (x,))
    assert ember.autograd.gradcheck(bad, (x,), raise_exception=False) is False


@pytest.mark.parametrize("shape, make", [
    ((4, 6), lambda x: x.t()), ((4, 6), lambda x: x[:, ::2]), ((4, 6), lambda x: x.t().contiguous().t()),
    ((2, 3, 2, 2), lambda x: x.contiguous(memory_format=ember.channels_last))],
    ids=["transposed", "stepped", "column_major", "channels_last"])
def test_gradcheck_of_non_contiguous_inputs_and_outputs(shape, make):
    """Each element is perturbed where it lies (its row-major index mapped through the strides)
    and each seed is one element of the output: strided inputs and outputs check as torch's do."""
    x = make(ember.tensor(rand(*shape))).detach().requires_grad_()
    assert not x.is_contiguous()
    assert ember.autograd.gradcheck(lambda a: (a * a.sum(0)).exp().mT, (x,))


class _WrongGrad(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_detect_anomaly_names_the_node():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt() * 0  # d sqrt at 0 is inf, times 0 gives nan
    with ember.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="returned nan values"):
            (x.sqrt() * ember.tensor([0.0, 1.0])).sum().backward()
    y.sum().backward()  # outside anomaly mode nan passes through silently
    assert np.isnan(x.grad.numpy()[0])


def test_gradients_of_gradients_through_many_ops():
    def f(lib, x, y):
        z = (x @ y).softmax(-1) * x.sum(-1, keepdim=True).sigmoid()
        z = z[:, 1:] / (1 + z[:, :1].exp())
        (g,) = lib.autograd.grad(z.pow(2).mean(), x, create_graph=True)
        return (g * g).sum()
    (eo, ei), (to, ti) = both(f, rand(3, 4), rand(4, 5, seed=2))
    eo.backward()
    to.backward()
    assert_close(eo, to)
    for a, b in zip(ei, ti):
        assert_close(a.grad, b.grad, rtol=1e-6)


def test_detach_shares_storage_and_version():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.add_(1)
    assert x.tolist() == [2.0, 3.0] and x._version == 1


def test_requires_grad_only_for_float():
    with pytest.raises(RuntimeError, match="floating point"):
        ember.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        ember.tensor([1, 2], requires_grad=True)


def test_variable_and_legacy_constructors():
    v = ember.autograd.Variable(ember.tensor([1.0]), requires_grad=True)
    assert v.requires_grad
    assert ember.LongTensor([1, 2]).dtype is ember.int64
    assert ember.FloatTensor(2, 3).shape == (2, 3)
    assert isinstance(ember.tensor([1.0]), ember.FloatTensor)
