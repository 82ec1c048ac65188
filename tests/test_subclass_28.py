"""Tensor subclasses and tensor-like types against torch 2.13: ``Tensor.as_subclass``,
``__torch_function__`` on subclasses (the default one converting results, a logging one) and on
a tensor-like type (torch's ``ScalarTensor`` example), ``torch._C.DisableTorchFunction[Subclass]``
and ``torch.overrides`` (https://pytorch.org/docs/stable/notes/extending.html)."""
import functools
import pickle

import pytest
import torch

import ember


def _logging_class(lib):
    log = []

    class Logging(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((func.__name__, tuple(type(a).__name__ for a in args)))
            return super().__torch_function__(func, types, args, kwargs or {})

    return Logging, log


def _calls(lib):
    """Each call on a subclass instance ``s`` and a plain tensor ``x``: what it logs, the type and value it gives."""
    Logging, log = _logging_class(lib)
    x = lib.tensor([1.0, -2.0, 3.0])
    s = x.as_subclass(Logging)
    calls = {
        "s + x": lambda: s + x, "x + s": lambda: x + s, "x.add(s)": lambda: x.add(s),
        "torch.add(x, s)": lambda: lib.add(x, s), "s.add_(1)": lambda: s.add_(1), "s * 2": lambda: s * 2,
        "relu": lambda: lib.nn.functional.relu(s), "cat": lambda: lib.cat([x, s]), "s[0]": lambda: s[0],
        "s.max(0)": lambda: s.max(0)[0], "unbind": lambda: s.unbind(0)[1], "s.shape": lambda: s.shape,
        "s.sum().item()": lambda: s.sum().item(), "repr": lambda: repr(s), "tolist": lambda: s.tolist(),
        "exp": lambda: lib.exp(s), "matmul": lambda: s @ x,
    }
    out = {}
    for name, call in calls.items():
        log.clear()
        result = call()
        value = result.tolist() if isinstance(result, lib.Tensor) else result
        value = [round(v, 5) for v in value] if isinstance(value, list) and name == "exp" else value
        out[name] = (list(log), type(result).__name__, value)
    return out


def test_logging_subclass_logs_and_converts_as_torch():
    got, want = _calls(ember), _calls(torch)
    for name in want:
        log, kind, value = got[name]
        assert (kind, value) == want[name][1:], name
        assert [args for _, args in log] == [args for _, args in want[name][0]], name
        assert log == want[name][0], name


def _leaf_gradients(lib):
    class Sub(lib.Tensor):
        pass

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    s = x.as_subclass(Sub)
    facts = [type(s).__name__, s.is_leaf, s.requires_grad, type(s.grad_fn).__name__, s._version]
    y = (s * s).sum()
    facts += [type(y).__name__, type(y.grad_fn).__name__]
    y.backward()
    facts += [x.grad.tolist(), type(x.grad).__name__]
    with lib.no_grad():
        s.mul_(10)
    facts += [x.tolist(), x._version, s._version]
    leaf = lib.ones(2).as_subclass(Sub).requires_grad_()
    (leaf * 3).sum().backward()
    facts += [leaf.is_leaf, type(leaf.grad).__name__, leaf.grad.tolist(), repr(leaf * 1)]
    return facts


def test_as_subclass_shares_storage_and_history():
    assert _leaf_gradients(ember) == _leaf_gradients(torch)


@pytest.mark.parametrize("lib", [ember, torch])
def test_as_subclass_refuses_a_non_tensor_class(lib):
    with pytest.raises(TypeError) as got:
        lib.ones(1).as_subclass(int)
    with pytest.raises(TypeError) as want:
        torch.ones(1).as_subclass(int)
    assert str(got.value) == str(want.value)


def _disabled(lib):
    Logging, log = _logging_class(lib)
    s = lib.ones(2).as_subclass(Logging)
    with lib._C.DisableTorchFunctionSubclass():
        inside = [type(s + 1).__name__, type(lib.exp(s)).__name__, lib._C._is_torch_function_enabled()]
    with lib._C.DisableTorchFunction():
        inside.append(type(s.sum()).__name__)
    return inside, log, lib._C._is_torch_function_enabled(), type(s + 1).__name__


def test_disabled_regions_run_subclasses_as_tensors():
    assert _disabled(ember) == _disabled(torch)


def _overrides(lib):
    Logging, _ = _logging_class(lib)
    s, x = lib.ones(1).as_subclass(Logging), lib.ones(1)
    param = lib.nn.Parameter(lib.ones(2))
    return [lib.overrides.has_torch_function((x, 1)), lib.overrides.has_torch_function((x, s)),
            lib.overrides.has_torch_function((param,)), type(param * 2).__name__,
            lib.overrides.is_tensor_like(s), lib.overrides.is_tensor_like(1.0),
            len(lib.overrides.get_default_nowrap_functions())]


def test_overrides_helpers_and_parameter_opt_out():
    assert _overrides(ember) == _overrides(torch)


def _scalar_tensor(lib):
    """torch's ``ScalarTensor`` example: a tensor-like type with a table of handled functions
    (ember's ``overrides``, imported here, turns the hand-off on for types that are no subclass)."""
    overrides = lib.overrides
    if lib is ember:  # (its import turned them on; the suite's conftest turns them off after each test)
        ember._tensor_subclass.enable()
    handled = {}

    class ScalarTensor:
        def __init__(self, n, value):
            self._n, self._value = n, value

        def tensor(self):
            return self._value * lib.eye(self._n)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                return NotImplemented
            return handled[func](*args, **(kwargs or {}))

    def implements(function):
        def decorator(func):
            functools.update_wrapper(func, function)
            handled[function] = func
            return func
        return decorator

    @implements(lib.mean)
    def mean(input):
        return float(input._value) / input._n

    @implements(lib.add)
    def add(input, other):
        if isinstance(other, ScalarTensor):
            return ScalarTensor(input._n, input._value + other._value)
        return lib.add(input.tensor(), other)

    d = ScalarTensor(3, 2)
    out = [lib.mean(d), lib.add(d, d)._value, lib.add(d, lib.ones(3)).tolist()]
    for call in (lambda: lib.max(d), lambda: lib.nn.functional.relu(d), lambda: lib.ones(3) + d):
        with pytest.raises(TypeError) as error:
            call()
        out.append(str(error.value).replace("__main__.", "").replace(__name__ + ".", ""))
    out += [overrides.has_torch_function((d,)), lib.ones(3) == d]
    return out


def test_tensor_like_type_handles_functions_as_torch():
    assert _scalar_tensor(ember) == _scalar_tensor(torch)


def _results_of_a_plain_subclass(lib):
    """torch's ``SubTensor`` example and the default ``__torch_function__`` through a module,
    autograd, iteration and several-result functions (result types, as torch gives them)."""
    class SubTensor(lib.Tensor):
        pass

    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 2)
    x = lib.ones(4, 3).as_subclass(SubTensor).requires_grad_()
    y = lin(x)
    y.sum().backward()
    with lib.no_grad():
        z = x * 2
    values = [lib.add(SubTensor([0]), SubTensor([1])), lib.add(SubTensor([0]), lib.tensor([1])), y, x.grad,
              lin.weight.grad, lib.stack([x, x]), x.detach(), x.to(lib.float64), lib.where(x > 0, x, 0.0), x.T,
              x.split(2)[0], lib.nn.functional.softmax(x, -1), lib.nn.Parameter(lib.ones(2)) * x[0, :2], z,
              list(x)[0], lib.ones(1, 3) + x, x.new_zeros(2)]
    return [type(v).__name__ for v in values] + [str(z), type(y.grad_fn).__name__, z.requires_grad]


