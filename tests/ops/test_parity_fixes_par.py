"""Remaining item-2 gaps of issue 8 against torch 2.13: integer ``pow`` with an exponent the
dtype cannot hold, a Python integer base wrapped to the tensor's dtype, PReLU's second
derivatives (input and weight, also at exactly 0, where torch's first derivative takes the
slope and its second the identity), and NumPy's RuntimeWarnings, which must not reach a user."""
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from harness import Case, I, R, V, check, params

CASES = [
    Case("uint8-pow-300", lambda L, x: x ** 300, I(3, low=0, high=4, dtype="uint8"), dtypes=(None,)),
    Case("int8-pow-127", lambda L, x: [x ** 127, L.pow(x, 2)], I(3, low=-2, high=3, dtype="int8"), dtypes=(None,)),
    Case("int16-pow-inplace-overflow", lambda L, x: x.clone().pow_(40000), I(3, dtype="int16"), dtypes=(None,)),
    Case("int64-pow-huge", lambda L, x: x ** (2 ** 63), I(3), dtypes=(None,)),
    Case("uint8-pow-negative", lambda L, x: x ** -1, I(3, low=0, high=4, dtype="uint8"), dtypes=(None,)),
    Case("int-base-wraps", lambda L, x: [300 ** x, (-3) ** x], I(3, low=0, high=4, dtype="uint8"), dtypes=(None,)),
    Case("float-pow-large", lambda L, x: x ** 300, R(3)),
    Case("prelu-second-order", lambda L, x, w: L.nn.functional.prelu(x, w) ** 2, R(2, 3, 4),
         V([0.25, -0.5, 1.5]), grad2=True),
    Case("prelu-second-order-at-zero", lambda L, x, w: L.nn.functional.prelu(x, w) * x,
         V([[0.0, -0.0, 1.0, -2.0]]), V([0.3]), grad2=True),
    Case("prelu-one-slope-1d", lambda L, x, w: L.nn.functional.prelu(x, w).exp(), R(5), V([0.2]), grad2=True),
]


@pytest.mark.parametrize("case,dtype", params(CASES))
def test_against_torch(case, dtype):
    check(case, dtype)


PROGRAM = """
import numpy as np, ember
x = ember.tensor([1000.0, -1.0, 0.0, 3e38, float("inf"), float("nan")])
x.requires_grad_()
ys = [x.exp(), x.log(), 1 / x, x.sqrt(), x * x, x + x, x - x, x % 0.0, x // 0.0, x ** 0.5, x.exp().log(),
      ember.logit(x), ember.xlogy(x, x), ember.lgamma(x), ember.erfinv(x), x.cumsum(0), x.cumprod(0),
      x.var(), x.std(), ember.logcumsumexp(x, 0), x.sigmoid(), x.tanh(), x.softmax(0), x.atanh(), x.acosh(),
      ember.nn.functional.softplus(x), ember.nn.functional.gelu(x), ember.nn.functional.silu(x)]
sum(y.sum() for y in ys).backward()
np.log(np.array([-1.0]))  # the user's own NumPy warning still shows
"""


def test_numpy_runtime_warnings_do_not_reach_the_user():
    done = subprocess.run([sys.executable, "-W", "default", "-c", PROGRAM], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "Warning" in line]
    assert len(warnings) == 1 and warnings[0].startswith("<string>"), done.stderr
