"""Optimizer hooks against torch 2.13: step pre/post hooks (per optimizer and global),
state_dict and load_state_dict hooks, their order, arguments, return values and handles."""
import importlib

import pytest
import torch

import ember


def setup(lib):
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    w.grad = lib.tensor([0.5, 0.25])
    return w, lib.optim.SGD([w], lr=0.1)


def test_step_hooks_order_arguments_and_replaced_arguments():
    logs = []
    for lib in (ember, torch):
        log = []
        w, opt = setup(lib)
        module = importlib.import_module(lib.__name__ + ".optim.optimizer")
        glob = [module.register_optimizer_step_pre_hook(
                    lambda o, a, k: log.append(("gpre", a[0] is o, len(a), dict(k)))),
                module.register_optimizer_step_post_hook(
                    lambda o, a, k: log.append(("gpost", len(a), sorted(k))))]
        try:
            opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a))))
            opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: log.append("closure") or 3.0}))
            h = opt.register_step_post_hook(lambda o, a, k: log.append(("post", sorted(k))))
            loss = opt.step()
            h.remove()
            opt.step()
        finally:
            for handle in glob:
                handle.remove()
        opt.step()
        logs.append((log, loss, w.tolist()))
    assert logs[0] == logs[1]
    assert logs[0][1] == 3.0


def test_a_pre_hook_returning_something_else_raises():
    for lib in (ember, torch):
        _, opt = setup(lib)
        opt.register_step_pre_hook(lambda o, a, k: 1)
        with pytest.raises(RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\), "
                                               "but got 1.$"):
            opt.step()


def test_a_subclass_overriding_step_gets_the_hooks_as_torchs_does():
    # The most derived class's step is the one wrapped: a subclass calling super().step() of an
    # already-wrapped SGD.step runs the hooks twice in torch too.
    logs = []
    for lib in (ember, torch):
        log = []
        setup(lib)

        class Mine(lib.optim.SGD):
            def step(self, closure=None):
                log.append("step")
                return super().step(closure)
        w, _ = setup(lib)
        opt = Mine([w], lr=1.0)
        opt.register_step_pre_hook(lambda *a: log.append("pre"))
        opt.register_step_post_hook(lambda *a: log.append("post"))
        opt.step()
        logs.append((log, w.tolist()))
    assert logs[0] == logs[1]


def test_state_dict_hooks_order_prepend_and_replacement():
    results = []
    for lib in (ember, torch):
        log = []
        w, opt = setup(lib)
        opt.step()
        opt.register_state_dict_pre_hook(lambda o: log.append("pre1"))
        opt.register_state_dict_pre_hook(lambda o: log.append("pre0"), prepend=True)

        def post(o, sd):
            log.append(("post", sorted(sd)))
            sd["extra"] = 1
        opt.register_state_dict_post_hook(post)
        sd = opt.state_dict()
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("lpre", sorted(sd))) or
                                              {k: v for k, v in sd.items() if k != "extra"})
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("lpre0", sorted(sd))), prepend=True)
        h = opt.register_load_state_dict_post_hook(lambda o: log.append(("lpost", o.param_groups[0]["lr"])))
        sd["param_groups"][0]["lr"] = 0.5
        opt.load_state_dict(sd)
        h.remove()
        opt.load_state_dict(sd)
        results.append((log, sorted(sd)))
    assert results[0] == results[1]