def test_results_of_a_plain_subclass_as_torch():
    assert _results_of_a_plain_subclass(ember) == _results_of_a_plain_subclass(torch)


def _pickled(lib):
    global Tagged  # (pickle finds the class by its module and name)

    class Tagged(lib.Tensor):
        pass

    s = lib.tensor([1.0, 2.0]).as_subclass(Tagged)
    s.tag = "kept"
    loaded = pickle.loads(pickle.dumps(s))
    return type(loaded).__name__, loaded.tag, loaded.tolist()


def test_a_pickled_subclass_keeps_its_class_and_attributes():
    assert _pickled(ember) == _pickled(torch)


def test_real_torch_tensors_are_no_overrides_and_disable_puts_the_functions_back():
    from ember import _tensor_subclass

    class Sub(ember.Tensor):  # (turns overrides on)
        pass

    assert _tensor_subclass.enabled() and isinstance(ember.exp, _tensor_subclass.Overridable)
    source = torch.tensor([[1.5, -2.0], [0.25, 4.0]]).t()
    got = ember.from_dlpack(source)  # (torch's __torch_function__ would call ember's wrapper back: RecursionError)
    assert type(got) is ember.Tensor and got.tolist() == source.tolist() and got.stride() == source.stride()
    assert type(ember.add(ember.ones(2).as_subclass(Sub), 1)) is Sub
    _tensor_subclass.disable()
    assert not _tensor_subclass.enabled() and not isinstance(ember.exp, _tensor_subclass.Overridable)
    assert "add" not in vars(ember.Tensor) or not hasattr(vars(ember.Tensor)["add"], "public")
    assert type(ember.add(ember.ones(2).as_subclass(Sub), 1)) is ember.Tensor  # (no wrappers: plain again)
