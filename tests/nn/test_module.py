"""nn.Module compared with torch: registration, naming, state_dict, repr, modes, hooks, errors."""
import copy
import pickle
import re

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close


def same_text(e_text, t_text):
    """Printed forms agree once the library names are aligned."""
    return e_text.replace("ember.", "torch.") == t_text


def build(lib):
    """One architecture with parameters, persistent and non-persistent buffers, a None
    parameter, a None child, a shared submodule and nested containers."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.register_buffer("running", lib.zeros(4))
            self.register_buffer("scratch", lib.ones(2), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.fc(x) + self.running

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(1))
            self.block = Block()
            self.shared = self.block
            self.empty = None
            self.layers = nn.Sequential(nn.Linear(4, 5), nn.Identity(), nn.Linear(5, 2, bias=False))
            self.heads = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.Flatten()})
            self.add_module("missing", None)

        def forward(self, x):
            return self.heads["a"](self.layers(self.shared(x))) * self.scale

    return Net()


def copy_weights(t_model, e_model):
    return e_model.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_model.state_dict().items()})


def test_names_and_state_dict_keys_match_torch():
    e, t = build(ember), build(torch)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert ([n for n, _ in e.named_parameters(remove_duplicate=False)]
            == [n for n, _ in t.named_parameters(remove_duplicate=False)])
    assert ([n for n, _ in e.named_modules(remove_duplicate=False, prefix="m")]
            == [n for n, _ in t.named_modules(remove_duplicate=False, prefix="m")])
    assert ([n for n, _ in e.named_parameters(prefix="p", recurse=False)]
            == [n for n, _ in t.named_parameters(prefix="p", recurse=False)])
    assert len(list(e.parameters())) == len(list(t.parameters())) == 8
    assert same_text(repr(e), repr(t))


def test_loaded_model_matches_torch_forward_and_backward():
    e, t = build(ember), build(torch)
    result = copy_weights(t, e)
    assert repr(result) == repr(t.load_state_dict(t.state_dict())) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = e(ex), t(tx)
    assert_close(eo, to)
    (eo ** 2).sum().backward()
    (to ** 2).sum().backward()
    assert_close(ex.grad, tx.grad, rtol=1e-4, atol=1e-5)
    for (name, ep), (_, tp) in zip(e.named_parameters(), t.named_parameters()):
        assert_close(ep.grad, tp.grad, rtol=1e-4, atol=1e-5)


def test_state_dict_values_are_detached_views_and_keep_vars():
    m = ember.nn.Linear(2, 3)
    sd = m.state_dict()
    assert type(sd["weight"]) is ember.Tensor and not sd["weight"].requires_grad
    sd["weight"].zero_()
    assert float(m.weight.abs().sum()) == 0.0  # shares storage, as torch's does
    kept = m.state_dict(keep_vars=True)
    assert kept["weight"] is m.weight
    prefixed = m.state_dict(prefix="enc.")
    assert list(prefixed) == ["enc.weight", "enc.bias"]


def test_load_state_dict_strict_errors_match_torch():
    e, t = build(ember), build(torch)
    t_sd = t.state_dict()
    e_sd = {k: ember.tensor(v.numpy()) for k, v in t_sd.items()}
    del t_sd["layers.0.bias"], e_sd["layers.0.bias"]
    t_sd["extra.weight"] = torch.zeros(1)
    e_sd["extra.weight"] = ember.zeros(1)
    t_sd["block.bogus"] = torch.zeros(1)
    e_sd["block.bogus"] = ember.zeros(1)
    with pytest.raises(RuntimeError) as t_err:
        t.load_state_dict(t_sd)
    with pytest.raises(RuntimeError) as e_err:
        e.load_state_dict(e_sd)
    assert same_text(str(e_err.value), str(t_err.value))
    assert str(e_err.value).startswith("Error(s) in loading state_dict for Net:\n\tMissing key(s)")
    e_keys, t_keys = e.load_state_dict(e_sd, strict=False), t.load_state_dict(t_sd, strict=False)
    assert e_keys.missing_keys == t_keys.missing_keys == ["layers.0.bias"]
    assert e_keys.unexpected_keys == t_keys.unexpected_keys
    assert repr(e_keys) == repr(t_keys)


def test_load_state_dict_size_mismatch_raises_even_when_not_strict():
    e, t = ember.nn.Linear(3, 4), torch.nn.Linear(3, 4)
    for strict in (True, False):
        with pytest.raises(RuntimeError) as t_err:
            t.load_state_dict({"weight": torch.zeros(5, 3), "bias": torch.zeros(4)}, strict=strict)
        with pytest.raises(RuntimeError) as e_err:
            e.load_state_dict({"weight": ember.zeros(5, 3), "bias": ember.zeros(4)}, strict=strict)
        assert same_text(str(e_err.value), str(t_err.value))
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        e.load_state_dict([1, 2])


def test_load_state_dict_copies_in_place_or_assigns():
    m = ember.nn.Linear(2, 2)
    weight = m.weight
    src = {"weight": ember.ones(2, 2, dtype=ember.float64), "bias": ember.zeros(2)}
    m.load_state_dict(src)
    assert m.weight is weight and m.weight.dtype == ember.float32  # copied and cast in place
    assert m.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    m.load_state_dict({"weight": ember.full((2, 2), 3.0), "bias": ember.zeros(2)}, assign=True)
    assert m.weight is not weight and isinstance(m.weight, ember.nn.Parameter)
    assert m.weight.requires_grad and m.weight.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_non_persistent_buffer_and_buffer_assignment():
    for lib in (ember, torch):
        m = lib.nn.Module()
        m.register_buffer("a", lib.zeros(1))
        m.b = lib.nn.Buffer(lib.ones(2), persistent=False)
        m.a = lib.ones(3)  # reassigning a buffer name keeps it a buffer
        assert list(m.state_dict()) == ["a"]
        assert [n for n, _ in m.named_buffers()] == ["a", "b"]
        assert m.a.shape == (3,)
        del m.a
        assert [n for n, _ in m.named_buffers()] == ["b"]
    assert isinstance(ember.nn.Buffer(ember.zeros(1)), ember.nn.Buffer)
    assert not isinstance(ember.zeros(1), ember.nn.Buffer)


class _Plain:
    pass


@pytest.mark.parametrize("action", [
    lambda lib, m: m.register_buffer("a.b", lib.zeros(1)),
    lambda lib, m: m.register_buffer("", lib.zeros(1)),
    lambda lib, m: m.register_buffer("x", 3),
    lambda lib, m: m.register_buffer(1, lib.zeros(1)),
    lambda lib, m: m.register_buffer("p", lib.zeros(1)),
    lambda lib, m: m.register_parameter("q", lib.zeros(1)),
    lambda lib, m: m.register_parameter("q", lib.nn.Parameter(lib.ones(1)) * 2),
    lambda lib, m: m.register_parameter("a.b", None),
    lambda lib, m: m.add_module("sub", _Plain()),
    lambda lib, m: m.add_module("a.b", lib.nn.Identity()),
    lambda lib, m: m.add_module("", lib.nn.Identity()),
    lambda lib, m: m.add_module("p", lib.nn.Identity()),
    lambda lib, m: setattr(m, "p", lib.zeros(1)),
    lambda lib, m: setattr(m, "child", 3),
])
def test_registration_errors_match_torch(action):
    def run(lib):
        m = lib.nn.Module()
        m.p = lib.nn.Parameter(lib.zeros(1))
        m.child = lib.nn.Identity()
        with pytest.raises(Exception) as err:
            action(lib, m)
        return err
    e_err, t_err = run(ember), run(torch)
    assert type(e_err.value) is type(t_err.value)
    assert same_text(str(e_err.value), str(t_err.value))


def test_assign_before_init_raises():
    class Early(ember.nn.Module):
        def __init__(self):
            self.w = ember.nn.Parameter(ember.zeros(1))

    with pytest.raises(AttributeError, match=re.escape("cannot assign parameters before Module.__init__() call")):
        Early()


def test_attribute_errors_and_reassignment_moves_between_tables():
    for lib in (ember, torch):
        m = lib.nn.Module()
        with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
            m.nope
        m.x = lib.nn.Parameter(lib.zeros(1))
        m.x = None  # keeps the name registered as a parameter
        assert "x" in m._parameters and m.x is None
        m.y = lib.nn.Identity()
        m.y = lib.nn.Parameter(lib.zeros(1))  # a parameter replaces the child
        assert "y" not in m._modules and "y" in m._parameters
        del m.y
        assert not hasattr(m, "y")
    m = ember.nn.Linear(2, 2)
    names = dir(m)
    assert "weight" in names and "forward" in names and "in_features" in names


def test_get_submodule_parameter_buffer():
    e, t = build(ember), build(torch)
    assert e.get_submodule("layers.0") is e.layers[0]
    assert e.get_parameter("block.fc.weight") is e.block.fc.weight
    assert e.get_buffer("block.running") is e.block.running
    for target, getter in [("layers.9", "get_submodule"), ("block.fc.nope", "get_parameter"),
                           ("block.running", "get_parameter"), ("block.fc.weight", "get_buffer"),
                           ("scale.x", "get_submodule")]:
        with pytest.raises(AttributeError) as e_err:
            getattr(e, getter)(target)
        with pytest.raises(AttributeError) as t_err:
            getattr(t, getter)(target)
        assert str(e_err.value) == str(t_err.value)
    e.set_submodule("layers.1", ember.nn.Flatten())
    assert isinstance(e.layers[1], ember.nn.Flatten)


def test_train_eval_requires_grad_zero_grad_apply():
    m = build(ember)
    assert m.training and m.block.training
    assert m.eval() is m and not m.layers[0].training
    m.train()
    assert m.heads["b"].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")
    m(ember.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0.0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    seen = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    t_seen = []
    build(torch).apply(lambda mod: t_seen.append(type(mod).__name__))
    assert seen == t_seen


def test_to_and_casts_keep_parameter_objects():
    m = build(ember)
    params = list(m.parameters())
    m(ember.randn(2, 3)).sum().backward()
    assert m.double() is m
    assert all(p.dtype == ember.float64 for p in m.parameters())
    assert all(p.grad.dtype == ember.float64 for p in m.parameters())
    assert m.block.running.dtype == ember.float64
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    m.to(ember.float32)
    assert m.layers[0].weight.dtype == ember.float32
    m.to(device="cpu", dtype=ember.float64)
    assert m.layers[0].weight.dtype == ember.float64
    m.to(ember.zeros(1, dtype=ember.float32))
    assert m.layers[0].weight.dtype == ember.float32
    m.half().float().cpu()
    assert m.layers[0].weight.dtype == ember.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m.to(ember.int64)
    m.register_buffer("count", ember.zeros(1, dtype=ember.int64))
    m.double()
    assert m.count.dtype == ember.int64
    m.type(ember.float32)
    assert m.count.dtype == ember.float32
    with pytest.raises((RuntimeError, AssertionError)):
        m.cuda()


def test_missing_forward_and_init_arguments():
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        ember.nn.Module()(1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        ember.nn.Module(x=1)


def test_forward_hooks_order_modify_and_remove():
    def run(lib):
        m = lib.nn.Linear(3, 2)
        calls = []
        h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
        m.register_forward_pre_hook(lambda mod, args: (calls.append("pre0"), (args[0] * 0,))[1], prepend=True)
        m.register_forward_pre_hook(lambda mod, args, kwargs: (calls.append("prekw"), (args, kwargs))[1],
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: calls.append("post1"))
        m.register_forward_hook(lambda mod, args, out: (calls.append("post2"), out + 1)[1])
        m.register_forward_hook(lambda mod, args, kwargs, out: (calls.append("postkw"), out * 2)[1],
                                with_kwargs=True)
        out = m(lib.ones(1, 3))
        h1.remove()
        calls.append("|")
        out2 = m(lib.ones(1, 3))
        return calls, out, out2, m

    e_calls, e_out, e_out2, em = run(ember)
    t_calls, t_out, t_out2, tm = run(torch)
    assert e_calls == t_calls
    expect = (em.bias.detach() + 1) * 2  # the input was zeroed by the first pre-hook
    assert np.allclose(e_out.detach().numpy(), expect.numpy())
    assert np.allclose(e_out2.detach().numpy(), expect.numpy())


def test_pre_hook_with_kwargs_must_return_pair():
    m = ember.nn.Identity()
    m.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple of"):
        m(ember.ones(1))


def test_always_call_hook_runs_when_forward_raises():
    class Boom(ember.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    calls = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: calls.append("normal"))
    handle = m.register_forward_hook(lambda mod, args, out: calls.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(1)
    assert calls == [None]
    with handle:
        pass
    assert not m._forward_hooks_always_called and len(m._forward_hooks) == 1


def test_full_backward_hooks_match_torch():
    def run(lib):
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]))
            m.bias.zero_()
        seen = []

        def pre(mod, grad_output):
            seen.append(("pre", [g.clone() for g in grad_output]))
            return (grad_output[0] * 2,)

        def hook(mod, grad_input, grad_output):
            seen.append(("hook", [g.clone() for g in grad_input], [g.clone() for g in grad_output]))
            return (grad_input[0] + 1,)

        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(hook)
        x = lib.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0]], requires_grad=True)
        out = m(x)
        (out * lib.tensor([1.0, 3.0])).sum().backward()
        return seen, x.grad, m.weight.grad

    (e_seen, e_xg, e_wg), (t_seen, t_xg, t_wg) = run(ember), run(torch)
    assert [s[0] for s in e_seen] == [s[0] for s in t_seen] == ["pre", "hook"]
    assert_close(e_seen[0][1][0], t_seen[0][1][0])
    assert_close(e_seen[1][1][0], t_seen[1][1][0])
    assert_close(e_seen[1][2][0], t_seen[1][2][0])
    assert_close(e_xg, t_xg)
    assert_close(e_wg, t_wg)


def test_full_backward_hook_when_no_input_requires_grad():
    m = ember.nn.Linear(3, 2)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, tuple(go[0].shape))))
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        m(ember.ones(4, 3)).sum().backward()
    assert seen == [((None,), (4, 2))]
    assert m.weight.grad is not None


def test_deepcopy_keeps_structure_sharing_and_values():
    m = build(ember)
    clone = copy.deepcopy(m)
    assert list(clone.state_dict()) == list(m.state_dict())
    assert isinstance(clone.block.fc.weight, ember.nn.Parameter) and clone.block.fc.weight.requires_grad
    assert clone.block.fc.weight is not m.block.fc.weight
    assert clone.shared is clone.block
    x = ember.randn(2, 3)
    assert np.array_equal(clone(x).detach().numpy(), m(x).detach().numpy())


def test_pickle_round_trip():
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Dropout(0.1), ember.nn.Linear(4, 2)).eval()
    m.register_buffer("steps", ember.tensor(3))
    clone = pickle.loads(pickle.dumps(m))
    assert repr(clone) == repr(m) and not clone.training
    assert isinstance(clone[0].weight, ember.nn.Parameter) and clone[0].weight.requires_grad
    assert clone.steps.item() == 3 and list(clone.state_dict()) == list(m.state_dict())
    x = ember.randn(2, 3)
    assert np.array_equal(clone(x).detach().numpy(), m(x).detach().numpy())


def test_parameter_semantics():
    for lib in (ember, torch):
        base = lib.randn(2, 3)
        p = lib.nn.Parameter(base)
        assert p.requires_grad and p.is_leaf and isinstance(p, lib.Tensor)
        assert not lib.nn.Parameter(base, requires_grad=False).requires_grad
        with lib.no_grad():
            p.add_(1)
        assert np.array_equal(base.numpy(), p.detach().numpy())  # shares storage
        assert type(p * 2) is lib.Tensor
        assert lib.nn.Parameter().shape == (0,)
        with pytest.raises(RuntimeError):
            lib.nn.Parameter(lib.tensor([1, 2]))
    e = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    t = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(e) == repr(t)
    d = copy.deepcopy(e)
    assert isinstance(d, ember.nn.Parameter) and d.requires_grad and d is not e


def test_global_forward_hooks_run_first_for_every_module_as_torch():
    def trace(lib):
        from importlib import import_module
        module_mod = import_module(f"{lib.__name__}.nn.modules.module")
        calls = []
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
        model[0].register_forward_pre_hook(lambda m, a: calls.append(("local pre", type(m).__name__)))
        model[0].register_forward_hook(lambda m, a, out: calls.append(("local post", type(m).__name__)))
        handles = [module_mod.register_module_forward_pre_hook(
                       lambda m, a: calls.append(("global pre", type(m).__name__))),
                   module_mod.register_module_forward_hook(
                       lambda m, a, out: calls.append(("global post", type(m).__name__)) or out * 2)]
        out = model(lib.ones(1, 2))
        for h in handles:
            h.remove()
        plain = model(lib.ones(1, 2))
        return calls, out.detach().numpy(), plain.detach().numpy()
    (ours, out, plain), (theirs, _, _) = trace(ember), trace(torch)
    assert ours == theirs
    np.testing.assert_allclose(out, 8 * plain, rtol=1e-6)  # Linear, ReLU and Sequential each doubled
    assert plain.any()
