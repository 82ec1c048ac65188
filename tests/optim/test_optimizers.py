"""ember.optim optimizers against torch.optim: same parameters after every step, same state."""
import copy
import warnings

import numpy as np
import pytest

import ember
from ember import nn, optim
from torchcompare import assert_close, assert_same_error, to_torch

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]
STEPS = 20

GRID = {
    "SGD": [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, dampening=0.3),
            dict(lr=0.05, momentum=0.8, nesterov=True), dict(lr=0.1, weight_decay=0.2),
            dict(lr=0.1, momentum=0.5, weight_decay=0.1, nesterov=True, maximize=True)],
    "Adam": [dict(), dict(lr=0.05, amsgrad=True), dict(lr=0.02, weight_decay=0.3),
             dict(lr=0.01, betas=(0.3, 0.5), eps=1e-3), dict(lr=0.01, maximize=True),
             dict(lr=0.03, amsgrad=True, weight_decay=0.1, maximize=True),
             dict(lr=0.03, weight_decay=0.1, decoupled_weight_decay=True)],
    "AdamW": [dict(), dict(lr=0.05, weight_decay=0.5), dict(lr=0.05, amsgrad=True),
              dict(lr=0.01, betas=(0.5, 0.9), maximize=True)],
    "RMSprop": [dict(), dict(lr=0.01, centered=True), dict(lr=0.01, momentum=0.9),
                dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1), dict(lr=0.02, alpha=0.5),
                dict(lr=0.01, maximize=True, eps=1e-3)],
    "Adagrad": [dict(), dict(lr=0.1, lr_decay=0.05), dict(lr=0.1, initial_accumulator_value=0.5),
                dict(lr=0.1, weight_decay=0.2, eps=1e-3), dict(lr=0.1, maximize=True)],
    "Adadelta": [dict(), dict(lr=0.5, rho=0.5), dict(weight_decay=0.1, eps=1e-4), dict(maximize=True)],
}
CASES = [(name, kw) for name, kws in GRID.items() for kw in kws]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}" for name, kw in CASES]


def make_params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    ember_params = [ember.tensor(a, requires_grad=True) for a in arrays]
    torch_params = [torch.tensor(a, requires_grad=True) for a in arrays]
    return ember_params, torch_params


def grads_for_step(step, dtype):
    rng = np.random.default_rng(1000 + step)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def set_grads(ember_params, torch_params, step, dtype, skip=()):
    for i, (e, t, g) in enumerate(zip(ember_params, torch_params, grads_for_step(step, dtype))):
        e.grad = None if i in skip else ember.tensor(g)
        t.grad = None if i in skip else torch.tensor(g)


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_torch_every_step(name, kwargs, dtype):
    ember_params, torch_params = make_params(dtype)
    e_opt = getattr(optim, name)(ember_params, **kwargs)
    t_opt = getattr(torch.optim, name)(torch_params, **kwargs)
    rtol, atol = (1e-5, 1e-8) if dtype == np.float64 else (1e-5, 1e-6)
    for step in range(STEPS):
        # Parameter 1 gets no gradient on some steps: it must be skipped, as in torch.
        set_grads(ember_params, torch_params, step, dtype, skip=(1,) if step % 3 == 1 else ())
        e_opt.step()
        t_opt.step()
        for e, t in zip(ember_params, torch_params):
            assert_close(e, t, rtol=rtol, atol=atol)
    assert_state_matches(e_opt, t_opt, rtol, atol)


def assert_state_matches(e_opt, t_opt, rtol=1e-5, atol=1e-8):
    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    assert e_sd["param_groups"] == t_sd["param_groups"]
    assert list(e_sd["state"]) == list(t_sd["state"])
    for key, t_state in t_sd["state"].items():
        e_state = e_sd["state"][key]
        assert list(e_state) == list(t_state)
        for k, t_value in t_state.items():
            assert isinstance(e_state[k], ember.Tensor)
            assert_close(e_state[k], t_value, rtol=rtol, atol=atol)


