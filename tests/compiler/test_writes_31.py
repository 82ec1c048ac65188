"""Floats the compiled call writes where it reads them (``cfg["lr"] = cfg["lr"] * 0.5`` into a
global dict, an object's, a closure's dict, a module's ``self.decay``), the user changing them
between calls too: torch 2.13 replays the write after its graph (2 graphs: the first specialised,
then the float a symbol). ember ran every such call eagerly (a side effect; 0 graphs); now the
write is replayed (compiler/path_writes.py): 1 graph, its first call eager. Values (results and
the written floats, by repr: -0.0 told from 0.0) are torch's call by call."""
import itertools
import types

import pytest
import torch

from graph_counts import compiled_afresh, run
from torch._dynamo.testing import CompileCounter as TorchCounter

import ember
from ember._dynamo.testing import CompileCounter
from ember._dynamo.utils import counters

CFG = {"lr": 0.5}
NS = types.SimpleNamespace(lr=0.5)
# None: the call's own write only; else the user's value before that call
VALUES = (None, None, None, 3.0, None, None, -0.0, None, 1e-3, 1e300, None, float("nan"), None)


def _global_dict(x):
    CFG["lr"] = CFG["lr"] * 0.5
    return x * CFG["lr"]


def _object_read_first(x):
    y = x * NS.lr
    NS.lr = NS.lr * 0.5 - 1.0
    return y


def _closure():
    box = {"lr": 0.5}

    def fn(x):
        box["lr"] = box["lr"] * 0.5 + 0.125
        return x * box["lr"]
    return fn, box


def _modules():
    return {module: type("Ema", (module.nn.Module,), {"__init__": _ema_init, "forward": _ema_forward})
            for module in (torch, ember)}


def _ema_init(self):
    super(type(self), self).__init__()
    self.decay = 0.5


def _ema_forward(self, x):
    self.decay = self.decay * 0.9 + 0.1
    return x * (1 - self.decay)


def _case(name, module):
    """``(function, holder, key)``: the function and where it keeps its float."""
    if name == "global dict":
        return _global_dict, CFG, "lr"
    if name == "object":
        return _object_read_first, NS, "lr"
    if name == "closure dict":
        fn, box = _closure()
        return fn, box, "lr"
    ema = _MODULES[module]()
    return ema, ema, "decay"


_MODULES = _modules()


def _sweep(name, module):
    fn, holder, key = _case(name, module)
    put = holder.__setitem__ if type(holder) is dict else lambda k, v: setattr(holder, k, v)
    get = holder.__getitem__ if type(holder) is dict else lambda k: getattr(holder, k)
    put(key, 0.5)
    compiled, count = compiled_afresh(fn, module)
    seen, counts = [], []
    for v in VALUES:
        if v is not None:
            put(key, v)
        seen.append((run(compiled, module, ()), repr(get(key))))
        counts.append(count())
    if module is ember:  # (a recording each call, eager, counts no graph: the recompiles tell)
        counts.append(sum(counters["recompiles"].values()))
    return counts, seen


@pytest.mark.parametrize("name", ["global dict", "object", "closure dict", "module attribute"])
def test_a_float_the_call_writes_where_it_reads_it_is_replayed(name):
    """Results and the floats after each call as torch's; graphs over the finite values within
    float32's range, call by call: torch's 1, then 2 (nan: a third); ember's 0 (its first call
    eager, recorded), then 1, and 1 over all 13 calls (1e300 shares the graph since CLOSURE31;
    each call was eager before)."""
    torch_counts, want = _sweep(name, torch)
    ember_counts, got = _sweep(name, ember)
    assert repr(got) == repr(want)
    assert torch_counts[:9] == [1] + [2] * 8 and ember_counts[:9] == [0] + [1] * 8 and ember_counts[-1] == 1


TICKS = itertools.count()


def _stamped(x):
    CFG["tick"] = float(next(TICKS))  # (a float Python made of no float it read: no replay can compute it)
    return x * 2


def test_a_float_written_that_no_replay_can_compute_stays_eager():
    compiled, count = compiled_afresh(_stamped, ember)
    ticks = []
    for _ in range(4):
        compiled(ember.ones(2))
        ticks.append(CFG["tick"])
    assert ticks == [ticks[0] + k for k in range(4)] and count() == 0


