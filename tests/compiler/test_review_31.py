"""Wrong numbers found reviewing session 31's merged work (REVIEW31), against torch 2.13: the
``"eager"`` backend differentiates a graph's nodes, and the graph of ``softplus(x, beta)`` /
``elu(x, alpha)`` with a traced attribute (``compiler/float_attributes.py``) computed ``exp`` of
the branch not taken: ``0 * inf`` made its gradient NaN (``softplus(x, 3.0)`` at x = 30,
``elu(x, 0.25)`` at x = 100), where torch's is the gradient of the branch taken. An int of a traced
float (``int(lr)``, ``round(lr)``) given to a float's own operator or a built-in that reads its
digits in C (``7.0 // int(lr)``, ``max(int(lr), 2.5)``, ``divmod``, ``sum``, ``pow``, ``sorted``) was
no use: the graph kept the recording's value (``7.0 // int(3.3)`` gave 3.0, eager's 2.0)."""
import math

import numpy as np
import pytest
import torch
import torch._dynamo

import ember

from graph_counts import graph_counts

XS = [-100.0, -1.0, 0.5, 1.0, 30.0, 88.0, 100.0, 1e4]


def _softplus(x, beta):
    lib = torch if isinstance(x, torch.Tensor) else ember
    return lib.nn.functional.softplus(x * 1.0, beta) * 2


def _elu(x, alpha):
    lib = torch if isinstance(x, torch.Tensor) else ember
    return lib.nn.functional.elu(x * 1.0, alpha) * 2


@pytest.mark.parametrize("fn, values", [(_softplus, (1.0, 2.0, 3.0, 0.5)), (_elu, (1.0, 0.5, 0.25))])
def test_the_eager_backends_gradient_of_a_traced_attribute_has_no_nan_of_the_branch_not_taken(fn, values):
    torch._dynamo.reset()
    ember.compiler.reset()
    compiled = {torch: torch.compile(fn, backend="eager"), ember: ember.compile(fn, backend="eager")}
    for value in values:
        grads = []
        for lib in (torch, ember):
            x = lib.tensor(XS, requires_grad=True)
            compiled[lib](x, value).sum().backward()
            grads.append(np.array(x.grad.tolist(), np.float32))
        want, got = grads
        assert not np.isnan(want).any()
        np.testing.assert_allclose(got[1:], want[1:], rtol=4e-7, atol=0)  # (a few ulp; -100: subnormals)
        assert got[0] == want[0] or abs(want[0]) < 1e-37


STALE = [lambda x, lr: x * (7.0 // int(lr)), lambda x, lr: x * (7.0 / int(lr)), lambda x, lr: x * (1.5 ** int(lr)),
         lambda x, lr: x * (7.0 % int(lr)), lambda x, lr: x * max(int(lr), 2.5),
         lambda x, lr: x * divmod(7.0, int(lr))[0], lambda x, lr: x * sum([0.5, round(lr)]),
         lambda x, lr: x * pow(1.5, math.floor(lr)), lambda x, lr: x * sorted([round(lr), 2.5])[0]]


@pytest.mark.parametrize("fn", STALE)
def test_an_int_of_a_traced_float_read_by_a_floats_c_code_is_no_stale_constant(fn):
    calls = [(v,) for v in (1.0, 2.6, 1.2, 5.0)]
    assert graph_counts(fn, ember, calls)[1] == graph_counts(fn, torch, calls)[1]
