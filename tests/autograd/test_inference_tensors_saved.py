"""An inference tensor (made under ``inference_mode``) used outside the mode by an op that
records a node: torch raises "Inference tensors cannot be saved for backward..." when the node
saves it for a gradient it will compute (``p * a``, ``p @ a``, an index), and lets it be where
no gradient reads it (``p + a``, ``where``'s values, ``addcmul``'s input, ``hypot``'s other)."""
import pytest

import ember
from torchcompare import assert_close, assert_same_error, to_torch, torch

CASES = {
    "mul": lambda m, p, a, i: p * a, "rmul": lambda m, p, a, i: a * p, "add": lambda m, p, a, i: p + a,
    "sub": lambda m, p, a, i: a - p, "div": lambda m, p, a, i: p / a, "rdiv": lambda m, p, a, i: a / p,
    "matmul": lambda m, p, a, i: p @ a, "pow": lambda m, p, a, i: p ** a,
    "where": lambda m, p, a, i: m.where(p > 0, p, a), "cat": lambda m, p, a, i: m.cat([p, a]),
    "maximum": lambda m, p, a, i: m.maximum(p, a), "clamp": lambda m, p, a, i: p.clamp(min=a),
    "index": lambda m, p, a, i: p[i], "index_select": lambda m, p, a, i: p.index_select(0, i),
    "addcmul": lambda m, p, a, i: m.addcmul(p, a, a), "addcmul-tensor": lambda m, p, a, i: m.addcmul(a, p, a),
    "lerp": lambda m, p, a, i: m.lerp(p, a, 0.5), "hypot": lambda m, p, a, i: m.hypot(p, a),
    "linear": lambda m, p, a, i: m.nn.functional.linear(a, p), "mse": lambda m, p, a, i: m.nn.functional.mse_loss(p, a),
    "masked_fill": lambda m, p, a, i: p.masked_fill(a > 0, 1.0), "of-a-view": lambda m, p, a, i: p * a[0],
    "reduced-outside": lambda m, p, a, i: p * a.sum(), "dot": lambda m, p, a, i: p[0].dot(a[0]),
    "fmod": lambda m, p, a, i: p.fmod(a), "rmatmul": lambda m, p, a, i: a @ p,
}


def _inputs(module, p, a):
    leaf = to_torch(p, True) if module is torch else p.detach().requires_grad_(True)
    with module.inference_mode():
        inference = to_torch(a) if module is torch else a.clone()
        index = module.tensor([0, 2])
        inference = inference * 1  # (made inside the mode)
    return leaf, inference, index


@pytest.mark.parametrize("case", list(CASES))
def test_saving_an_inference_tensor_for_backward_raises_as_torch(case):
    f = CASES[case]
    # float64: pow and hypot are compared with torch's, whose float32 kernels differ by CPU
    p, a = ember.randn(3, 3, dtype=ember.float64), ember.randn(3, 3, dtype=ember.float64)
    ember_args, torch_args = _inputs(ember, p, a), _inputs(torch, p, a)
    try:
        expected = f(torch, *torch_args)
    except RuntimeError:
        assert_same_error(lambda: f(ember, *ember_args), lambda: f(torch, *torch_args))
        return
    got = f(ember, *ember_args)
    assert_close(got, expected)
    assert got.requires_grad == expected.requires_grad


def test_inside_the_mode_and_under_no_grad_nothing_is_saved():
    p = ember.randn(3, requires_grad=True)
    with ember.inference_mode():
        a = ember.randn(3)
        assert not (p * a).requires_grad
    with ember.no_grad():
        assert not (p * a).requires_grad
    b = a.clone()  # a normal tensor: the workaround torch's message names
    (p * b).sum().backward()
    assert_close(p.grad, to_torch(b))
