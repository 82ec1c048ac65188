"""What a program observes of torch.compile's dynamo, against torch 2.13: the graphs a callable
backend gets (the dynamic one too) and their example inputs, the graphs of closures dropped in a
loop (kept on the code object)."""
import numpy as np
import pytest
import torch
from torch._dynamo.testing import CompileCounter as TorchCounter

import ember
from ember._dynamo.testing import CompileCounter

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _shape_loop(lib, counter):
    """A callable backend over a shape-changing loop (``dynamic=None``): per graph, what its
    example inputs were (an int, or a tensor's shape and whether it is the call's own tensor),
    the counter's counts, and whether every result equals the eager one."""
    seen, sizes = [], []

    def backend(gm, example_inputs):
        seen.append([(tuple(e.shape), e is x) if isinstance(e, lib.Tensor) else "size" for e in example_inputs])
        sizes.extend(e for e in example_inputs if isinstance(e, int))
        return counter(gm, example_inputs)

    def f(a, b):
        return (a.sin() * b).sum(0) + a.shape[0]

    cf, same = lib.compile(f, backend=backend), True
    for n in (3, 4, 5, 6, 4):
        x, b = lib.randn(n, 2), lib.randn(2)
        same &= bool(lib.allclose(cf(x, b), f(x, b)))
    return seen, (counter.frame_count, counter.op_count), same, sizes


def test_callable_backend_gets_each_graph_with_the_capturing_calls_tensors():
    torch._dynamo.reset()
    want = _shape_loop(torch, TorchCounter())
    got = _shape_loop(ember, CompileCounter())
    # before: the dynamic graph bypassed the backend (1 frame, torch 2) and its example inputs
    # were zeros, not the call's tensors
    assert want[0] == [[((3, 2), True), ((2,), False)], ["size", ((4, 2), True), ((2,), False)]]  # (a SymInt)
    assert got[:3] == want[:3] and got[3] == [4]  # (ember's: the int at the call that captured it)


def test_callable_backend_of_a_dynamic_graph_runs_its_replays():
    calls = []

    def backend(gm, example_inputs):
        def run(*args):
            calls.append(args[0])  # the size symbol's value, first (torch's Sym placeholder)
            return gm(*args)
        return run

    cf = ember.compile(lambda a: a.cos() * a.shape[0], backend=backend, dynamic=True)
    for n in (3, 5, 7, 5, 7):
        a = ember.randn(n)
        np.testing.assert_allclose(cf(a).numpy(), np.cos(a.numpy()) * n, rtol=1e-6)
    # as torch's, the callable runs from the first call on (before BACKEND27: from the second)
    assert calls == [3, 5, 7, 5, 7]


def _dropped_closures(lib, counter):
    """Frames a counter backend saw for closures made, compiled, called and dropped in a loop:
    a lambda, a ``def``, a ``def`` reading a new tensor of its closure. (One reading a new int of
    its closure: torch 2 frames, the int made a symbol; ember 5, see the int arguments' row.)"""
    t, frames, same = lib.ones(3), [], True
    for kind in range(3):
        counter.clear()
        for i in range(5):
            w = lib.full((3,), float(i))
            if kind == 0:
                g = lib.compile(lambda x: x * 2, backend=counter)
            elif kind == 1:
                def h(x):
                    return x + 1
                g = lib.compile(h, backend=counter)
            else:
                def h(x):
                    return x + w
                g = lib.compile(h, backend=counter)
            same &= g(t).tolist() == [[2.0] * 3, [2.0] * 3, [1.0 + i] * 3][kind]
            del g
        frames.append(counter.frame_count)
    return frames, same


def test_closures_dropped_in_a_loop_keep_their_graph_on_the_code_object():
    torch._dynamo.reset()
    want = _dropped_closures(torch, TorchCounter())
    got = _dropped_closures(ember, CompileCounter())
    assert want == ([1, 1, 1], True)
    assert got == want  # before: [5, 5, 5]


def test_a_dropped_closures_graphs_go_with_reset():
    counter = CompileCounter()
    for _ in range(2):
        ember.compile(lambda x: x - 1, backend=counter)(ember.ones(2))
        ember.compiler.reset()
    assert counter.frame_count == 2


