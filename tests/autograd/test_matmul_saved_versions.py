"""A product's gradient reads only the other operand, so writing in place to an operand whose
value no gradient needs is no error, as in torch 2.13 (an optimizer step on a weight between
forward and backward when the input needs no gradient); where the value is needed the error
is torch's. Gradients are compared with torch's from the same data."""
import numpy as np
import pytest
import torch

import ember

rng = np.random.default_rng(0)
X, W, B = (rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (5, 3), (5,)))

PRODUCTS = {  # (x, w) -> output; w is the operand written in place after the forward
    "linear": lambda L, x, w: L.nn.functional.linear(x, w, L.from_numpy(B)),
    "linear-3d": lambda L, x, w: L.nn.functional.linear(x.unsqueeze(0).expand(2, 4, 3), w),
    "matmul-t": lambda L, x, w: x @ w.t(),
    "mm": lambda L, x, w: L.mm(x, w.t().contiguous()),
    "matmul-vector": lambda L, x, w: w @ x[0],
    "matmul-batched": lambda L, x, w: L.matmul(x.expand(2, 4, 3), w.t()),
    "dot": lambda L, x, w: L.dot(x[0], w[0]),
}


def run(L, name, x_grad, w_grad):
    x = L.from_numpy(X.copy()).requires_grad_(x_grad)
    w = L.from_numpy(W.copy()).requires_grad_(w_grad)
    out = PRODUCTS[name](L, x, w)
    with L.no_grad():
        w.mul_(2)  # the optimizer's step
    try:
        out.square().sum().backward()
    except RuntimeError as error:
        return str(error).replace("ember", "torch")
    return [None if t.grad is None else t.grad.numpy() for t in (x, w)]


@pytest.mark.parametrize("name", PRODUCTS)
def test_writing_an_operand_no_gradient_reads_is_no_error(name):
    # w's gradient needs only x; x needs no gradient, so w's value is never read
    t, e = run(torch, name, False, True), run(ember, name, False, True)
    assert not isinstance(e, str), e
    assert t[0] is None and e[0] is None
    np.testing.assert_allclose(e[1], t[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["linear", "linear-3d", "matmul-t", "matmul-batched"])
def test_writing_an_operand_a_gradient_reads_raises_torchs_error(name):
    t, e = run(torch, name, True, True), run(ember, name, True, True)
    # (a view written through its base is "output 0 of AsStrided" in both)
    assert isinstance(t, str) and e == t


def test_writing_the_input_when_only_it_needs_no_gradient():
    outs = []
    for L in (torch, ember):
        x = L.from_numpy(X.copy())
        w = L.from_numpy(W.copy()).requires_grad_()
        out = L.nn.functional.linear(x, w)
        x.add_(1)  # x is read by w's gradient: an error in both
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as error:
            out.sum().backward()
        outs.append(str(error.value).split("operation: ")[1])
    assert outs[0] == outs[1]
