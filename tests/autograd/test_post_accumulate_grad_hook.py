"""``Tensor.register_post_accumulate_grad_hook`` against torch 2.13: the hook sees the leaf
after its ``.grad`` is accumulated, in every backward, not in ``autograd.grad``; an optimizer
step inside the backward; errors; a compiled step with such a hook gives eager's result."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _run(L):
    x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
    x.register_hook(lambda g: g * 3)  # runs first: the hook sees the accumulated, hooked gradient
    (x * x).sum().backward()
    (x * 2).sum().backward()
    L.autograd.grad((x * 2).sum(), x)  # no accumulation, no call
    handle.remove()
    (x * 2).sum().backward()
    return seen, x.grad.tolist()


def test_the_hook_runs_after_each_accumulation_as_torchs():
    assert _run(ember) == _run(torch)
    assert len(_run(ember)[0]) == 2


def test_an_optimizer_step_in_the_backward_equals_torchs():
    results, start = [], None
    for L in (ember, torch):
        net = L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 1))
        if start is None:
            start = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
        net.load_state_dict({k: L.tensor(v) for k, v in start.items()})
        optimizers = {p: L.optim.SGD([p], lr=0.1, momentum=0.9) for p in net.parameters()}

        def step(p):
            optimizers[p].step()
            optimizers[p].zero_grad()
        for p in net.parameters():
            p.register_post_accumulate_grad_hook(step)
        x = L.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        before = net(x).detach().numpy()
        for _ in range(3):
            net(x).pow(2).mean().backward()
        results.append(net(x).detach().numpy())
        assert all(p.grad is None for p in net.parameters())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)
    assert np.abs(results[0] - before).max() > 1e-3  # the steps ran


def test_errors_are_torchs():
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            L.ones(2).register_post_accumulate_grad_hook(print)
        with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
            (L.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print)


def test_a_compiled_backward_runs_the_hook_as_eager():
    ember.compiler.reset()
    calls = []

    def train(w, x):
        (w * x).sum().backward()

    for compiled in (False, True):
        w = ember.ones(3, requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda t: calls.append((compiled, t.grad.tolist())))
        fn = ember.compile(train) if compiled else train
        for _ in range(2):
            fn(w, ember.tensor([1.0, 2.0, 3.0]))
    assert [c[1] for c in calls if c[0]] == [c[1] for c in calls if not c[0]] == [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]
    ember.compiler.reset()
