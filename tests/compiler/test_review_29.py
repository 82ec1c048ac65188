"""Session 29's review (REVIEW29): what landed on main this session, tried against eager and
torch 2.13. A global's or closure's float before a traced int is read when its operator runs
(compiler/float_constants.LoadedFloat), not when the recording swapped the function's code:
``global LR; LR = LR * 0.5`` earlier in the compiled function gave the old LR at the first call."""
import pytest

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
