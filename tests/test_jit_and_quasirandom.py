"""``torch.jit`` (scripting gives back what it was given, so decorated programs run eagerly;
tracing records a graph), ``torch.random`` (``fork_rng``) and ``torch.quasirandom.SobolEngine`` against
torch 2.13."""
import typing
import warnings

import numpy as np
import pytest

import ember
from torchcompare import assert_same_error

torch = pytest.importorskip("torch")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_scripted_and_traced_code_runs_eagerly_with_torchs_results():
    @ember.jit.script
    def f(x):
        return x.relu() * 2

    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = ember.nn.Linear(3, 2)

        @ember.jit.export
        def extra(self, x):
            return self.fc(x).sum()

        @ember.jit.ignore
        def debug(self):
            return "python"

        @ember.jit.ignore(drop=True)
        def dropped(self):
            return 1

        @ember.jit.unused
        def unused(self):
            return 2

        def forward(self, x):
            if not ember.jit.is_scripting() and not ember.jit.is_tracing():
                x = ember.jit.annotate(ember.Tensor, x)
            return self.fc(x)

    net = Net()
    x = ember.randn(4, 3)
    scripted, traced = ember.jit.script(net), ember.jit.trace(net, (x,))
    assert scripted is net and ember.jit.trace_module(net, {"forward": x}) is net
    assert isinstance(traced, ember.jit.TracedModule)  # (tests/test_jit_trace_26.py)
    np.testing.assert_array_equal(scripted(x).detach().numpy(), net(x).detach().numpy())
    np.testing.assert_array_equal(traced(x).detach().numpy(), net(x).detach().numpy())
    assert (net.debug(), net.dropped(), net.unused(), float(net.extra(x))) == ("python", 1, 2, float(net(x).sum()))
    np.testing.assert_array_equal(f(x).numpy(), (x.relu() * 2).numpy())
    future = ember.jit.fork(f, x)
    np.testing.assert_array_equal(ember.jit.wait(future).numpy(), f(x).numpy())
    assert ember.jit.Attribute(1, int) == (1, int) and ember.jit.Attribute(1, int).type is int
    assert isinstance(ember.jit.Error("e"), RuntimeError)
    assert not isinstance(net, ember.jit.ScriptModule)
    assert ember.jit.set_fusion_strategy([("DYNAMIC", 3)]) == torch.jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)])
    ember.jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)])


def test_the_entry_points_torch_deprecates_warn_as_torchs():
    for call in (lambda L: L.jit.script(L.nn.Linear(2, 2)), lambda L: L.jit.fork(abs, 1),
                 lambda L: L.jit.freeze(L.jit.script(L.nn.Linear(2, 2)).eval())):
        seen = []
        for L in (ember, torch):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call(L)
            seen.append({str(w.message) for w in caught if w.category is DeprecationWarning})
        assert seen[0] == seen[1] and seen[0]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore:The inner type of a container")
def test_jit_isinstance_checks_typing_containers_as_torch():
    cases = [([1, 2], typing.List[int]), ([1, "a"], typing.List[int]), ({"a": 1.0}, typing.Dict[str, float]),
             ({"a": 1}, typing.Dict[str, str]), ((1, "a"), typing.Tuple[int, str]), ((1, 2), typing.Tuple[int]),
             (None, typing.Optional[int]), (3, typing.Optional[int]), ("s", str), ([], typing.List[str])]
    for value, kind in cases:
        assert ember.jit.isinstance(value, kind) == torch.jit.isinstance(value, kind), (value, kind)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_what_needs_torchscript_raises_a_clear_error_and_freeze_wants_eval_mode(tmp_path):
    net = ember.nn.Linear(2, 2)
    with pytest.raises(NotImplementedError, match=r"jit.save is not supported.*state_dict"):
        ember.jit.save(net, tmp_path / "m.pt")
    torch = pytest.importorskip("torch")
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), tmp_path / "m.pt")  # TorchScript code inside
    with pytest.raises(NotImplementedError, match=r"jit.load is not supported.*TorchScript archive"):
        ember.jit.load(tmp_path / "m.pt")
    with pytest.raises(NotImplementedError, match="CompilationUnit"):
        ember.jit.CompilationUnit("def f(x): return x")
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode") as ours:
        ember.jit.freeze(net)
    with pytest.raises(RuntimeError) as theirs:
        torch.jit.freeze(torch.jit.script(torch.nn.Linear(2, 2)))
    assert str(ours.value) == str(theirs.value)
    assert ember.jit.freeze(net.eval()) is net and ember.jit.optimize_for_inference(net) is net