def _halving_steps(module, compiled=True, steps=9):
    """``(loss, lr, graphs)`` after each SGD step (compiled, or eager) halving its group's lr first
    (``g["lr"] = g["lr"] * 0.5``), the user setting the lr to 0.3 before the seventh."""
    module.manual_seed(0)
    model = module.nn.Linear(3, 1)
    opt = module.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x):
        for g in opt.param_groups:
            g["lr"] = g["lr"] * 0.5
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    run, count = compiled_afresh(step, module) if compiled else (step, lambda: None)
    x, out = module.linspace(-1, 1, 6).reshape(2, 3), []
    for i in range(steps):
        if i == 6:
            opt.param_groups[0]["lr"] = 0.3
        out.append((float(run(x).detach()), opt.param_groups[0]["lr"], count()))
    return out


def test_a_group_write_of_the_groups_value_is_a_symbol_after_one_recompile():
    """torch.compile: 2 graphs of the step (its CompileCounter 2, then 4 frames: its optimizer step
    breaks; 5 s to compile, so eager torch is the oracle here); ember: its first call eager (the
    optimizer's state made), then the lr specialised, then a graph input: 2 graphs (was a graph
    per value, 8, then eager). Losses (rel 1e-5) and the group's lr after each step are torch's."""
    want, got = _halving_steps(torch, compiled=False), _halving_steps(ember)
    assert [lr for _, lr, _ in got] == [lr for _, lr, _ in want]
    assert [loss for loss, _, _ in got] == pytest.approx([loss for loss, _, _ in want], rel=1e-5)
    assert [n for *_, n in got] == [0, 1] + [2] * 7


def _tolist_then_scale(x, t):
    vals = t.tolist()  # (a graph break: the list is an argument of the next piece)
    y = x * 2
    return y * vals[0] + vals[1]


def test_a_tolist_list_passed_to_the_next_piece_is_read_as_floats():
    """torch 2.13: 2 graphs over 8 values (the list's floats symbols after one recompile); ember's
    next piece guarded the list's values (a graph per value, 8); now its floats are read paths of
    the piece's argument (``("arg", k), ("item", i)``): 2, torch's call by call, torch's values."""
    seen = []
    for module, counter in ((torch, TorchCounter()), (ember, CompileCounter())):
        (torch._dynamo.reset if module is torch else ember.compiler.reset)()
        compiled, out = module.compile(_tolist_then_scale, backend=counter), []
        for v in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -0.0, 1e10):
            out.append((run(compiled, module, (module.tensor([v, v + 1]),)), counter.frame_count))
        seen.append(out)
    assert seen[1] == seen[0] and [n for _, n in seen[0]] == [1] + [2] * 7


class _Averaged:
    """An EMA object (no module) recording the decay it was given on itself."""

    def __init__(self, module):
        self.last, self.w = 0.0, module.ones(3)

    def update(self, x, d):
        self.last = d
        self.w.mul_(d).add_(x * (1 - d))
        return self.w


def test_an_object_storing_its_float_argument_replays_the_store():
    """``self.last = d`` on a plain object (a bound method compiled): torch 2 graphs over 8 decays;
    ember ran it eagerly (0 graphs: the object's attributes a side effect), now 1 (the first call
    eager), the object's ``last`` and weights torch's after each call."""
    seen = []
    for module, counter in ((torch, TorchCounter()), (ember, CompileCounter())):
        (torch._dynamo.reset if module is torch else ember.compiler.reset)()
        averaged = _Averaged(module)
        update, out = module.compile(averaged.update, backend=counter), []
        for i in range(8):
            update(module.ones(3) * i, min(0.999, (1 + i) / (10 + i)))
            out.append((repr(averaged.last), averaged.w.tolist(), counter.frame_count))
        seen.append(out)
    assert [o[:2] for o in seen[1]] == [o[:2] for o in seen[0]]
    assert [o[2] for o in seen[0]] == [1] + [2] * 7 and [o[2] for o in seen[1]] == [0] + [1] * 7


MIXED = {"lr": 0.5, "scale": 2.0}


def _written_and_printed(x):
    MIXED["lr"] = MIXED["lr"] * 0.5
    shown = f"{MIXED['lr']}"  # (a use: the written float's value steers the result)
    return x * MIXED["scale"] + len(shown)


def test_a_written_float_used_keeps_its_value_at_the_calls_start_guarded():
    """``scale`` a graph input (changed before each call), ``lr`` written and used (its text's
    length): the graph's guard is ``lr``'s value at the call's start, not the one the call left
    (that replayed the recorded length at the third call: 9.0 for eager's 10.0)."""
    seen = []
    for module in (torch, ember):
        MIXED.update(lr=0.5, scale=2.0)
        compiled, out = compiled_afresh(_written_and_printed, module)[0] if module is ember else _written_and_printed, []
        for i in range(6):
            MIXED["scale"] = 2.0 + i
            out.append((compiled(module.ones(1)).tolist(), repr(MIXED["lr"])))
        seen.append(out)
    assert seen[1] == seen[0]