def test_param_groups_with_own_options_and_autograd_gradients():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in [(4, 3), (3,), (2, 2)]]
    targets = [rng.standard_normal(a.shape) for a in arrays]
    e_params = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_params = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_opt = optim.Adam([{"params": e_params[:2], "lr": 0.1, "amsgrad": True}, {"params": e_params[2:]}],
                       lr=0.01, weight_decay=0.01)
    t_opt = torch.optim.Adam([{"params": t_params[:2], "lr": 0.1, "amsgrad": True}, {"params": t_params[2:]}],
                             lr=0.01, weight_decay=0.01)

    def loss_of(params, lib):
        total = 0
        for i, (p, target) in enumerate(zip(params, targets)):
            total = total + ((p - lib.tensor(target)) ** 2 * (i + 1)).sum()
        return total

    for _ in range(STEPS):
        e_opt.zero_grad()
        t_opt.zero_grad()
        e_loss = e_opt.step(lambda: _backward(loss_of(e_params, ember)))
        t_loss = t_opt.step(lambda: _backward(loss_of(t_params, torch)))
        assert e_loss.item() == pytest.approx(t_loss.item(), rel=1e-10)
        for e, t in zip(e_params, t_params):
            assert_close(e, t, rtol=1e-10, atol=1e-12)
    assert_state_matches(e_opt, t_opt)


def _backward(loss):
    loss.backward()
    return loss


def test_step_runs_closure_with_grad_enabled_and_returns_its_loss():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.5)

    def closure():
        assert ember.is_grad_enabled()
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with ember.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.0, 0.0])
    assert opt.step() is None


def test_step_bumps_version_so_saved_tensors_are_checked():
    for e, t in ((ember, optim), (torch, torch.optim)):
        p = e.tensor([1.0, 2.0], requires_grad=True)
        y = (p * p).sum()
        p.grad = e.ones(2)
        t.Adam([p]).step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


@pytest.mark.parametrize("name,kwargs", [CASES[i] for i in (2, 5, 7, 14, 17, 20, 23, 25)],
                         ids=[IDS[i] for i in (2, 5, 7, 14, 17, 20, 23, 25)])
def test_state_dict_round_trip_resumes_exactly(name, kwargs):
    cls = getattr(optim, name)
    straight, _ = make_params(np.float64)
    first, torch_params = make_params(np.float64)
    straight_opt, first_opt = cls(straight, **kwargs), cls(first, **kwargs)
    torch_opt = getattr(torch.optim, name)(torch_params, **kwargs)
    for step in range(5):
        for params in (straight, first):
            set_grads(params, torch_params, step, np.float64)
        straight_opt.step()
        first_opt.step()
        torch_opt.step()
    saved = copy.deepcopy(first_opt.state_dict())
    assert_same_layout(saved, torch_opt.state_dict())

    resumed = [ember.tensor(p.detach().numpy().copy(), requires_grad=True) for p in first]
    resumed_opt = cls(resumed, **{**kwargs, "lr": 123.0})  # the loaded groups must override this
    resumed_opt.load_state_dict(saved)
    assert resumed_opt.param_groups[0]["lr"] == straight_opt.param_groups[0]["lr"]
    assert resumed_opt.param_groups[0]["params"][0] is resumed[0]
    for step in range(5, 10):
        set_grads(straight, torch_params, step, np.float64)
        set_grads(resumed, torch_params, step, np.float64)
        straight_opt.step()
        resumed_opt.step()
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def assert_same_layout(e_sd, t_sd):
    assert list(e_sd) == list(t_sd) == ["state", "param_groups"]
    assert [list(g) for g in e_sd["param_groups"]] == [list(g) for g in t_sd["param_groups"]]
    assert [g["params"] for g in e_sd["param_groups"]] == [g["params"] for g in t_sd["param_groups"]]
    assert {k: list(v) for k, v in e_sd["state"].items()} == {k: list(v) for k, v in t_sd["state"].items()}
    for k, t_state in t_sd["state"].items():
        if "step" in t_state:
            assert e_sd["state"][k]["step"].ndim == 0
            assert str(e_sd["state"][k]["step"].dtype).split(".")[-1] == str(t_state["step"].dtype).split(".")[-1]


