"""ember.optim.lr_scheduler against torch.optim.lr_scheduler: the same rates, step for step.

Rates are plain Python floats computed by the same recursive formulas, so they are compared
for exact equality: a closed form in place of a recursive one shows up in the last bits."""
import copy
import warnings

import pytest

import ember
from ember import optim
from ember.optim import lr_scheduler
from torchcompare import assert_same_error

torch = pytest.importorskip("torch")

STEPS = 60
LRS = (0.1, 0.02)


class Scale:
    """A callable object: its attributes are saved in a LambdaLR state_dict, unlike a lambda."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base ** epoch


def make_optimizer(lib, optim_lib, name="SGD", **kwargs):
    groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": lr} for lr in LRS]
    return getattr(optim_lib, name)(groups, **kwargs)


# name, scheduler kwargs, optimizer name and kwargs
CASES = [
    ("StepLR", dict(step_size=7), {}),
    ("StepLR", dict(step_size=3, gamma=0.5), {}),
    ("MultiStepLR", dict(milestones=[5, 12, 12, 30]), {}),
    ("ExponentialLR", dict(gamma=0.93), {}),
    ("CosineAnnealingLR", dict(T_max=10), {}),
    ("CosineAnnealingLR", dict(T_max=17, eta_min=0.001), {}),
    ("LambdaLR", dict(lr_lambda=lambda e: 1 / (e + 1)), {}),
    ("LambdaLR", dict(lr_lambda=[lambda e: 0.9 ** e, lambda e: 1 + e % 4]), {}),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.97), {}),
    ("LinearLR", dict(), {}),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.7, total_iters=25), {}),
    ("ConstantLR", dict(factor=0.4, total_iters=9), {}),
    ("PolynomialLR", dict(total_iters=40, power=2.0), {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=7), {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.005), {}),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=STEPS), dict(momentum=0.9)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.1], epochs=6, steps_per_epoch=10, anneal_strategy="linear"),
     dict(momentum=0.9)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=STEPS, three_phase=True, pct_start=0.25), dict(momentum=0.9)),
    ("OneCycleLR", dict(max_lr=0.01, total_steps=STEPS, base_momentum=0.8, max_momentum=0.9), ("Adam", {})),
    ("OneCycleLR", dict(max_lr=0.3, total_steps=STEPS, cycle_momentum=False), {}),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=7), dict(momentum=0.9)),
    ("CyclicLR", dict(base_lr=[0.01, 0.001], max_lr=0.1, step_size_up=4, step_size_down=9, mode="triangular2"),
     dict(momentum=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.97), ("Adam", {})),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=5, scale_fn=lambda x: 0.5 ** x,
                      scale_mode="iterations", cycle_momentum=False), {}),
]
IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(CASES)]


def build(lib, optim_lib, sched_lib, name, kwargs, opt_spec):
    opt_name, opt_kwargs = opt_spec if isinstance(opt_spec, tuple) else ("SGD", opt_spec)
    opt = make_optimizer(lib, optim_lib, opt_name, **opt_kwargs)
    return opt, getattr(sched_lib, name)(opt, **kwargs)


def momenta(opt):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


@pytest.mark.parametrize("name,kwargs,opt_spec", CASES, ids=IDS)
def test_rates_match_torch_step_for_step(name, kwargs, opt_spec):
    e_opt, e_sched = build(ember, optim, lr_scheduler, name, kwargs, opt_spec)
    t_opt, t_sched = build(torch, torch.optim, torch.optim.lr_scheduler, name, kwargs, opt_spec)
    seen = set()
    for _ in range(STEPS):
        assert e_sched.get_last_lr() == t_sched.get_last_lr()
        assert [g["lr"] for g in e_opt.param_groups] == [g["lr"] for g in t_opt.param_groups]
        assert momenta(e_opt) == momenta(t_opt)
        seen.add(round(e_sched.get_last_lr()[0], 12))
        e_opt.step()
        t_opt.step()
        if name == "OneCycleLR" and e_sched.last_epoch + 1 > e_sched.total_steps:
            break
        e_sched.step()
        t_sched.step()
    assert len(seen) > 1  # the schedule moved
    assert sorted(e_opt.param_groups[0]) == sorted(t_opt.param_groups[0])
    assert e_sched.last_epoch == t_sched.last_epoch


def test_recursive_cosine_matches_torch_over_many_cycles():
    e_opt, t_opt = make_optimizer(ember, optim), make_optimizer(torch, torch.optim)
    e_sched = lr_scheduler.CosineAnnealingLR(e_opt, T_max=13, eta_min=1e-3)
    t_sched = torch.optim.lr_scheduler.CosineAnnealingLR(t_opt, T_max=13, eta_min=1e-3)
    for _ in range(500):
        e_opt.step()
        t_opt.step()
        e_sched.step()
        t_sched.step()
        assert e_sched.get_last_lr() == t_sched.get_last_lr()


def run_pair(e, t, steps):
    (e_opt, e_sched), (t_opt, t_sched) = e, t
    for _ in range(steps):
        e_opt.step()
        t_opt.step()
        e_sched.step()
        t_sched.step()
        assert e_sched.get_last_lr() == t_sched.get_last_lr()


def test_schedulers_chained_on_one_optimizer():
    def make(lib, optim_lib, sched):
        opt = make_optimizer(lib, optim_lib)
        return opt, [sched.StepLR(opt, 4, gamma=0.5), sched.ExponentialLR(opt, gamma=0.95),
                     sched.CosineAnnealingLR(opt, T_max=11)]

    e_opt, e_scheds = make(ember, optim, lr_scheduler)
    t_opt, t_scheds = make(torch, torch.optim, torch.optim.lr_scheduler)
    e_chain, t_chain = lr_scheduler.ChainedScheduler(e_scheds), torch.optim.lr_scheduler.ChainedScheduler(t_scheds)
    run_pair((e_opt, e_chain), (t_opt, t_chain), STEPS)


def test_sequential_lr():
    def make(lib, optim_lib, sched):
        opt = make_optimizer(lib, optim_lib)
        warmup = sched.LinearLR(opt, start_factor=0.1, total_iters=5)
        decay = sched.StepLR(opt, step_size=6, gamma=0.5)
        cosine = sched.CosineAnnealingLR(opt, T_max=9)
        return opt, sched.SequentialLR(opt, [warmup, decay, cosine], milestones=[5, 20])

    e, t = make(ember, optim, lr_scheduler), make(torch, torch.optim, torch.optim.lr_scheduler)
    assert e[1].get_last_lr() == t[1].get_last_lr()
    run_pair(e, t, STEPS)


@pytest.mark.parametrize("name,kwargs", [
    ("StepLR", dict(step_size=3)), ("MultiStepLR", dict(milestones=[2, 5, 5])), ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=6)), ("LinearLR", dict(total_iters=4)), ("ConstantLR", dict(total_iters=4)),
    ("PolynomialLR", dict(total_iters=8)), ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2)),
])
def test_step_with_epoch_uses_closed_form(name, kwargs):
    e_opt, e_sched = build(ember, optim, lr_scheduler, name, kwargs, {})
    t_opt, t_sched = build(torch, torch.optim, torch.optim.lr_scheduler, name, kwargs, {})
    epochs = [0.5, 3, 7.25, 2, 11] if name == "CosineAnnealingWarmRestarts" else [3, 7, 2, 11, 5]
    for epoch in epochs:
        e_opt.step()
        t_opt.step()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            e_sched.step(epoch)
        # CosineAnnealingWarmRestarts takes a (fractional) epoch by design, without the warning.
        assert any("epoch parameter" in str(w.message) for w in caught) == (name != "CosineAnnealingWarmRestarts")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_sched.step(epoch)
        assert e_sched.get_last_lr() == t_sched.get_last_lr()
        assert e_sched.last_epoch == t_sched.last_epoch


METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.89, 0.8899, 0.8899, 0.9, 0.91, 0.92, 0.5, 0.6, 0.6, 0.6,
           0.6, 0.7, 0.8, 0.2, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3] * 2


@pytest.mark.parametrize("kwargs", [
    dict(), dict(patience=2), dict(patience=1, factor=0.5, cooldown=2),
    dict(mode="max", patience=1, threshold=0.01), dict(threshold_mode="abs", threshold=0.05, patience=0),
    dict(mode="max", threshold_mode="abs", threshold=0.02, patience=2, factor=0.3),
    dict(patience=0, min_lr=[0.05, 0.001], factor=0.5), dict(patience=0, min_lr=0.0199, eps=1e-3),
])
def test_reduce_lr_on_plateau(kwargs):
    e_opt, t_opt = make_optimizer(ember, optim), make_optimizer(torch, torch.optim)
    e_sched = lr_scheduler.ReduceLROnPlateau(e_opt, **kwargs)
    t_sched = torch.optim.lr_scheduler.ReduceLROnPlateau(t_opt, **kwargs)
    reductions = 0
    for metric in METRICS:
        before = e_sched.get_last_lr()
        e_sched.step(ember.tensor(metric))
        t_sched.step(torch.tensor(metric))
        reductions += e_sched.get_last_lr() != before
        assert e_sched.get_last_lr() == t_sched.get_last_lr()
        assert (e_sched.best, e_sched.num_bad_epochs, e_sched.cooldown_counter) == \
            (t_sched.best, t_sched.num_bad_epochs, t_sched.cooldown_counter)
    assert reductions > 0
    assert e_sched.state_dict().keys() == t_sched.state_dict().keys()


@pytest.mark.parametrize("name,kwargs,opt_spec", [CASES[i] for i in (0, 4, 7, 13, 14, 15, 18, 21)],
                         ids=[IDS[i] for i in (0, 4, 7, 13, 14, 15, 18, 21)])
def test_state_dict_round_trip_resumes_exactly(name, kwargs, opt_spec):
    opt, sched = build(ember, optim, lr_scheduler, name, kwargs, opt_spec)
    straight_opt, straight = build(ember, optim, lr_scheduler, name, kwargs, opt_spec)
    for _ in range(20):
        for o, s in ((opt, sched), (straight_opt, straight)):
            o.step()
            s.step()
    saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())

    t_opt, t_sched = build(torch, torch.optim, torch.optim.lr_scheduler, name, kwargs, opt_spec)
    assert sorted(saved) == sorted(t_sched.state_dict())

    new_opt, new_sched = build(ember, optim, lr_scheduler, name, kwargs, opt_spec)
    new_sched.load_state_dict(saved)
    new_opt.load_state_dict(saved_opt)
    for _ in range(30):
        for o, s in ((new_opt, new_sched), (straight_opt, straight)):
            o.step()
            if name != "OneCycleLR" or s.last_epoch < s.total_steps:
                s.step()
        assert new_sched.get_last_lr() == straight.get_last_lr()
        assert momenta(new_opt) == momenta(straight_opt)


def test_lambda_state_dict_keeps_callable_objects_only():
    opt = make_optimizer(ember, optim)
    sched = lr_scheduler.LambdaLR(opt, [Scale(0.9), lambda e: 1.0])
    t_opt = make_optimizer(torch, torch.optim)
    t_sched = torch.optim.lr_scheduler.LambdaLR(t_opt, [Scale(0.9), lambda e: 1.0])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"base": 0.9}, None] == t_sched.state_dict()["lr_lambdas"]
    assert sorted(sd) == sorted(t_sched.state_dict())
    other = lr_scheduler.LambdaLR(make_optimizer(ember, optim), [Scale(0.5), lambda e: 1.0])
    other.load_state_dict(sd)
    assert other.lr_lambdas[0].base == 0.9


def test_initial_lr_and_base_lrs_and_resume_requirement():
    opt = make_optimizer(ember, optim)
    sched = lr_scheduler.StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == list(LRS) == sched.base_lrs
    assert sched.last_epoch == 0
    fresh = make_optimizer(ember, optim)
    t_fresh = make_optimizer(torch, torch.optim)
    with pytest.raises(KeyError) as expected:
        torch.optim.lr_scheduler.StepLR(t_fresh, step_size=2, last_epoch=3)
    with pytest.raises(KeyError) as got:
        lr_scheduler.StepLR(fresh, step_size=2, last_epoch=3)
    assert str(got.value) == str(expected.value)


def test_warns_when_scheduler_steps_before_optimizer():
    for opt_lib, sched_lib in ((optim, lr_scheduler), (torch.optim, torch.optim.lr_scheduler)):
        lib = ember if opt_lib is optim else torch
        opt = make_optimizer(lib, opt_lib)
        sched = sched_lib.StepLR(opt, step_size=2)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            sched.step()
        opt = make_optimizer(lib, opt_lib)
        sched = sched_lib.StepLR(opt, step_size=2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt.step()
            sched.step()


def test_get_lr_outside_step_warns():
    opt = make_optimizer(ember, optim)
    sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def step_n_times(scheduler, n):
    for _ in range(n):
        scheduler.step()


@pytest.mark.parametrize("make", [
    lambda s, o: s.StepLR(object(), 3),
    lambda s, o: s.ConstantLR(o, factor=1.5),
    lambda s, o: s.LinearLR(o, start_factor=0),
    lambda s, o: s.LinearLR(o, end_factor=2),
    lambda s, o: s.LambdaLR(o, [lambda e: 1.0]),
    lambda s, o: s.MultiplicativeLR(o, 0.5),
    lambda s, o: s.ReduceLROnPlateau(o, factor=1.0),
    lambda s, o: s.ReduceLROnPlateau(o, mode="middle"),
    lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="pct"),
    lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=0),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=2.0),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="exp"),
    lambda s, o: s.OneCycleLR(o, max_lr=[1.0], total_steps=10),
    lambda s, o: step_n_times(s.OneCycleLR(o, max_lr=1.0, total_steps=2), 3),
    lambda s, o: s.CyclicLR(o, 0.1, 1.0, mode="sawtooth"),
    lambda s, o: s.SequentialLR(o, [], milestones=[]),
    lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(o, 3)], milestones=[]),
    lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.ReduceLROnPlateau(o)], milestones=[3]),
    lambda s, o: s.ChainedScheduler([]),
])
def test_errors_match_torch(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(lambda: make(lr_scheduler, make_optimizer(ember, optim)),
                          lambda: make(torch.optim.lr_scheduler, make_optimizer(torch, torch.optim)))


def test_cycle_momentum_needs_momentum():
    e_opt = optim.Adagrad([ember.zeros(2, requires_grad=True)])
    t_opt = torch.optim.Adagrad([torch.zeros(2, requires_grad=True)])
    assert_same_error(lambda: lr_scheduler.OneCycleLR(e_opt, max_lr=1.0, total_steps=10),
                      lambda: torch.optim.lr_scheduler.OneCycleLR(t_opt, max_lr=1.0, total_steps=10))
