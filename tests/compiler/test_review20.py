"""REVIEW20: adversarial checks of session 19's compiler work (graph-break splitting, eager
layouts of compiled outputs, dynamic probes) against ember eager, each over several calls
whose arguments change (shapes, layouts, grad modes, closures, globals). Each test here
failed before its fix (named in its docstring) or pins a case that held."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.compiler.eval_frame import counters

pytestmark = pytest.mark.usefixtures("fresh_cache")

BACKEND = "aot_eager"  # the graph interpreted on arrays: no C compiler run
RNG = np.random.default_rng(20)


def _data(*shape, grad=False):
    return ember.tensor(RNG.standard_normal(shape).astype(np.float32), requires_grad=grad)


def _same(got, want, tol=1e-5):
    """Values, shapes, strides and dtypes of two (nests of) results agree."""
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, tol)
    elif isinstance(want, ember.Tensor):
        assert (got.shape, got.stride(), got.dtype) == (want.shape, want.stride(), want.dtype)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    else:
        assert got == want or (got != got and want != want)


def _mean_then_scale(x):
    h = x * 2 + 1
    v = h.mean().item()  # NaN for an empty x: passed into the next piece as a float
    return h.sin() * v, h


def test_nan_float_from_an_eager_statement_into_a_dynamic_piece():
    """A NaN passed into a piece recompiled with dynamic shapes: fitting the probes' constants
    raised numpy's LinAlgError ('SVD did not converge', symbolic.fit_ratio of NaNs); and its
    value guard failed on every call ('expected nan, got nan': NaN != NaN), so each call
    compiled again until the recompile limit. torch's guards test a NaN constant with isnan."""
    f = ember.compile(_mean_then_scale, backend=BACKEND)
    for shape in [(2, 3, 4, 5), (2, 3, 4, 5), (2, 3, 2, 5), (0, 3, 4, 5)] + [(0, 3, 4, 5)] * 4:
        x = _data(*shape)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no recompile-limit warning
            _same(f(x), _mean_then_scale(x))
    graphs = counters["stats"]["unique_graphs"]
    for _ in range(3):
        x = _data(0, 3, 4, 5)
        _same(f(x), _mean_then_scale(x))
    assert counters["stats"]["unique_graphs"] == graphs  # replayed


def _times(x, v):
    return x * v + 1


def test_nan_argument_is_guarded_by_isnan():
    """A whole compiled function called with a NaN float replays (was a recompile per call)."""
    f = ember.compile(_times, backend=BACKEND)
    x = _data(3)
    for v in [math.nan, math.nan, float("nan"), 2.0, float("nan")]:
        _same(f(x, v), _times(x, v))
    assert counters["stats"]["unique_graphs"] == 2


_VIEWS = {"t": lambda x: x.t(), "stepped": lambda x: x[:, ::2], "diagonal": lambda x: x.diagonal(),
          "flat": lambda x: x.view(-1) if x.is_contiguous() else x.reshape(-1),
          "view_and_product": lambda x: (x.t(), x * 2)}


@pytest.mark.parametrize("backend", [BACKEND, "inductor"])
@pytest.mark.parametrize("name", list(_VIEWS))
def test_a_returned_view_of_an_input_is_a_view_on_every_call(name, backend):
    """A compiled function returning a view of its input returned a copy on every replay
    (writing into it left the input unchanged, where eager's and torch's compiled result alias
    the input), and strides (2, 1) where eager's stepped view has (8, 4)."""
    fn = _VIEWS[name]
    f = ember.compile(fn, backend=backend)
    for call in range(3):
        for strided in (False, True) if call else (False,):
            x = _data(3, 8)[:, :4] if strided else _data(3, 4)
            got, want = f(x), fn(x)
            _same(got, want)
            got, want = (got[0], want[0]) if isinstance(got, tuple) else (got, want)
            aliases = np.shares_memory(want.numpy(), x.numpy())
            before = x.clone()
            got.add_(100)
            assert bool((x != before).any()) == aliases, (call, strided)
            assert x._version == int(aliases)
    assert len(f._entries) == 2  # one per input layout


def _model_and_optimizer():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 6), ember.nn.Tanh(), ember.nn.Linear(6, 2))
    return model, ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


LOSSES = []


