"""The guards' fast path: a compiled call re-reads the modules it reaches only when some module
changed (``nn.modules.module.STATE_VERSION``: attribute assignments, writes to the parameter,
buffer, submodule and hook tables) or a plain list or dict a module holds changed. Each test
changes a module in a way that goes around ``Module.__setattr__`` after the graph replayed, and
compares with eager: it fails if the fast path skipped the change."""
import collections
import copy
import pickle

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember._dynamo.utils import counters


pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _check(compiled, eager, x):
    with ember.no_grad():
        got, want = compiled(x), eager(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def _warm(compiled, x):
    with ember.no_grad():
        for _ in range(3):  # capture, then replays (the last ones on the fast path)
            compiled(x)


class Listed(nn.Module):
    """Runs the modules of a plain list (not registered) after a Linear."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.extra = []

    def forward(self, x):
        x = self.fc(x)
        for m in self.extra:
            x = m(x)
        return x


def test_writes_to_the_tables_by_hand_are_seen():
    ember.manual_seed(0)
    model, x = nn.Sequential(nn.Linear(3, 3), nn.ReLU()), ember.randn(4, 3)
    cf = ember.compile(model, dynamic=False)
    _warm(cf, x)
    model._modules["1"] = nn.Tanh()                      # a submodule swapped in the table
    _check(cf, model, x)
    model[0]._parameters["bias"] = nn.Parameter(ember.full((3,), 5.0))  # a parameter swapped
    _check(cf, model, x)
    model._modules.update({"1": nn.Sigmoid()})
    _check(cf, model, x)
    del model[1]                                         # renumbered: the table stays counted
    _check(cf, model, x)
    model._modules.setdefault("1", nn.Hardtanh(-0.1, 0.1))
    _check(cf, model, x)


def test_hooks_added_and_removed_are_seen():
    ember.manual_seed(0)
    model, x = nn.Linear(3, 2), ember.randn(4, 3)
    cf = ember.compile(model, dynamic=False)
    _warm(cf, x)
    handle = nn.modules.module.register_module_forward_hook(lambda m, args, out: out + 1.0)
    try:
        _check(cf, model, x)
    finally:
        handle.remove()
    _check(cf, model, x)
    model._forward_hooks.update({-1: lambda m, args, out: out * 3.0})   # by hand
    _check(cf, model, x)


def test_plain_lists_modules_hold_are_compared_each_call():
    ember.manual_seed(0)
    model, x = Listed(), ember.randn(4, 3)
    cf = ember.compile(model, dynamic=False)
    _warm(cf, x)
    model.extra.append(nn.Tanh())                        # no __setattr__: the list's contents
    _check(cf, model, x)
    model.extra.append(nn.Dropout(0.5))
    model.extra[1].eval()
    _check(cf, model, x)
    model.extra[0] = nn.Sigmoid()                        # replaced in place
    _check(cf, model, x)


def test_a_table_set_by_hand_to_a_plain_dict_is_compared_each_call():
    ember.manual_seed(0)
    model, x = nn.Sequential(nn.Linear(3, 3), nn.ReLU()), ember.randn(4, 3)
    model._modules = dict(model._modules)                # not counted any more
    cf = ember.compile(model, dynamic=False)
    _warm(cf, x)
    model._modules["1"] = nn.Tanh()
    _check(cf, model, x)
    model._forward_hooks = collections.OrderedDict()
    _check(cf, model, x)
    model._forward_hooks[-1] = lambda m, args, out: out - 2.0
    _check(cf, model, x)


def test_the_fast_path_keeps_one_graph_in_a_training_loop():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
    x, y = ember.randn(8, 3), ember.randn(8, 1)

    @ember.compile
    def step():
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
    losses = [step().item() for _ in range(6)]
    assert counters["stats"]["unique_graphs"] == 1
    assert losses[-1] < losses[0]
    model.eval()                                         # counted: walked again, same graph's guards fail
    step()
    assert counters["stats"]["unique_graphs"] == 2


SCALE = 2.0
BRANCHES = []


def _helper(x):
    return x * SCALE


def _calls_helper(x):
    return BRANCHES[0](_helper(x))


def test_reads_of_globals_cells_and_listed_functions_are_redone_each_call():
    """What a function reads (its closure, its globals, those of the user functions it calls,
    the functions a small global list holds) is re-read each call; the same objects, the walk
    that found the modules stands: each rebinding below must be seen."""
    global SCALE, _helper
    BRANCHES[:] = [lambda x: x + 1.0]
    x = ember.randn(4, 3)
    layer = nn.Linear(3, 3)

    def fn(x):
        return layer(_calls_helper(x))
    cf = ember.compile(fn, dynamic=False)
    old_scale, old_helper = SCALE, _helper
    try:
        _warm(cf, x)
        SCALE = 3.0                                  # a global of a function two calls down
        _check(cf, fn, x)
        BRANCHES[0] = lambda x: x - 1.0              # a function in a global list
        _check(cf, fn, x)
        _helper = lambda x: x * -1.0                 # noqa: E731 (a global function rebound)
        _check(cf, fn, x)
        layer = nn.Linear(3, 3)                      # a closure cell rebound
        _check(cf, fn, x)
    finally:
        SCALE, _helper = old_scale, old_helper


def test_an_argument_object_passed_again_is_read_again():
    """The same argument objects as the last call reuse how the roots were sorted, never what
    they hold: a tensor or number rebound on the object, or a module swapped in a list argument."""
    class Config:
        pass
    ember.manual_seed(0)
    config, layers, x = Config(), [nn.Linear(3, 3)], ember.randn(4, 3)
    config.shift, config.scale = ember.ones(3), 2.0

    def fn(config, layers, x):
        return layers[0](x) * config.scale + config.shift
    cf = ember.compile(fn, dynamic=False)
    with ember.no_grad():
        for _ in range(3):
            cf(config, layers, x)
        for change in (lambda: setattr(config, "shift", ember.full((3,), -4.0)),
                       lambda: setattr(config, "scale", 0.5),
                       lambda: layers.__setitem__(0, nn.Linear(3, 3))):
            change()
            np.testing.assert_allclose(cf(config, layers, x).numpy(), fn(config, layers, x).numpy(),
                                       rtol=1e-6, atol=1e-6)


def test_copied_and_unpickled_modules_count_their_writes():
    """Pickles hold plain dicts for the tables (no ember class a weights-only load would
    refuse); a deep copy or an unpickled module counts its writes again."""
    ember.manual_seed(0)
    model, x = nn.Sequential(nn.Linear(3, 3), nn.ReLU()), ember.randn(4, 3)
    data = pickle.dumps(model)
    assert b"_Table" not in data and b"_Hooks" not in data
    for copy_ in (copy.deepcopy(model), pickle.loads(data)):
        cf = ember.compile(copy_, dynamic=False)
        _warm(cf, x)
        copy_._modules["1"] = nn.Tanh()
        _check(cf, copy_, x)


class Noting(nn.Module):
    """Writes attributes on every call that hold what they held: the batch size, a flag, the
    same object. None of it changes what the guards read."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.rows, self.fast, self.scale, self.note = 4, True, 2.0, object()

    def forward(self, x):
        self.rows, self.fast, self.note = x.shape[0], True, self.note
        return self.fc(x) * self.scale


def test_a_forward_rewriting_its_attributes_keeps_the_fast_path(monkeypatch):
    """Rewriting a plain attribute with what it holds (in a forward while it is recorded, or
    ``model.train()`` on a model in training) does not count as a module change (the modules
    are not walked again); every write the guards read is seen: a scalar the graph read, the
    training flag, a parameter, a submodule, a hook, a tensor attribute."""
    from ember.compiler import guards
    walks = collections.Counter()
    walk = guards.World._walk
    monkeypatch.setattr(guards.World, "_walk", lambda self: (walks.update(["walk"]), walk(self))[1])
    ember.manual_seed(0)
    model, x = Noting(), ember.randn(4, 3)
    cf = ember.compile(model, dynamic=False)
    _warm(cf, x)
    before = walks["walk"]
    _warm(cf, x)
    assert walks["walk"] == before and counters["stats"]["unique_graphs"] == 1
    model.rows = 4                                       # the same value again: not a change
    model.train()                                        # a loop's model.train() before each step
    _check(cf, model, x)
    assert walks["walk"] == before
    changes = [lambda: setattr(model, "scale", 3.0), lambda: setattr(model, "scale", 3),  # same value, int
               lambda: model.eval(), lambda: setattr(model.fc, "bias", nn.Parameter(ember.full((3,), 5.0))),
               lambda: setattr(model, "fc", nn.Sequential(nn.Linear(3, 3), nn.Tanh())),
               lambda: model.fc.register_forward_hook(lambda m, args, out: out - 1.0),
               lambda: setattr(model, "offset", ember.ones(3))]
    # a parameter replaced by one alike runs the graph on it (as torch's: ember.compiler.rebind);
    # a tensor attribute no code of the model names is no guard (torch 2.13: no recompile either)
    for graphs, change in zip((2, 3, 4, 4, 5, 6, 6), changes):
        change()
        _check(cf, model, x)
        assert counters["stats"]["unique_graphs"] == graphs, change
