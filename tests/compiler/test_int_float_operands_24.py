"""An int argument taken as a symbol (compiler/traced_ints.py) read by a float on its left:
``0.5 * k``, ``2.5 < k``, ``acc *= k`` call the float's method, which reads the int's digits
without calling the traced int's, so a branch on such a value flipping far from the probed values
ran the probed branch (a wrong result, session 24 before this). The user frame's bytecode is read
when it returns (``note_float_operands``): such an operand is a use, the int is specialised, and
every value gives eager's result. Plain ``x * k`` stays a symbol (2 graphs for a counter, torch's)."""
import pytest

import ember
from ember.compiler.eval_frame import counters

ALPHA = 0.5


class _Config:
    decay = 0.5


CONFIG = _Config()


def _augmented(x, k):
    acc = 0.5
    acc *= k
    if acc > 50:
        x = -x
    return x * k


class _Holder:
    def __init__(self, k):
        self.k = k


def _through_attribute(x, k):
    holder = _Holder(k)
    return (-x if 0.5 * holder.k > 50 else x) * k


def _callee(k):
    return 0.5 * k > 50


CASES = {
    "constant": lambda x, k: (-x if 0.5 * k > 50 else x) * k,
    "comparison": lambda x, k: (-x if 50.5 < k else x) * k,
    "global": lambda x, k: (-x if ALPHA * k > 50 else x) * k,
    "attribute": lambda x, k: (-x if CONFIG.decay * k > 50 else x) * k,
    "expression": lambda x, k: (-x if 0.5 * (k + 1) > 50 else x) * k,
    "augmented": _augmented,
    "through an attribute": _through_attribute,
    "in a callee": lambda x, k: (-x if _callee(k) else x) * k,
    "a division of ints": lambda x, k, n=4: (-x if (n / 8) * k > 50 else x) * k,
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_float_on_the_left_of_the_int_keeps_eagers_branch(name):
    fn = CASES[name]
    ember.compiler.reset()
    compiled = ember.compile(fn, backend="aot_eager")
    x = ember.ones(2)
    for k in [0, 1, 2, 3, 4, 5, 99, 120, 150, 7]:
        assert ember.equal(compiled(x, k), fn(x, k)), (name, k)


def test_an_int_only_ops_take_stays_one_symbol():
    ember.compiler.reset()
    compiled = ember.compile(lambda x, k: x * k + 1, backend="aot_eager")
    x = ember.ones(2)
    for k in range(20):
        assert ember.equal(compiled(x, k), x * k + 1)
    assert counters["stats"]["unique_graphs"] == 2
