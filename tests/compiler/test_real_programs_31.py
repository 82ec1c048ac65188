"""pytorch/examples programs with ``torch.compile`` added, under ``import ember as torch`` (REALPROG31).

The programs (condensed in ``real_programs_31.py``): mnist_rnn (a batch-first LSTM, BatchNorm1d,
Dropout2d on a 2-D tensor, Adadelta, StepLR), regression (the loop body compiled whole:
``b_target.item()``, ``output.item()``, the manual update on ``param.data``), mnist_forward_forward
(layers that are ``nn.Linear`` subclasses holding their own Adam, the label written in by
``x_[:, :10] *= 0.0`` and ``x_[range(n), y] = x.max()``), reinforce (a ``deque`` of returns made a
tensor, ``cat`` of the log-probabilities), siamese_network (a ResNet trunk run on two images,
``where(out > 0.5, 1, 0)``) and gat (attention over a dense adjacency, ``mT``, ``where``, masked
NLL). Each runs three iterations and must log torch 2.13's eager numbers and end with its
parameters; compiled with the ``aot_eager`` backend (the same captures and graphs; the C builds
would cost seconds here: ``benchmarks/bench_real_programs_31.py`` runs the default one and times it).

Found: forward-forward's compiled epoch crashed (ValueError "only placeholders can be mutated"):
the guards' World found no optimizer held as a module attribute (``self.opt``), so the Adam update
broke the graph halfway through recording its op, whose writes then landed on the new piece's
nodes. The World now finds the optimizers the modules hold (one graph per layer), and an update
of an optimizer the function cannot reach breaks before its node (the step runs between the
pieces). Its ``overlay_y_on_x`` broke at ``x_[:, :10] *= 0.0``: Python writes the multiplied view
back by ``x_[:, :10] = view``, which read the view just written as stale; a view written through
now holds what was written (other views of its base are still stale). 3 graphs, no break (torch: 5
frames, 7 breaks).

reinforce's ``finish_episode`` records again per episode (the saved log-probabilities are new
tensors), breaking at every node of their backward; since SPLITPERF31 only twice, then eagerly
(``test_split_perf_31.py``; torch 2.13 cannot compile it: ``torch.tensor(deque)`` raises
InternalTorchDynamoError).
"""
import numpy as np
import pytest

import ember
import real_programs_31 as programs
from ember._dynamo.utils import counters

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:dropout2d")

PROGRAMS = {**programs.PROGRAMS, "reinforce": lambda lib, compile: programs.reinforce(lib, compile, max_steps=8)}


def _run(lib, name, compiled):
    compile = (lambda fn: ember.compile(fn, backend="aot_eager")) if compiled else (lambda fn: fn)
    model, step = PROGRAMS[name](lib, compile=compile)
    log = [step() for _ in range(3)]
    return log, [p.detach().numpy().copy() for p in model.parameters()], model


_RUNS = {}


def _runs(name):
    """``(torch eager's (log, params, model), ember compiled's, (graphs, breaks))`` of program ``name``,
    run once for the module's tests."""
    if name not in _RUNS:
        ember.compiler.reset()
        counters.clear()
        ours = _run(ember, name, True)
        _RUNS[name] = _run(torch, name, False), ours, (counters["stats"]["unique_graphs"],
                                                       sum(counters["graph_break"].values()))
        ember.compiler.reset()
    return _RUNS[name]


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_compiled_program_logs_torchs_numbers_and_ends_with_its_parameters(name):
    (log, params, _), (got, ours, _), _ = _runs(name)
    for expected, step in zip(log, got):
        np.testing.assert_allclose(step, expected, rtol=1e-5, atol=1e-6)
    for expected, p in zip(params, ours):
        np.testing.assert_allclose(p, expected, rtol=1e-5, atol=1e-6)


def test_regression_prints_torchs_learnt_polynomial():
    (_, _, fc), (_, _, ours), _ = _runs("regression")
    assert programs.poly_desc(ours.weight.view(-1), ours.bias) == programs.poly_desc(fc.weight.view(-1), fc.bias)