def _step_logging_the_loss(model, opt, x, y):
    opt.zero_grad()
    loss = ember.nn.functional.cross_entropy(model(x), y)
    LOSSES.append(loss.item())  # the usual graph break: the step is split here
    loss.backward()
    opt.step()
    return loss.detach()


def _forward_zeroing_grads(model, opt, x, y):
    opt.zero_grad()
    return ember.nn.functional.cross_entropy(model(x), y)


def _backward_and_step(loss, opt):
    loss.backward()
    opt.step()


def _batches(n):
    return [(_data(5, 4), ember.tensor(RNG.integers(0, 2, 5))) for _ in range(n)]


def _same_parameters(a, b):
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_a_training_step_split_at_loss_item_trains_as_eager():
    """The step split at ``loss.item()``: its first piece (zero_grad, forward) replayed without
    setting the .grads to None (a piece recording a backward returned before its .grad sets,
    and the guard on which parameters have a .grad was dropped though zero_grad reads them),
    so gradients accumulated over the steps; parameters differed from eager's by 0.02-0.09 from
    the fourth step."""
    compiled_model, compiled_opt = _model_and_optimizer()
    model, opt = _model_and_optimizer()
    f = ember.compile(_step_logging_the_loss, backend=BACKEND)
    for x, y in _batches(6):
        _same(f(compiled_model, compiled_opt, x, y), _step_logging_the_loss(model, opt, x, y))
        assert LOSSES[-1] == pytest.approx(LOSSES[-2], rel=1e-5)
        _same_parameters(compiled_model, model)
    assert f._split is not None


def test_a_compiled_forward_calling_zero_grad_then_eager_backward():
    """``opt.zero_grad()`` inside a compiled forward whose loss is backpropagated eagerly: the
    replays left the previous step's .grad in place (gradients 0.4-0.7 off from the second step)."""
    compiled_model, compiled_opt = _model_and_optimizer()
    model, opt = _model_and_optimizer()
    f = ember.compile(_forward_zeroing_grads, backend=BACKEND)
    for x, y in _batches(5):
        for fn, m, o in ((f, compiled_model, compiled_opt), (_forward_zeroing_grads, model, opt)):
            fn(m, o, x, y).backward()
            o.step()
        _same_parameters(compiled_model, model)


def test_a_compiled_backward_of_a_loss_made_before_the_call():
    """A compiled ``loss.backward(); opt.step()`` fed a loss computed eagerly before the call:
    the recording's backward ran through the loss's history (nodes made before the call) and
    baked their saved values (the first batch's inputs) into the graph as constants, so every
    replay stepped with the first batch's gradients. Now such a backward is a graph break (the
    function runs eagerly), as torch's dynamo does not trace into a tensor's earlier history."""
    compiled_model, compiled_opt = _model_and_optimizer()
    model, opt = _model_and_optimizer()
    f = ember.compile(_backward_and_step, backend=BACKEND)
    for x, y in _batches(4):
        for fn, m, o in ((f, compiled_model, compiled_opt), (_backward_and_step, model, opt)):
            o.zero_grad()
            fn(ember.nn.functional.cross_entropy(m(x), y), o)
        _same_parameters(compiled_model, model)
    assert counters["graph_break"]


def _mixed_outputs(x, w):
    return x.t(), (x * w).sum(), x * 2


@pytest.mark.parametrize("backend", [BACKEND, "inductor"])
def test_outputs_without_grad_of_a_graph_with_a_backward_do_not_require_grad(backend):
    """Replays of a graph with a recorded backward made every output require grad, with the
    compiled node as grad_fn (x.t() and x * 2 of an x not requiring grad): eager's and torch's
    do not. Gradients of the differentiable output agree. (A returned ``(x * w).detach()`` still
    requires grad on replay: its array is the product's, one graph output.)"""
    f = ember.compile(_mixed_outputs, backend=backend)
    w = _data(3, 4, grad=True)
    for call in range(3):
        x = _data(3, 4)
        got, want = f(x, w), _mixed_outputs(x, w)
        assert [t.requires_grad for t in got] == [t.requires_grad for t in want] == [False, True, False]
        assert [t.grad_fn is None for t in got] == [True, False, True]
        _same(got, want)
        _same(ember.autograd.grad(got[1], w), ember.autograd.grad(want[1], w))
