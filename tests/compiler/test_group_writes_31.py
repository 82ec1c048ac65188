"""A group entry the compiled step overwrites, beside a float argument (compiler/group_replay.py,
read_floats.py, guards.read_groups): with a float argument traced, the group's floats are traced
as read paths too. One the call overwrote with a number was a use twice over (the update op's
plain number, the write's, equal to it; the write's float not counted replayed), so the group
was guarded by value (a graph per value of ``betas``, test_group_writes_28); and such a guard
was made from the group as the call left it, not as it began: a later call starting there
replayed a branch taken on the old value (a wrong loss)."""

import torch

import ember
from ember._dynamo.utils import counters


def _run(module, body, calls, compiled):
    """``body(module, opt, model, x, b)`` as a compiled (or eager) AdamW step over ``calls``
    ``(b, lr)``, the group's lr set to ``lr`` before each: (losses, final parameters, lrs after
    each call, graphs after each call)."""
    module.manual_seed(0)
    model = module.nn.Sequential(module.nn.Linear(3, 4), module.nn.Tanh(), module.nn.Linear(4, 1))
    opt = module.optim.AdamW(model.parameters(), lr=0.01)

    def step(x, b):
        return body(module, opt, model, x, b)

    if compiled:
        ember.compiler.reset()
        step = ember.compile(step)
    x, losses, lrs, counts = module.linspace(-1, 1, 15).reshape(5, 3), [], [], []
    for b, lr in calls:
        opt.param_groups[0]["lr"] = lr
        losses.append(float(step(x, b).detach()))
        lrs.append(opt.param_groups[0]["lr"])
        counts.append(counters["stats"]["unique_graphs"] if compiled else None)
    return losses, [v for p in model.parameters() for v in p.detach().flatten().tolist()], lrs, counts


def _train(module, opt, model, x):
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def _overwritten(module, opt, model, x, b):  # (weight_decay read as a path, the call writing 0.02 over 0.02)
    opt.param_groups[0]["weight_decay"] = 0.02
    return _train(module, opt, model, x) * b


def _compared_and_written(module, opt, model, x, b):  # (lr compared: the group guarded by value)
    g, scale = opt.param_groups[0], 1.0
    if g["lr"] > 0.004:
        g["lr"], scale = 0.0025, 2.0
    return _train(module, opt, model, x) * b * scale


def _check(body, calls):
    want = _run(torch, body, calls, False)
    got = _run(ember, body, calls, True)
    torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(got[1], want[1], rtol=1e-5, atol=1e-7)
    assert got[2] == want[2]
    return got[3]


def test_group_float_overwritten_with_an_equal_number_is_no_use():
    """ember: the first call eager (AdamW's state), then 2 graphs (the float argument a symbol
    after one recompile; was 4, the group guarded by value at each new lr). torch 2.13's
    CompileCounter: 8 frames over these calls (its step's frames, again at each new lr)."""
    calls = [(0.9, 0.01), (0.8, 0.01), (0.85, 0.01), (0.7, 0.02), (0.6, 0.03), (0.5, 0.02)]
    counts = _check(_overwritten, calls)
    assert 1 <= counts[-1] <= 2


def test_group_guarded_by_value_at_the_call_start():
    """The lr compared and written: the graph of the call starting at 0.005 (the branch taken,
    lr then 0.0025) guarded the group at 0.0025, so the next call starting at 0.0025 replayed
    it: a loss twice eager's. Now guarded at 0.005: torch's losses at every call."""
    calls = [(0.9, 0.01), (0.8, 0.005), (0.85, 0.005), (0.7, 0.0025), (0.9, 0.0025), (0.6, 0.005), (0.5, 0.0025)]
    counts = _check(_compared_and_written, calls)
    assert counts[-1] >= 1