# graphs and breaks; torch 2.13's (a CompileCounter backend, three iterations): mnist_rnn 0 (dynamo
# does not trace nn.LSTM: the model runs eagerly), regression 8 frames and 6 breaks (the .item()s
# and the backward), forward_forward 5 and 7 (zero_grad, the backward), reinforce raises
# (torch.tensor of a deque), siamese 2 and gat 2 (train and eval), no break
COUNTS = {"mnist_rnn": (2, 0), "regression": (3, 5), "forward_forward": (3, 0), "reinforce": (1, 6),
          "siamese": (2, 0), "gat": (2, 0)}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_graph_counts(name):
    assert _runs(name)[2] == COUNTS[name]  # forward_forward: raised ValueError before


def _layer_epochs(lib, compiled):
    """forward-forward's pattern: an epoch compiled as a method of a module holding its optimizer."""
    class Layer(lib.nn.Linear):
        def __init__(self):
            super().__init__(5, 3)
            self.opt = lib.optim.Adam(self.parameters(), lr=0.03)

        def epoch(self, x):
            loss = lib.mm(x, self.weight.T).add(self.bias).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return loss
    lib.manual_seed(0)
    layer, x = Layer(), lib.randn(4, 5)
    epoch = ember.compile(layer.epoch, backend="aot_eager") if compiled else layer.epoch
    return [epoch(x).item() for _ in range(3)] + layer.weight.flatten().tolist()


def test_an_optimizer_held_by_a_module_is_found():
    ember.compiler.reset()
    counters.clear()
    got = _layer_epochs(ember, True)  # (raised ValueError: only placeholders can be mutated)
    np.testing.assert_allclose(got, _layer_epochs(torch, False), rtol=1e-5, atol=1e-6)
    assert (counters["stats"]["unique_graphs"], dict(counters["graph_break"])) == (1, {})


def test_an_update_by_an_optimizer_out_of_reach_breaks_the_graph():
    """``opt.step`` passed in (its optimizer reached by no walk): the update runs between two
    pieces, eager's numbers (it raised ValueError: only placeholders can be mutated)."""
    def step(lib, x, model, update):
        loss = model(x).sum()
        loss.backward()
        update()
        return loss
    logs = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        model = lib.nn.Linear(4, 3)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        fn = ember.compile(lambda *a: step(ember, *a), backend="aot_eager") if lib is ember else lambda *a: step(torch, *a)
        logs.append([fn(lib.ones(2, 4), model, opt.step).item() for _ in range(3)] + model.weight.flatten().tolist())
    np.testing.assert_allclose(logs[1], logs[0], rtol=1e-6)
    assert "SgdUpdate of a tensor that is no parameter of an optimizer the function reaches" in counters["graph_break"]


def _overlay(lib, x, y, other_view):
    x_ = x.clone()
    x_[:, :3] *= 0.0  # x_.__setitem__(s, x_.__getitem__(s).__imul__(0.0)): the view written back
    x_[range(x.shape[0]), y] = x.max()
    a, b = x_[:, 3:5], x_[:, 4:6]
    a.mul_(2)
    return (x_, a + 1) + ((b * 3,) if other_view else ())  # b, over a's memory, is stale: a break


@pytest.mark.parametrize("y, other_view", [(1, False), ([0, 2, 1, 0], False), (1, True)])
def test_a_write_through_a_view_leaves_the_view_read_without_a_break(y, other_view):
    ember.compiler.reset()
    counters.clear()
    x = torch.randn(4, 7)
    expected = _overlay(torch, x, torch.tensor(y) if isinstance(y, list) else y, other_view)
    fn = ember.compile(lambda x, y: _overlay(ember, x, y, other_view), backend="aot_eager")
    for _ in range(2):
        got = fn(ember.tensor(x.numpy()), ember.tensor(y) if isinstance(y, list) else y)
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g.numpy(), e.numpy())
    stale = {"read of a view after an in-place write into its base": 1}
    assert dict(counters["graph_break"]) == (stale if other_view else {})  # (before: a break at x_[:, :3] *= 0.0)
    assert counters["stats"]["unique_graphs"] == (0 if other_view else 1)
