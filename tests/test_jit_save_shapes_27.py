"""A saved ``torch.jit.trace`` module loaded back runs at other sizes where the traced code
allows, as torch 2.13's loaded traces do (``ember.jit.save`` records the example's sizes as
``Dim.AUTO``)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::torch.jit.TracerWarning")


def _pair(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3, padding=1), lib.nn.ReLU(), lib.nn.Flatten(),
                             lib.nn.Linear(3 * 4 * 4, 5)).eval()


def _round_trip(lib, traced, path):
    lib.jit.save(traced, str(path))
    return lib.jit.load(str(path))


def test_a_loaded_traced_module_runs_at_other_batch_sizes_as_torchs(tmp_path):
    ours, theirs = _pair(ember), _pair(torch)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 2, 4, 4)).astype(np.float32)
    got = _round_trip(ember, ember.jit.trace(ours, ember.tensor(x)), tmp_path / "e.pt")
    want = _round_trip(torch, torch.jit.trace(theirs, torch.tensor(x)), tmp_path / "t.pt")
    assert list(got.state_dict()) == list(want.state_dict())
    for batch in (1, 2, 3, 9):
        xs = np.random.default_rng(batch).standard_normal((batch, 2, 4, 4)).astype(np.float32)
        np.testing.assert_allclose(got(ember.tensor(xs)).detach().numpy(), want(torch.tensor(xs)).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError):  # (the Linear fixes the features: torch raises too)
        want(torch.zeros(2, 2, 5, 5))
    with pytest.raises(AssertionError, match="Guard failed"):
        got(ember.zeros(2, 2, 5, 5))


def test_a_loaded_traced_function_runs_at_other_shapes_as_torchs(tmp_path):
    def f(a, b):
        return a.mean(0) * 2 + a.view(a.shape[0], -1).sum(1).max(), b.t() * 3
    x, y = np.ones((4, 3), np.float32), np.ones((3, 4), np.float32)
    got = _round_trip(ember, ember.jit.trace(f, (ember.tensor(x), ember.tensor(y))), tmp_path / "e.pt")
    want = _round_trip(torch, torch.jit.trace(f, (torch.tensor(x), torch.tensor(y))), tmp_path / "t.pt")
    rng = np.random.default_rng(1)
    for rows, cols in ((6, 3), (4, 5), (1, 2), (4, 3)):
        a, b = (rng.standard_normal(s).astype(np.float32) for s in ((rows, cols), (cols, rows)))
        for g, w in zip(got(ember.tensor(a), ember.tensor(b)), want(torch.tensor(a), torch.tensor(b))):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_what_export_cannot_size_is_saved_at_the_traced_shapes(tmp_path):
    """A function of ``*args`` (export names no such parameter): the static graph, as before."""
    def g(*xs):
        return xs[0] * 2 + xs[1]
    traced = ember.jit.trace(g, (ember.ones(2, 3), ember.ones(3)))
    loaded = _round_trip(ember, traced, tmp_path / "g.pt")
    assert loaded(ember.ones(2, 3), ember.ones(3)).tolist() == [[3.0] * 3] * 2
    with pytest.raises(AssertionError, match="Guard failed"):
        loaded(ember.ones(4, 3), ember.ones(3))
