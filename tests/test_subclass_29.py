"""``torch.overrides.TorchFunctionMode`` (nested modes, modes beside subclasses, the disabled
regions, the mode stack), the listings of ``torch.overrides`` (``get_overridable_functions``,
``get_ignored_functions``, ``get_testing_overrides``, ``resolve_name``) and ``torch.compile`` of a
function taking a Tensor subclass, against torch 2.13."""
import inspect

import pytest
import torch

import ember


def _log_mode(lib, tag, log):
    class Log(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((tag, lib.overrides.resolve_name(func), tuple(t.__name__ for t in types),
                        lib._C._len_torch_function_stack()))
            return func(*args, **(kwargs or {}))
    return Log()


def _modes(lib):
    class Sub(lib.Tensor):
        pass

    log, out = [], []
    x, y, s = lib.ones(2), lib.ones(2), lib.ones(2).as_subclass(Sub)
    F = lib.nn.functional
    out.append(lib._C._len_torch_function_stack())
    with _log_mode(lib, "a", log) as mode:
        out += [lib._C._len_torch_function_stack(), lib.overrides._get_current_function_mode() is mode,
                lib._C._is_torch_function_mode_enabled()]
        x + y, lib.add(x, 1), x.sum(), x.shape, F.relu(x), lib.ones(2), x.add_(0), s * 2, x[0], x.size(0)
        lib.zeros(1), lib.sum(x, dim=0), lib.get_default_dtype(), lib.is_tensor(x), lib.is_grad_enabled()
        with _log_mode(lib, "b", log):
            out.append(lib.neg(x).tolist())
        with lib._C.DisableTorchFunctionSubclass():
            lib.exp(s), lib.exp(x)
            out.append(lib._C._is_torch_function_mode_enabled())
        with lib._C.DisableTorchFunction():
            lib.exp(x), x.sum()
            out.append(lib._C._is_torch_function_mode_enabled())
        out.append(type(s + 1).__name__)
        out += [lib.overrides.has_torch_function((x,)), lib.overrides.has_torch_function(()),
                lib.overrides.has_torch_function((1,))]
    out += [lib._C._len_torch_function_stack(), lib._C._is_torch_function_mode_enabled()]
    return log, out


def test_modes_see_every_call_nest_and_step_aside_as_torch():
    got, want = _modes(ember), _modes(torch)
    assert got[1] == want[1]
    # (types: torch gives a plain Tensor's type for some Python-level functions, ember never)
    assert [(t, n, s) for t, n, kinds, s in got[0]] == [(t, n, s) for t, n, kinds, s in want[0]]
    assert [k for *_, k, _ in got[0] if k] == [("Sub",), ("Sub",)]
    assert [k for *_, k, _ in want[0] if "Sub" in k] == [("Sub",), ("Sub",)]


def _declined(lib):
    class Declines(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    x = lib.ones(2)
    out = []
    for call in (lambda: lib.exp(x), lambda: x + x, lambda: lib.nn.functional.relu(x), lambda: lib.ones(1)):
        with pytest.raises(TypeError) as error:
            with Declines():
                call()
        out.append(str(error.value).split(" object at ")[0])
    with pytest.raises(NotImplementedError):
        with lib.overrides.TorchFunctionMode():
            lib.exp(x)
    for pop in (lib._C._pop_torch_function_stack, lambda: lib._C._get_function_stack_at(0)):
        with pytest.raises(RuntimeError) as error:
            pop()
        out.append(str(error.value))
    with lib.overrides.BaseTorchFunctionMode():
        out.append(lib.exp(lib.zeros(1)).tolist())
    return out, lib._C._len_torch_function_stack()


def test_a_declining_mode_raises_torch_errors():
    assert _declined(ember) == _declined(torch)


def _counted(lib):
    class Count(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls = {}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.calls[func.__name__] = self.calls.get(func.__name__, 0) + 1
            return out

    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 2)
    x = lib.ones(4, 3)
    with Count() as count:
        loss = lib.nn.functional.mse_loss(lin(x), lib.zeros(4, 2))
        loss.backward()
    return count.calls, round(loss.item(), 5)


def test_a_counting_mode_around_a_training_step():
    assert _counted(ember) == _counted(torch)


def _listings(lib):
    overrides, F = lib.overrides, lib.nn.functional
    listed, ignored, dummies = (overrides.get_overridable_functions(), overrides.get_ignored_functions(),
                                overrides.get_testing_overrides())
    functions = (lib.add, lib.Tensor.add, lib.Tensor.__add__, F.relu, lib.linalg.norm, lib.ones, lib.Tensor.add_,
                 lib.is_tensor, lib.get_default_dtype, lib.Tensor.as_subclass)
    out = [[f in listed.get(lib.Tensor, ()) or any(f in listed[k] for k in listed if k is not lib.Tensor)
            for f in functions],
           [f in ignored for f in functions], [f in dummies for f in functions],
           lib.Tensor.shape.__get__ in listed[lib.Tensor.shape], dummies[lib.add](1, 2),
           [overrides.resolve_name(f) for f in (*functions, lib.Tensor.shape.__get__, len)],
           [overrides.is_tensor_method_or_property(f) for f in (lib.Tensor.add, lib.add, lib.Tensor.shape.__get__)]]
    with pytest.raises(TypeError):
        dummies[F.relu](1, 2, 3)
    return out, dummies


def test_listings_of_overridable_functions_as_torch():
    (got, dummies), (want, _) = _listings(ember), _listings(torch)
    assert got == want
    for f in (ember.add, ember.nn.functional.relu, ember.Tensor.sum, ember.linalg.norm):
        assert inspect.signature(dummies[f]) == inspect.signature(f)
