"""A gradient of a gradient (``autograd.grad(..., create_graph=True)``) through a compiled
forward, on every call: the first call runs eagerly (recorded), later ones replay the compiled
joint graph, whose backward must then give gradients with history. Compared with eager ember
(the same ops) and with real torch, over several calls."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _model(lib, dropout):
    lib.manual_seed(0)
    layers = [lib.nn.Linear(4, 6), lib.nn.Tanh()] + [lib.nn.Dropout(0.3)] * dropout + [lib.nn.Linear(6, 1)]
    model = lib.nn.Sequential(*layers)
    rng = np.random.default_rng(1)
    for p in model.parameters():
        p.data.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return model


def _penalty_step(lib, model, x):
    """A gradient penalty (WGAN-GP's): the norm of d out / d x, differentiated again."""
    x = x.clone().requires_grad_(True)
    out = model(x)
    g, = lib.autograd.grad(out.sum(), x, create_graph=True)
    gg, = lib.autograd.grad((g.square().sum() + out.sum()), x, retain_graph=True)
    penalty = (g.norm(2, dim=1) - 1).square().mean()
    penalty.backward()
    # the last bias has no gradient: the penalty does not depend on it (None, as torch's)
    return [g.detach().numpy().copy(), gg.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()
                                                             if p.grad is not None]


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_grad_of_grad_through_a_compiled_forward_equals_eager_and_torch_on_every_call(backend):
    model, reference, oracle = _model(ember, 0), _model(ember, 0), _model(torch, 0)
    compiled = ember.compile(model, backend=backend)
    rng = np.random.default_rng(2)
    for call in range(4):
        x = rng.standard_normal((5, 4)).astype(np.float32)
        for m in (model, reference, oracle):
            m.zero_grad()
        got = _penalty_step(ember, compiled, ember.tensor(x))
        want = _penalty_step(ember, reference, ember.tensor(x))
        truth = _penalty_step(torch, oracle, torch.tensor(x))
        assert len(got) == len(want) == len(truth) == 5
        for g, w, t in zip(got, want, truth):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"call {call}")
            np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5, err_msg=f"call {call}")
    assert len(compiled._compiled_call._entries) == 1  # replayed, not recompiled nor run eagerly


def test_grad_of_grad_replays_the_calls_own_dropout_masks():
    """The forward is replayed from the generator state the call started with: the same masks,
    and the stream after the step is where eager leaves it."""
    model, reference = _model(ember, 1), _model(ember, 1)
    compiled = ember.compile(model)
    rng = np.random.default_rng(3)
    for call in range(4):
        x = rng.standard_normal((5, 4)).astype(np.float32)
        results = []
        for m in (compiled, reference):
            model.zero_grad(), reference.zero_grad()
            ember.manual_seed(10 + call)
            results.append(_penalty_step(ember, m, ember.tensor(x)) + [ember.rand(3).numpy()])
        for g, w in zip(*results):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"call {call}")


def test_an_input_written_between_the_call_and_the_grad_of_grad_raises_torchs_error():
    model = _model(ember, 0)
    compiled = ember.compile(model)
    for _ in range(2):
        x = ember.ones(2, 4, requires_grad=True)
        out = compiled(x).sum()
        with ember.no_grad():
            model[0].weight.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            ember.autograd.grad(out, x, create_graph=True)


def test_grad_of_grad_after_two_calls_that_update_running_statistics():
    """Batch norm's running statistics are written by every call (inputs the graph mutates, not
    read back by the replay): a second call before the gradient of the first is fine."""
    ember.manual_seed(0)
    layers = lambda: [ember.nn.Linear(4, 6), ember.nn.BatchNorm1d(6), ember.nn.Tanh(), ember.nn.Linear(6, 1)]
    model, reference = ember.nn.Sequential(*layers()), ember.nn.Sequential(*layers())
    reference.load_state_dict(model.state_dict())
    compiled = ember.compile(model)
    for call in range(3):
        x = np.random.default_rng(call).standard_normal((5, 4)).astype(np.float32)
        results = []
        for m in (compiled, reference):
            first, second = ember.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
            out, _ = m(first), m(second)
            g, = ember.autograd.grad(out.sum(), first, create_graph=True)
            gg, = ember.autograd.grad(g.square().sum(), first)
            results.append((g.detach().numpy(), gg.numpy()))
        for got, want in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"call {call}")
        np.testing.assert_allclose(model[1].running_var.numpy(), reference[1].running_var.numpy(), rtol=1e-6)



def _input_gradient(lib, model, x):
    """d model(x).sum() / d x, with history (create_graph=True): a gradient penalty's term."""
    g, = lib.autograd.grad(model(x).sum(), x, create_graph=True)
    return g


def test_a_gradient_taken_inside_the_compiled_function_keeps_its_history_on_every_call():
    # autograd.grad(create_graph=True) inside the compiled function: a review found the second
    # call on returning the gradient detached (the replay of a captured backward), so the
    # penalty's backward raised; the create_graph backward is a graph break, equal to eager and torch.
    model, reference, oracle = _model(ember, 0), _model(ember, 0), _model(torch, 0)
    compiled = ember.compile(lambda x: _input_gradient(ember, model, x))
    rng = np.random.default_rng(4)
    for call in range(3):
        x = rng.standard_normal((5, 4)).astype(np.float32)
        results = []
        for lib, m, fn in ((ember, model, compiled), (ember, reference, None), (torch, oracle, None)):
            m.zero_grad()
            t = lib.tensor(x, requires_grad=True)
            g = fn(t) if fn else _input_gradient(lib, m, t)
            (g.norm(2, dim=1) - 1).square().mean().backward()
            results.append([g.detach().numpy()] + [p.grad.numpy().copy() for p in m.parameters() if p.grad is not None])
        for got, want, truth in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"call {call}")
            np.testing.assert_allclose(got, truth, rtol=1e-4, atol=1e-5, err_msg=f"call {call}")
    explanation = ember._dynamo.explain(lambda x: _input_gradient(ember, model, x))(ember.ones(5, 4, requires_grad=True))
    assert any("create_graph=True" in b.reason for b in explanation.break_reasons)