_SET_BY_SCRIPTS = {  # what gpt-fast, nanoGPT-style and torchtune-style scripts set
    "_inductor": {"coordinate_descent_tuning": True, "triton.unique_kernel_names": True, "fx_graph_cache": True,
                  "epilogue_fusion": False, "triton.cudagraphs": True, "max_autotune": True,
                  "coordinate_descent_check_all_directions": True, "conv_1x1_as_mm": True},
    "_functorch": {"donated_buffer": False, "activation_memory_budget": 0.5, "enable_autograd_cache": False},
}


def _config_behaviour(lib):
    """Per config module: its defaults for the keys scripts set, the values read back after
    setting them (sub-configs through a dot and through ``patch``), and the errors of an
    unknown key (read, set, a sub-config's)."""
    import importlib
    out = []
    for package, keys in _SET_BY_SCRIPTS.items():
        config = importlib.import_module(f"{lib.__name__}.{package}.config")

        def get(key):
            obj = config
            for part in key.split("."):
                obj = getattr(obj, part)
            return obj
        defaults = {k: get(k) for k in keys}
        with config.patch(keys):
            patched = {k: get(k) for k in keys}
        restored = {k: get(k) for k in keys} == defaults
        for k, v in keys.items():
            head, _, leaf = k.rpartition(".")
            setattr(get(head) if head else config, leaf, v)
        assigned = {k: get(k) for k in keys}
        for k, v in defaults.items():
            head, _, leaf = k.rpartition(".")
            setattr(get(head) if head else config, leaf, v)
        errors = []
        for act in (lambda: config.no_such_key, lambda: setattr(config, "no_such_key", 1),
                    lambda: setattr(config.triton if package == "_inductor" else config, "no_such_key", 1)):
            with pytest.raises(AttributeError) as info:
                act()
            errors.append(str(info.value).removeprefix(lib.__name__ + "."))
        out.append((defaults, patched, restored, assigned, errors))
    return out


def test_inductor_and_functorch_configs_are_torchs_attribute_bags():
    import torch._functorch.config  # noqa: F401  (torch loads these on first import)
    import torch._inductor.config  # noqa: F401
    assert _config_behaviour(ember) == _config_behaviour(torch)


def test_inductor_config_set_by_a_script_reaches_compile_under_its_options():
    config = ember._inductor.config
    with config.patch({"max_autotune": True, "triton.cudagraphs": True, "triton.unique_kernel_names": False}):
        cf = ember.compile(lambda a: a + 1)
        explicit = ember.compile(lambda a: a + 1, options={"max_autotune": False})
    plain = ember.compile(lambda a: a + 1)
    assert cf._options["max_autotune"] and cf._options["triton.cudagraphs"]
    assert "triton.unique_kernel_names" not in cf._options  # (accepted and ignored)
    assert explicit._options["max_autotune"] is False  # options= wins, as torch's
    assert "max_autotune" not in plain._options


def _module_compile_frames(lib):
    """Frames a counter saw for ``module.compile()`` (then two calls) of: a Linear, a Sequential
    of library modules, a Sequential of user modules, a user module, a Linear subclass without
    and with a forward of its own; and whether every result equals the eager one."""
    class User(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x).relu()

    class Plain(lib.nn.Linear):
        pass

    class Own(lib.nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2

    nn, frames, same = lib.nn, [], True
    for make in (lambda: nn.Linear(4, 4), lambda: nn.Sequential(nn.Linear(4, 4), nn.ReLU()),
                 lambda: nn.Sequential(User(), User()), User, lambda: Plain(4, 4), lambda: Own(4, 4)):
        lib._dynamo.reset()
        counter, m, x = (TorchCounter if lib is torch else CompileCounter)(), make(), lib.randn(2, 4)
        want = m(x)
        m.compile(backend=counter)
        same &= all(bool(lib.allclose(m(x), want)) for _ in range(2))
        frames.append(counter.frame_count)
    return frames, same


def test_module_compile_of_the_librarys_own_forward_runs_it_eagerly():
    want = _module_compile_frames(torch)
    assert want == ([0, 0, 2, 1, 0, 1], True)
    assert _module_compile_frames(ember) == want  # before: [1, 1, 1, 1, 1, 1]
