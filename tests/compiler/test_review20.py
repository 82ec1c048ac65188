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
