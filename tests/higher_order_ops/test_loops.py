"""while_loop, scan, map and associative_scan against torch 2.13's eager operators (values and
gradients) and a plain Python loop, and their errors."""
import numpy as np
import pytest
from torch._higher_order_ops import associative_scan as t_associative_scan
from torch._higher_order_ops import map as t_map
from torch._higher_order_ops import scan as t_scan
from torch._higher_order_ops import while_loop as t_while_loop

import ember
from ember._dynamo.exc import UncapturedHigherOrderOpError
from ember._higher_order_ops import associative_scan, map, scan
from torchcompare import assert_close, to_torch, torch

RNG = np.random.default_rng(0)


def test_while_loop_matches_torch_with_tensor_and_int_carries():
    x = ember.tensor(RNG.standard_normal(3))
    cond = lambda i, n, x: x.sum() < 50  # noqa: E731 — data-dependent trip count
    body = lambda i, n, x: (i + 1, n * 2, x * 1.5 + 1)  # noqa: E731
    i, n, out = ember.while_loop(cond, body, (ember.tensor(0), 1, x))
    ti, tn, tout = t_while_loop(cond, body, (torch.tensor(0), 1, to_torch(x)))
    assert (i.item(), n) == (ti.item(), tn) and i.item() > 1
    assert_close(out, tout)


def test_while_loop_returns_the_inputs_when_the_condition_is_false():
    x = ember.ones(2)
    assert ember.while_loop(lambda x: False, lambda x: (x + 1,), (x,))[0] is x


@pytest.mark.parametrize("body, match", [
    (lambda i, x: (i + 1, x.add_(1)), "mutated its input carried_inputs\\[1\\]"),
    (lambda i, x: (i + 1, x), "output 1 aliases an input"),
    (lambda i, x: (i + 1, x[:]), "output 1 aliases an input"),
    (lambda i, x: (i + 1, x.sum()), r"pair\[1\] differ in shape \(\) vs \(3,\)$"),
    (lambda i, x: (i + 1, x.double()), r"pair\[1\] differ in dtype torch.float64 vs torch.float32$"),
    (lambda i, x: (i + 1,), "same number of outputs but got 1 and 2"),
])
def test_while_loop_rejects_bodies_that_break_the_carry(body, match):
    with pytest.raises(UncapturedHigherOrderOpError, match=match):
        ember.while_loop(lambda i, x: i < 3, body, (ember.tensor(0), ember.zeros(3)))
    with pytest.raises(RuntimeError):  # torch's class too
        t_while_loop(lambda i, x: i < 3, body, (torch.tensor(0), torch.zeros(3)))


@pytest.mark.parametrize("dim, reverse", [(0, False), (1, True), (-1, False)])
def test_scan_matches_torch_values_and_gradients(dim, reverse):
    init = ember.tensor(RNG.standard_normal((2, 1)), requires_grad=True)
    xs = {"a": ember.tensor(RNG.standard_normal((5, 5)), requires_grad=True)}
    w = ember.tensor(RNG.standard_normal(1), requires_grad=True)
    tinit, txs, tw = to_torch(init), {"a": to_torch(xs["a"])}, to_torch(w)
    carry, (ys, cs) = scan(lambda c, x: (c * x["a"][:2, None].tanh() + w, (c.sum() * x["a"], c * 1)),
                           init, xs, dim=dim, reverse=reverse)
    tcarry, (tys, tcs) = t_scan(lambda c, x: (c * x["a"][:2, None].tanh() + tw, (c.sum() * x["a"], c * 1)),
                                tinit, txs, dim=dim, reverse=reverse)
    assert_close(carry, tcarry)
    assert_close(ys, tys)
    assert_close(cs, tcs)
    (carry.sum() + (ys * ys).sum()).backward()
    (tcarry.sum() + (tys * tys).sum()).backward()
    for e, t in [(init, tinit), (xs["a"], txs["a"]), (w, tw)]:
        assert_close(e.grad, t.grad, rtol=1e-5, atol=1e-5)


def test_scan_counter_loop_mode_is_a_python_loop():
    carry, ys = scan(lambda c, x: (c * 2, c + (x is None)), ember.ones(2), None, length=4)
    assert carry.tolist() == [16.0, 16.0] and ys[:, 0].tolist() == [2.0, 3.0, 5.0, 9.0]


def test_scan_errors():
    with pytest.raises(ValueError, match="xs or length"):
        scan(lambda c, x: (c, c), ember.ones(1), None)
    with pytest.raises(ValueError, match="length=3 differs from the size 4"):
        scan(lambda c, x: (c, c), ember.ones(1), ember.ones(4), length=3)
    with pytest.raises(RuntimeError, match=r"next_carry and init output 0 differ in shape: \(2,\) vs \(1,\)"):
        scan(lambda c, x: (c.expand(2), c), ember.ones(1), ember.ones(4))
    with pytest.raises(RuntimeError, match=r"same size along dim=0, got sizes \[3, 4\]"):
        scan(lambda c, x: (c, c), ember.ones(1), (ember.ones(4), ember.ones(3)))


