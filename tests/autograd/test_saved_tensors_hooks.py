"""autograd.graph.saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks, against torch
2.13: which tensors are packed and unpacked, in what order, and the gradients that come out."""
import numpy as np
import pytest
import torch

import ember


def _mlp(lib, pack_hook, unpack_hook):
    """A two-layer tanh/sigmoid network written in ops whose nodes save what torch's save (the
    output of exp/tanh/sigmoid, both factors of a product of two tensors, sin's input)."""
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((5, 4)), dtype=lib.float32)
    w1 = lib.tensor(rng.standard_normal((5, 4)), dtype=lib.float32, requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((5, 4)), dtype=lib.float32, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        h = (x * w1).tanh()
        out = (h * w2).sigmoid().sin().relu().exp()
        loss = out.sum()
    loss.backward()
    return w1.grad, w2.grad


def _logged(lib):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), t.grad_fn.name() if t.grad_fn is not None else None,
                    t.requires_grad))
        return ("packed", t)

    def unpack(packed):
        log.append(("unpack",))
        return packed[1]
    grads = _mlp(lib, pack, unpack)
    return log, grads


def test_pack_and_unpack_calls_and_order_match_torch_on_a_small_mlp():
    log_t, grads_t = _logged(torch)
    log_e, grads_e = _logged(ember)
    assert len(log_t) == 16
    assert log_e == log_t
    for ge, gt in zip(grads_e, grads_t):
        np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)


def test_unpack_runs_once_per_backward_and_again_after_retain_graph():
    calls = {"pack": 0, "unpack": 0}

    def pack(t):
        calls["pack"] += 1
        return t

    def unpack(t):
        calls["unpack"] += 1
        return t
    x = ember.randn(3, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()   # mul saves both factors
    assert calls == {"pack": 2, "unpack": 0}
    y.backward(retain_graph=True)
    assert calls == {"pack": 2, "unpack": 2}
    y.backward()
    assert calls == {"pack": 2, "unpack": 4}
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy(), rtol=1e-6)


def test_the_innermost_hooks_apply_and_nothing_is_packed_outside():
    seen = []
    outer = ember.autograd.graph.saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t)
    inner = ember.autograd.graph.saved_tensors_hooks(lambda t: seen.append("inner") or t, lambda t: t)
    x = ember.randn(3, requires_grad=True)
    with outer:
        x.exp()
        with inner:
            x.exp()
        x.exp()
    x.exp()
    with ember.no_grad(), outer:
        x.exp()  # nothing is saved without a graph
    assert seen == ["outer", "inner", "outer"]


def test_a_write_in_place_after_saving_raises_under_hooks():
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with torch.autograd.graph.save_on_cpu():
        a = x * 1
        y = a.sin()
    a.add_(1)
    y.sum().backward()  # torch 2.13 skips the version check under hooks: the gradient at a + 1
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.5, 2.0, 3.0]), rtol=1e-6)
    for hooks in (ember.autograd.graph.save_on_cpu(),
                  ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t.view_as(t))):
        x = ember.tensor([0.5, 1.0, 2.0], requires_grad=True)
        with hooks:
            a = x * 1
            y = a.sin()
        a.add_(1)  # ember refuses rather than give that wrong gradient
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    x = ember.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        a = x * 1
        y = a.sin()
    a.add_(1)  # a copy made at saving holds the values the forward used: the right gradient
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.0, 2.0]), rtol=1e-6)


def test_save_on_cpu_gives_the_gradients_without_hooks():
    def grads(lib, hooks):
        torch.manual_seed(0)
        rng = np.random.default_rng(1)
        model = lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.GELU(), lib.nn.LayerNorm(16), lib.nn.Linear(16, 3))
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
        x = lib.tensor(rng.standard_normal((7, 6)), dtype=lib.float32)
        target = lib.tensor(rng.integers(0, 3, 7))
        with hooks:
            loss = lib.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        return [p.grad.numpy() for p in model.parameters()]
    reference = grads(torch, torch.autograd.graph.save_on_cpu(pin_memory=False))
    plain = grads(ember, ember.autograd.graph.disable_saved_tensors_hooks("off"))
    offloaded = grads(ember, ember.autograd.graph.save_on_cpu(pin_memory=False))
    for a, b, c in zip(reference, plain, offloaded):
        np.testing.assert_array_equal(b, c)
        np.testing.assert_allclose(c, a, rtol=1e-4, atol=1e-5)


def test_a_custom_function_s_saved_tensors_go_through_the_hooks():
    def run(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 3 * x * x * g
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t * 2,
                                                    lambda t: log.append("unpack") or t / 2):
            y = Cube.apply(x)
        y.sum().backward()
        return log, x.grad.tolist()
    assert run(ember) == run(torch) == (["pack", "unpack"], [3.0, 12.0])


def test_disable_saved_tensors_hooks_refuses_hooks_with_its_message():
    for lib in (torch, ember):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass  # allowed again outside


def test_an_unpack_hook_returning_no_tensor_is_a_type_error():
    x = ember.randn(2, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1.0):
        y = x.exp()
    with pytest.raises(TypeError, match="unpack_hook"):
        y.sum().backward()


def test_multi_result_ops_under_hooks_give_the_gradients_without():
    """A GRU's node has results it does not have (None), and max(dim) two."""
    def grads(hooks):
        ember.manual_seed(0)
        gru = ember.nn.GRU(3, 4, batch_first=True)
        x = ember.randn(2, 5, 3, requires_grad=True)
        with hooks:
            out, h = gru(x)
            loss = out.max(dim=1).values.sum() + h.sum()
        loss.backward()
        return [x.grad.numpy()] + [p.grad.numpy() for p in gru.parameters()]
    counted = []
    hooks = ember.autograd.graph.saved_tensors_hooks(lambda t: counted.append(1) or t, lambda t: t)
    for a, b in zip(grads(ember.autograd.graph.disable_saved_tensors_hooks("off")), grads(hooks)):
        np.testing.assert_array_equal(a, b)
    assert counted


def test_saved_values_on_grad_fn_and_the_tutorial_s_hook_order_as_torch():
    """The saved-tensors-hooks tutorial's reads: ``_saved_self/_saved_other`` are the tensors,
    ``_saved_result`` an equal tensor that is not the result, each access unpacks again, and a
    product's factors are packed and unpacked other first."""
    def run(lib):
        a = lib.randn(5, requires_grad=True)
        b = lib.ones(5, requires_grad=True)
        y = a * b
        e = lib.exp(a)
        facts = [y.grad_fn._saved_self is a, y.grad_fn._saved_other is b,
                 bool(e.grad_fn._saved_result.equal(e)), e.grad_fn._saved_result is e]
        log = []
        a = lib.ones(5, requires_grad=True)
        b = lib.ones(5, requires_grad=True) * 2
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append(("pack", t.tolist())) or t,
                                                    lambda t: log.append(("unpack", t.tolist())) or t):
            y = a * b
            p = a.sin()  # (pow also packs its result, which torch saves only for a tensor exponent)
        p.grad_fn._saved_self
        p.grad_fn._saved_self
        y.sum().backward()
        with pytest.raises(AttributeError):
            lib.exp(a).grad_fn._saved_mat2
        return facts, log
    assert run(ember) == run(torch)
