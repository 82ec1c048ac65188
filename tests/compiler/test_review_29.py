"""Session 29's review (REVIEW29): what landed on main this session, tried against eager and
torch 2.13. A global's or closure's float before a traced int is read when its operator runs
(compiler/float_constants.LoadedFloat), not when the recording swapped the function's code:
``global LR; LR = LR * 0.5`` earlier in the compiled function gave the old LR at the first call."""
import numpy as np
import pytest
import torch

import ember

LR = 0.5


def _halving_global(x, k):
    global LR
    LR = LR * 0.5
    return x * (LR * (k + 1))


def _doubling_closure():
    base = 0.25

    def step(x, k):
        nonlocal base
        base = base * 2.0
        return x * (base * (k + 1))
    return step


def _eager_and_compiled(make, reset):
    runs = []
    for compiled in (False, True):
        reset()
        fn = make()
        code = fn.__code__
        call = ember.compile(fn, dynamic=True) if compiled else fn
        runs.append([call(ember.ones(2), k).tolist() for k in range(4)])
        assert fn.__code__ is code
    return runs


def _reset_lr():
    global LR
    LR = 0.5
    ember.compiler.reset()


@pytest.mark.parametrize("make", [lambda: _halving_global, _doubling_closure], ids=["global", "closure"])
def test_a_name_written_before_its_float_is_used_is_read_then(make):
    eager, compiled = _eager_and_compiled(make, _reset_lr)
    assert compiled == eager


SCALE = 0.25


def _scaled(k):
    return SCALE * (k + 1)


def _raising(x, k):
    x = x * (0.01 * (k + 1)) * _scaled(k)
    raise ValueError("raised at line 5 of _raising")


def test_codes_come_back_after_an_error_and_tracebacks_name_the_line():
    ember.compiler.reset()
    codes = (_raising.__code__, _scaled.__code__)
    compiled = ember.compile(_raising, dynamic=True)
    for k in range(3):
        with pytest.raises(ValueError, match="raised at line") as info:
            compiled(ember.ones(1), k)
        assert info.traceback[-1].statement.lines[-1].strip().startswith("raise ValueError")
        assert (_raising.__code__, _scaled.__code__) == codes
        assert _raising.__code__ is codes[0] and _scaled.__code__ is codes[1]


def _outcome(call, module):
    try:
        return tuple(call(module).shape)
    except TypeError as error:
        return str(error)


SIZES = {  # (resize_ read its sizes with int(): resize_(2, 2.5) made 2 x 2; unflatten with list())
    "resize_ a float": lambda m: m.ones(6).resize_(2, 2.5),
    "resize_ one float": lambda m: m.ones(6).resize_(2.0),
    "resize_ NumPy ints": lambda m: m.ones(6).resize_((np.int64(2), 3)),
    "resize_ a 0-d tensor": lambda m: m.ones(6).resize_(m.tensor(2)),
    "unflatten an int": lambda m: m.ones(6).unflatten(0, 6),
    "unflatten a float": lambda m: m.ones(6).unflatten(0, (2, 2.5)),
    "unflatten a Size": lambda m: m.ones(6).unflatten(0, m.Size([2, 3])),
    "full an int": lambda m: m.full(2, 1.0),
    "full a NumPy int": lambda m: m.full(np.int64(2), 1.0),
    "full a Size": lambda m: m.full(m.Size([2]), 1.0),
    "new_full an int": lambda m: m.ones(2).new_full(2, 1.0),
    "randint an int size": lambda m: m.randint(5, 3),
    "randint a 0-d tensor in the size": lambda m: m.randint(0, 5, (m.tensor(2),)),
    "zeros size= an int": lambda m: m.zeros(size=2),
    "rand size= a NumPy int": lambda m: m.rand(size=np.int64(2)),
    "ones size= a float": lambda m: m.ones(size=2.0),
    "empty size= ()": lambda m: m.empty(size=()),
    "randn size= a list": lambda m: m.randn(size=[2]),
    "view size=": lambda m: m.ones(6).view(size=(2, 3)),  # (the names torch takes: refused before)
    "reshape shape=": lambda m: m.reshape(m.ones(6), shape=(2, -1)),
    "permute dims=": lambda m: m.ones(2, 3).permute(dims=(1, 0)),
    "repeat repeats=": lambda m: m.ones(2).repeat(repeats=(2,)),
    "sum_to_size size=": lambda m: m.ones(2, 3).sum_to_size(size=(1, 3)),
    "new_empty size=": lambda m: m.ones(2).new_empty(size=(3,)),
    "new_zeros size= an int": lambda m: m.ones(2).new_zeros(size=3),
}


@pytest.mark.parametrize("name", list(SIZES))
def test_sizes_as_torch_reads_them(name):
    assert _outcome(SIZES[name], ember) == _outcome(SIZES[name], torch)


def _doubling_sin(base):
    class DoublingSin(base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            return result * 2 if getattr(func, "__name__", "") == "sin" else result
    return DoublingSin


def test_a_mode_around_a_compiled_function_applies_after_the_graph_was_captured():
    """(torch 2.13's own compile doubles twice here; ember's agrees with torch's eager)"""
    ember.compiler.reset()
    compiled = ember.compile(lambda x: x.sin() + 1)
    runs = {}
    for module, call in ((torch, lambda x: x.sin() + 1), (ember, compiled)):
        x = module.ones(2)
        before = call(x).tolist()
        with _doubling_sin(module.overrides.TorchFunctionMode)():
            inside = call(x).tolist()
        runs[module] = before + inside + call(x).tolist()
    assert runs[ember] == pytest.approx(runs[torch])
