"""``torch.jit.trace``: a :class:`ember.jit.TracedModule` that replays the ops of the example
call (``.graph``, ``.code``), with the traced module's own parameters, against torch 2.13's."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _nets():
    ember.manual_seed(0)
    net = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    return net, theirs


def test_a_traced_module_replays_its_graph_with_the_module_s_parameters_as_torchs():
    net, theirs = _nets()
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    traced, want = ember.jit.trace(net, (ember.tensor(x),)), torch.jit.trace(theirs, (torch.tensor(x),))
    assert isinstance(traced, ember.nn.Module) and isinstance(want, torch.nn.Module)
    assert list(traced.state_dict()) == list(want.state_dict())
    assert [p is q for p, q in zip(traced.parameters(), net.parameters())] == [True] * 4
    assert traced.training is want.training is True
    assert "Addmm" in traced.code and "Relu" in traced.code and traced.graph is not None
    for rows in (5, 7):  # (another batch: recorded again, as a graph bakes its sizes in)
        xs = np.random.default_rng(rows).standard_normal((rows, 3)).astype(np.float32)
        got, expected = traced(ember.tensor(xs)), want(torch.tensor(xs))
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-6)
    traced(ember.tensor(x)).sum().backward()
    want(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(net[0].weight.grad.numpy(), theirs[0].weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_traced_function_bakes_no_size_of_the_example_into_other_shapes():
    def f(a):
        return a.mean(0) * 2 + a.view(a.shape[0], -1).sum(1).max()
    x, y = np.ones((4, 3), np.float32), np.arange(12.0, dtype=np.float32).reshape(6, 2)
    traced, want = ember.jit.trace(f, ember.tensor(x)), torch.jit.trace(f, torch.tensor(x))
    for v in (x, y, x):
        np.testing.assert_allclose(traced(ember.tensor(v)).numpy(), want(torch.tensor(v)).numpy(), rtol=1e-6)


def _branch(lib, a):
    return a * 2 if lib.jit.is_tracing() else a * 3  # (the traced call's branch is recorded)


def test_what_cannot_be_recorded_runs_eagerly(tmp_path):
    """A ``print`` in the traced call (torch's trace prints once and records the rest): the
    function itself, with a warning; ``is_tracing()`` is True in the recorded call only."""
    def noisy(a):
        print("tracing")
        return a + 1
    with pytest.warns(UserWarning, match="could not be recorded"):
        assert ember.jit.trace(noisy, ember.ones(2)) is noisy
    traced = ember.jit.trace(lambda a: _branch(ember, a), ember.ones(2))
    assert traced(ember.ones(2)).tolist() == [2.0, 2.0] == torch.jit.trace(
        lambda a: _branch(torch, a), torch.ones(2), check_trace=False)(torch.ones(2)).tolist()
    assert _branch(ember, ember.ones(2)).tolist() == [3.0, 3.0] and not ember.jit.is_tracing()


def test_save_and_load_a_traced_module_as_torchs_round_trip(tmp_path):
    """``jit.save``/``traced.save`` then ``jit.load``: a module giving the traced one's results
    with its state_dict, the extra files back, as torch's; ember's file is data (the export
    format), so a file that is neither raises RuntimeError as torch's does, and a module that
    was not traced cannot be saved."""
    net, theirs = _nets()
    net.eval(), theirs.eval()
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    traced, want = ember.jit.trace(net, ember.tensor(x)), torch.jit.trace(theirs, torch.tensor(x))
    ember.jit.save(traced, tmp_path / "e.pt", _extra_files={"note.txt": "hi"})
    torch.jit.save(want, tmp_path / "t.pt", _extra_files={"note.txt": "hi"})
    ours, theirs = {"note.txt": ""}, {"note.txt": ""}
    loaded = ember.jit.load(str(tmp_path / "e.pt"), _extra_files=ours)
    expected = torch.jit.load(str(tmp_path / "t.pt"), _extra_files=theirs)
    assert ours == theirs == {"note.txt": b"hi"}
    assert list(loaded.state_dict()) == list(expected.state_dict())
    np.testing.assert_allclose(loaded(ember.tensor(x)).detach().numpy(),
                               expected(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
    traced.save(str(tmp_path / "again.pt"))  # (the method, as torch's)
    assert ember.jit.load(str(tmp_path / "again.pt"))(ember.tensor(x)).tolist() == traced(ember.tensor(x)).tolist()
    (tmp_path / "junk.pt").write_bytes(b"not a model")
    with pytest.raises(RuntimeError):
        torch.jit.load(str(tmp_path / "junk.pt"))
    with pytest.raises(RuntimeError, match="not an ember.export file"):
        ember.jit.load(str(tmp_path / "junk.pt"))
    with pytest.raises(NotImplementedError, match="only a module made by ember.jit.trace"):
        ember.jit.save(net, tmp_path / "plain.pt")