def test_ember_state_dict_continues_in_torch():
    e_params, t_params = make_params(np.float64)
    e_opt = optim.RMSprop(e_params, lr=0.01, momentum=0.9, centered=True)
    for step in range(5):
        set_grads(e_params, t_params, step, np.float64)
        e_opt.step()
    sd = e_opt.state_dict()
    t_sd = {"state": {k: {n: to_torch(v) for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}
    t_params = [to_torch(p, requires_grad=True) for p in e_params]
    t_opt = torch.optim.RMSprop(t_params)
    t_opt.load_state_dict(t_sd)
    for step in range(5, 10):
        set_grads(e_params, t_params, step, np.float64)
        e_opt.step()
        t_opt.step()
    for e, t in zip(e_params, t_params):
        assert_close(e, t, rtol=1e-10, atol=1e-12)


def test_load_state_dict_casts_state_to_param_dtype_but_not_step():
    p64 = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    opt = optim.Adam([p64])
    p64.grad = ember.ones(2, dtype=ember.float64)
    opt.step()
    p32 = ember.tensor([1.0, 2.0], requires_grad=True)
    opt32 = optim.Adam([p32])
    opt32.load_state_dict(opt.state_dict())
    state = opt32.state[p32]
    assert state["exp_avg"].dtype is ember.float32
    assert state["step"].dtype is ember.float32 and state["step"].item() == 1.0


def test_load_state_dict_errors_match_torch():
    def build(lib, opt_lib, groups):
        params = [lib.zeros(2, requires_grad=True) for _ in range(3)]
        return opt_lib.SGD([{"params": params[i:j]} for i, j in groups], lr=0.1)

    for groups, other in (([(0, 3)], [(0, 1), (1, 3)]), ([(0, 1), (1, 3)], [(0, 2), (2, 3)])):
        assert_same_error(lambda: build(ember, optim, groups).load_state_dict(build(ember, optim, other).state_dict()),
                          lambda: build(torch, torch.optim, groups).load_state_dict(
                              build(torch, torch.optim, other).state_dict()))


def test_zero_grad():
    for lib, opt_lib in ((ember, optim), (torch, torch.optim)):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        opt = opt_lib.SGD([a, b])
        a.grad, b.grad = lib.full((2,), 3.0), None
        opt.zero_grad(set_to_none=False)
        assert a.grad.tolist() == [0.0, 0.0] and not a.grad.requires_grad and b.grad is None
        opt.zero_grad()
        assert a.grad is None


def test_state_is_keyed_by_parameter_and_skips_params_without_grad():
    a, b = ember.ones(2, requires_grad=True), ember.ones(3, requires_grad=True)
    opt = optim.Adam([a, b])
    a.grad = ember.ones(2)
    opt.step()
    assert set(opt.state) == {a} and b not in opt.state
    assert b.tolist() == [1.0, 1.0, 1.0]
    assert optim.SGD([a], lr=0.1).state_dict()["state"] == {}
    sgd = optim.SGD([a], lr=0.1)
    sgd.step()
    assert sgd.state_dict()["state"] == {}  # momentum 0 keeps no state, as in torch


def test_adagrad_creates_state_eagerly_like_torch():
    e_params, t_params = make_params(np.float64)
    assert_state_matches(optim.Adagrad(e_params, initial_accumulator_value=0.3),
                         torch.optim.Adagrad(t_params, initial_accumulator_value=0.3))


def test_named_parameters_and_add_param_group():
    a, b = ember.ones(2, requires_grad=True), ember.ones(3, requires_grad=True)
    opt = optim.SGD([("a", a)], lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["param_names"] == ["a"]
    opt.add_param_group({"params": [("b", b)], "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    assert opt.state_dict()["param_groups"][1]["params"] == [1]


def test_repr_matches_torch():
    e_params, t_params = make_params(np.float64)
    assert repr(optim.AdamW(e_params, lr=0.1)) == repr(torch.optim.AdamW(t_params, lr=0.1))


def _both(fn):
    """Runs ``fn(lib, optim_lib)`` for ember and torch; they must raise the same error (ember
    names its legacy tensor types "ember.FloatTensor" where torch says "torch.FloatTensor")."""
    assert_same_error(lambda: fn(ember, optim), lambda: fn(torch, torch.optim),
                      lambda message: message.replace("ember.", "torch."))


@pytest.mark.parametrize("build", [
    lambda lib, o: o.SGD([], lr=0.1),
    lambda lib, o: o.SGD([lib.ones(2, requires_grad=True)], lr=-1),
    lambda lib, o: o.SGD([lib.ones(2, requires_grad=True)], momentum=-0.5),
    lambda lib, o: o.SGD([lib.ones(2, requires_grad=True)], weight_decay=-0.5),
    lambda lib, o: o.SGD([lib.ones(2, requires_grad=True)], nesterov=True),
    lambda lib, o: o.SGD([lib.ones(2, requires_grad=True)], momentum=0.9, dampening=0.1, nesterov=True),
    lambda lib, o: o.Adam([lib.ones(2, requires_grad=True)], lr=-1),
    lambda lib, o: o.Adam([lib.ones(2, requires_grad=True)], eps=-1.0),
    lambda lib, o: o.Adam([lib.ones(2, requires_grad=True)], betas=(1.0, 0.9)),
    lambda lib, o: o.AdamW([lib.ones(2, requires_grad=True)], betas=(0.9, -0.1)),
    lambda lib, o: o.Adam([lib.ones(2, requires_grad=True)], weight_decay=-1.0),
    lambda lib, o: o.RMSprop([lib.ones(2, requires_grad=True)], alpha=-1.0),
    lambda lib, o: o.RMSprop([lib.ones(2, requires_grad=True)], momentum=-1.0),
    lambda lib, o: o.Adagrad([lib.ones(2, requires_grad=True)], lr_decay=-1.0),
    lambda lib, o: o.Adagrad([lib.ones(2, requires_grad=True)], initial_accumulator_value=-1.0),
    lambda lib, o: o.Adadelta([lib.ones(2, requires_grad=True)], rho=1.5),
    lambda lib, o: o.Adadelta([lib.ones(2, requires_grad=True)], eps=-1.0),
    lambda lib, o: o.SGD(lib.ones(2, requires_grad=True), lr=0.1),
    lambda lib, o: o.SGD([lib.ones(2, requires_grad=True), 3], lr=0.1),
    lambda lib, o: o.SGD([{"params": {lib.ones(2, requires_grad=True)}}], lr=0.1),
    lambda lib, o: o.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1),
    lambda lib, o: o.SGD([("a", lib.ones(2, requires_grad=True)), lib.ones(2, requires_grad=True)], lr=0.1),
    lambda lib, o: o.Optimizer([lib.ones(2, requires_grad=True)], {}).step(),
    lambda lib, o: o.Optimizer([lib.ones(2, requires_grad=True)], {}).add_param_group([]),
])
def test_errors_match_torch(build):
    _both(build)


def test_parameter_in_two_groups_and_required_option():
    def two_groups(lib, o):
        p = lib.ones(2, requires_grad=True)
        o.SGD([{"params": [p]}, {"params": [p], "lr": 0.5}], lr=0.1)

    def missing_required(lib, o):
        from importlib import import_module
        required = import_module(o.__name__ + ".optimizer").required
        o.Optimizer([lib.ones(2, requires_grad=True)], {"lr": required})

    _both(two_groups)
    _both(missing_required)


def test_duplicate_parameter_in_a_group_warns():
    p = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([p, p], lr=0.1)


def test_custom_optimizer_written_the_pytorch_way():
    class PlainSGD(optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, dict(lr=lr))

        @ember.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.sub_(group["lr"] * p.grad)
                        self.state[p]["count"] = self.state[p].get("count", 0) + 1

    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = PlainSGD([p], lr=0.5)
    p.grad = ember.tensor([2.0, 2.0])
    opt.step()
    assert p.tolist() == [0.0, 1.0]
    assert opt.state_dict()["state"] == {0: {"count": 1}}


def test_differentiable_is_not_supported():
    with pytest.raises(NotImplementedError):
        optim.SGD([ember.ones(2, requires_grad=True)], differentiable=True)


def test_trains_nn_linear_like_torch():
    torch.manual_seed(0)
    t_model = torch.nn.Linear(4, 3).double()
    e_model = nn.Linear(4, 3).double()
    with ember.no_grad():
        e_model.weight.copy_(ember.tensor(t_model.weight.detach().numpy()))
        e_model.bias.copy_(ember.tensor(t_model.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((8, 4))
    e_opt = optim.AdamW(e_model.parameters(), lr=0.05)
    t_opt = torch.optim.AdamW(t_model.parameters(), lr=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(10):
            for model, opt, lib in ((e_model, e_opt, ember), (t_model, t_opt, torch)):
                opt.zero_grad()
                (model(lib.tensor(x)) ** 2).mean().backward()
                opt.step()
    assert_close(e_model.weight, t_model.weight, rtol=1e-10, atol=1e-12)
    assert_close(e_model.bias, t_model.bias, rtol=1e-10, atol=1e-12)


def test_docstring_examples_run():
    import doctest
    from ember.optim import optimizer, lr_scheduler
    for module in (optimizer, lr_scheduler):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0


def test_step_counter_follows_the_default_dtype_like_torch():
    dtypes = []
    for lib, opt_lib in ((ember, optim), (torch, torch.optim)):
        previous = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            p = lib.ones(2, requires_grad=True)
            opt = opt_lib.RMSprop([p])
            p.grad = lib.ones(2)
            opt.step()
            dtypes.append(str(opt.state[p]["step"].dtype).split(".")[-1])
        finally:
            lib.set_default_dtype(previous)
    assert dtypes == ["float64", "float64"]