def test_fork_rng_restores_the_default_generator():
    ember.manual_seed(3)
    want = ember.rand(3)
    ember.manual_seed(3)
    with ember.random.fork_rng():
        ember.manual_seed(7)
        ember.rand(100)
    np.testing.assert_array_equal(ember.rand(3).numpy(), want.numpy())
    with pytest.raises(ValueError), ember.random.fork_rng():
        ember.rand(5)
        raise ValueError
    ember.manual_seed(3)
    with ember.random.fork_rng(enabled=False):
        ember.rand(3)
    assert not np.array_equal(ember.rand(3).numpy(), want.numpy())
    assert ember.random.initial_seed() == 3 and ember.random.manual_seed is ember.manual_seed


@pytest.mark.parametrize("dimension", [1, 5, 1111])
def test_sobol_points_equal_torchs(dimension):
    ours, theirs = ember.quasirandom.SobolEngine(dimension), torch.quasirandom.SobolEngine(dimension)
    for step in (lambda e: e.draw(1), lambda e: e.draw(6), lambda e: e.fast_forward(9) and e.draw(5),
                 lambda e: e.draw(12, dtype=getattr(ember if isinstance(e, ember.quasirandom.SobolEngine) else torch,
                                                  "float64")), lambda e: e.reset().draw_base2(3)):
        a, b = step(ours), step(theirs)
        assert a.dtype.name == str(b.dtype).split(".")[1] and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert ours.num_generated == theirs.num_generated == 8


@pytest.mark.parametrize("dimension,seed", [(1, 0), (3, 4), (40, None)])
def test_sobol_scrambled_points_equal_torchs(dimension, seed):
    ember.manual_seed(11), torch.manual_seed(11)  # seed None: the default generator's stream
    ours = ember.quasirandom.SobolEngine(dimension, scramble=True, seed=seed)
    theirs = torch.quasirandom.SobolEngine(dimension, scramble=True, seed=seed)
    for step in (lambda e: e.draw(1), lambda e: e.draw(7), lambda e: e.fast_forward(5) and e.draw(20),
                 lambda e: e.reset().draw(3)):
        np.testing.assert_array_equal(step(ours).numpy(), step(theirs).numpy())
    assert repr(ours) == repr(theirs)
    assert ember.rand(1).item() == torch.rand(1).item()  # the same draws taken from the stream


def test_sobol_scrambled_is_a_net_and_errors_as_torch():
    a = ember.quasirandom.SobolEngine(3, scramble=True, seed=4)
    first = a.draw(256, dtype=ember.float64).numpy()
    np.testing.assert_array_equal(a.reset().draw(256, dtype=ember.float64).numpy(), first)
    assert first.min() >= 0 and first.max() < 1 and not (first == 0).any()
    # every 1/16-wide slab of each axis holds exactly 256/16 points (a (0, m, s)-net property)
    assert all((np.bincount((first[:, d] * 16).astype(int), minlength=16) == 16).all() for d in range(3))
    out = ember.empty(2, 3, dtype=ember.float64)
    assert ember.quasirandom.SobolEngine(3).draw(2, out=out) is out
    for make in (lambda L: L.quasirandom.SobolEngine(0), lambda L: L.quasirandom.SobolEngine(21202),
                 lambda L: (lambda e: (e.draw(3), e.draw_base2(2)))(L.quasirandom.SobolEngine(2))):
        assert_same_error(lambda: make(ember), lambda: make(torch))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.quasirandom.SobolEngine(2).draw(3)  # no power-of-2 warning (torch has none)
