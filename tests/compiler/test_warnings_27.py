"""Warnings inside a compiled function, with torch 2.13's frame counts as the oracle (NEWBIE27).

The spatial transformer tutorial's ``F.affine_grid``/``F.grid_sample`` without ``align_corners``
warn (a UserWarning from the op, shown once under the default filter): torch's dynamo keeps the
op's warning in the graph (2 graphs for train and eval, no break); ember took the warning's
write to ``sys.stderr`` for the user's output and broke the graph there (5 graphs, 4 breaks).
An op's own warning is no break now; a replay does not warn again, as eagerly under the
default filter (a location warns once). A ``warnings.warn`` in the user's code is a graph break,
as torch's ("Dynamo does not know how to trace the Python builtin `_warnings.warn`"): it warns
on every call, also when the warnings are recorded (``catch_warnings(record=True)``), where
ember's recording warned once and its replays never.
"""
import importlib.util
import warnings

import pytest

import ember
from ember._dynamo.testing import CompileCounter

torch = pytest.importorskip("torch")
import torch._dynamo.testing  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_compiler")

# a copy of the warnings module: its function writing a warning to sys.stderr (pytest's replaces it)
_SPEC = importlib.util.find_spec("warnings")
_STDLIB_WARNINGS = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_STDLIB_WARNINGS)


def _stn(lib):
    class Net(lib.nn.Module):  # the tutorial's stn(), condensed
        def __init__(self):
            super().__init__()
            self.loc = lib.nn.Sequential(lib.nn.Conv2d(1, 4, 5), lib.nn.MaxPool2d(2), lib.nn.ReLU(True))
            self.fc_loc = lib.nn.Linear(4 * 4 * 4, 6)
            self.fc_loc.weight.data.zero_()
            self.fc_loc.bias.data.copy_(lib.tensor([1, 0, 0, 0, 1, 0], dtype=lib.float))

        def forward(self, x):
            theta = self.fc_loc(self.loc(x).flatten(1)).view(-1, 2, 3)
            grid = lib.nn.functional.affine_grid(theta, x.size())
            return lib.nn.functional.dropout(lib.nn.functional.grid_sample(x, grid), 0.2, self.training)
    return Net()


def _frames(lib, counter, run, action="default", record=True):
    """(frames compiled, what ``run`` returned, the warnings recorded (``record``) else shown)."""
    if lib is torch:
        torch._dynamo.reset()
    with warnings.catch_warnings(record=record) as shown:
        warnings.simplefilter(action)
        if not record:  # written to sys.stderr by the standard library's function, as outside pytest
            warnings._showwarnmsg_impl = _STDLIB_WARNINGS._showwarnmsg_impl
        results = run(lib, counter)
    return counter.frame_count, results, [str(w.message) for w in shown or ()]


def _spatial_transformer(lib, counter):
    lib.manual_seed(0)
    net = _stn(lib)
    x = lib.rand(3, 1, 12, 12)
    compiled = lib.compile(net, backend=counter)
    outs = []
    for train in (True, True, False, False):
        net.train(train)
        y = compiled(x)
        y.sum().backward() if train else None
        outs.append(y.detach())
    return outs[2:], net(x).detach()  # (evaluated)


def test_an_ops_own_warning_is_no_graph_break(capsys):
    # shown: written to sys.stderr (the write was the break; a recorded warning is written nowhere)
    ours, (outs, eager), _ = _frames(ember, CompileCounter(), _spatial_transformer, record=False)
    shown = capsys.readouterr().err
    theirs, (t_outs, _), _ = _frames(torch, torch._dynamo.testing.CompileCounter(), _spatial_transformer,
                                     record=False)
    t_shown = capsys.readouterr().err
    assert ours == theirs == 2  # (train, eval; before: 5 graphs around 4 breaks)
    assert not ember._dynamo.utils.counters["graph_break"]
    for y, t in zip(outs, t_outs):
        assert ember.equal(y, eager)
        assert abs(y.numpy() - t.numpy()).max() < 1e-6
    warning = "UserWarning: Default grid_sample and affine_grid behavior has changed"
    assert shown.count(warning) == 2 and warning in t_shown  # ember's: once each, at the recording


def _warning_step(lib, counter):
    def step(x):
        y = x * 2
        warnings.warn(f"step {int(y.shape[0])}")
        return y + 1
    compiled = lib.compile(step, backend=counter)
    return [compiled(lib.ones(2)) for _ in range(3)]


def test_a_users_warning_breaks_the_graph_and_warns_on_every_call():
    ours, outs, mine = _frames(ember, CompileCounter(), _warning_step, "always")
    theirs, _, _ = _frames(torch, torch._dynamo.testing.CompileCounter(), _warning_step, "always")
    assert [y.tolist() for y in outs] == [[3.0, 3.0]] * 3
    assert mine == ["step 2"] * 3  # (before: once, at the recording)
    assert ours == theirs == 2  # the pieces before and after the call
    reasons = ember._dynamo.utils.counters["graph_break"]
    assert list(reasons) == ["warnings.warn() is input or output, a Python side effect (a replay would not repeat it)"]