def test_map_matches_torch_with_extra_args_and_gradients():
    xs = (ember.tensor(RNG.standard_normal((4, 3)), requires_grad=True), ember.tensor(RNG.standard_normal(4)))
    y = ember.tensor(RNG.standard_normal(3), requires_grad=True)
    f = lambda x, y: {"s": (x[0] * y).sin() + x[1]}  # noqa: E731
    out = map(f, xs, y)
    txs, ty = (to_torch(xs[0]), to_torch(xs[1])), to_torch(y)
    ref = t_map(f, txs, ty)
    assert_close(out["s"], ref["s"])
    out["s"].sum().backward()
    ref["s"].sum().backward()
    assert_close(xs[0].grad, txs[0].grad)
    assert_close(y.grad, ty.grad)
    with pytest.raises(RuntimeError, match="same leading dimension"):
        map(f, (ember.ones(4, 3), ember.ones(2)), y)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 16])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_is_a_cumulative_reduction(n, reverse):
    x = ember.tensor(RNG.standard_normal((2, n)), requires_grad=True)
    tx = to_torch(x)
    out = associative_scan(lambda a, b: a + b, x, 1, reverse=reverse)
    ref = (tx.flip(1).cumsum(1).flip(1) if reverse else tx.cumsum(1))
    assert_close(out, ref, atol=1e-5)
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    assert_close(x.grad, tx.grad, atol=1e-5)


def test_associative_scan_generic_pytree_matches_torch_and_a_python_loop():
    # A first-order linear recurrence h_t = a_t * h_{t-1} + b_t as an associative pair operator.
    a, b = (ember.tensor(RNG.uniform(0.5, 1.5, (6, 2))) for _ in range(2))
    combine = lambda l, r: (l[0] * r[0], r[0] * l[1] + r[1])  # noqa: E731
    _, h = associative_scan(combine, (a, b), 0, combine_mode="generic")
    _, th = t_associative_scan(combine, (to_torch(a), to_torch(b)), 0, combine_mode="generic")
    assert_close(h, th)
    loop, acc = [], np.zeros(2)
    for t in range(6):
        acc = a._data[t] * acc + b._data[t]
        loop.append(acc)
    np.testing.assert_allclose(h._data, np.stack(loop), rtol=1e-5)
    with pytest.raises(ValueError, match="'pointwise' or 'generic', but got serial"):
        associative_scan(combine, (a, b), 0, combine_mode="serial")


@pytest.mark.parametrize("dim", [2, -3])
def test_scan_and_associative_scan_refuse_a_dimension_out_of_range_like_torch(dim):
    # was wrapped modulo the rank: dim=-3 of 2-d xs scanned dim 1 and returned a result
    xs = RNG.standard_normal((4, 5)).astype(np.float32)
    message = rf"Dimension out of range \(expected to be in range of \[-2, 1\], but got {dim}\)"
    with pytest.raises(IndexError, match=message):
        t_scan(lambda c, x: (c + x, c * x), torch.zeros(4), torch.tensor(xs), dim=dim)
    with pytest.raises(IndexError, match=message):
        scan(lambda c, x: (c + x, c * x), ember.zeros(4), ember.tensor(xs), dim=dim)
    with pytest.raises(IndexError, match=message):
        associative_scan(lambda a, b: a + b, ember.tensor(xs), dim)


def test_map_and_scan_over_zero_slices_raise_runtime_error_like_torch():
    with pytest.raises(RuntimeError, match="cannot be 0") as want:
        t_map(lambda x: x * 2, torch.ones(0, 3))
    with pytest.raises(RuntimeError, match=str(want.value)):  # was IndexError: list index out of range
        map(lambda x: x * 2, ember.ones(0, 3))
    with pytest.raises(RuntimeError, match="scan dimension > 0"):
        t_scan(lambda c, x: (c + x, c), torch.zeros(3), torch.ones(0, 3))
    with pytest.raises(RuntimeError, match="size 0 along dim=0"):  # was (init, None)
        scan(lambda c, x: (c + x, c), ember.zeros(3), ember.ones(0, 3))


def test_while_loop_body_may_return_its_single_carry_alone_like_torch():
    want = t_while_loop(lambda x: x.sum() < 10, lambda x: x + 1, (torch.ones(2),))
    (got,) = ember.while_loop(lambda x: x.sum() < 10, lambda x: x + 1, (ember.ones(2),))
    assert got.tolist() == [5.0, 5.0] == want.tolist()
    compiled = ember.compile(lambda x: ember.while_loop(lambda x: x.sum() < 10, lambda x: x + 1, (x,)),
                             fullgraph=True)
    assert compiled(ember.ones(2))[0].tolist() == [5.0, 5.0]


@pytest.mark.parametrize("compiled", [False, True])
def test_while_loop_gradients_match_torch(compiled):
    # torch 2.13's eager while_loop differentiates; ember's returned tensors without grad_fn
    w0, x0 = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3).astype(np.float32)

    def run(lib, loop):
        w, x = (lib.tensor(a, requires_grad=True) for a in (w0, x0))
        i, h = loop(lambda i, h: i < 4, lambda i, h: (i + 1, (h * w).tanh() + x),
                    (lib.zeros((), dtype=lib.int64), x * 1.0))
        (h * h).sum().backward()
        return h, x.grad, w.grad
    loop = ember.compile(lambda *a: ember.while_loop(*a), fullgraph=True) if compiled else ember.while_loop
    for got, want in zip(run(ember, loop), run(torch, t_while_loop)):
        assert_close(got, want, rtol=1e-5, atol=1e-5)
