"""Gradients of a compiled step that calls ``.backward()`` at new dynamic sizes, against torch.

The probes that find a dynamic graph's size symbols run the step on inputs resized along the
dynamic dimensions; an input without a probed dimension is passed as it is, so its ``.grad``
(and a parameter's) must be put back after each probe, or the first call at a new size leaves
the probes' gradients summed into it (``w.grad`` 233 for 15). Each case runs the same step in
torch (the oracle) and compiled in ember over a sweep of shapes with repeats, and compares every
leaf's ``.grad`` (None or values) after each call: with ``dynamic=True`` and the automatic
dynamic recompile, on the eager and the default backend.
"""
import numpy as np
import pytest
import torch

import ember


pytestmark = pytest.mark.usefixtures("fresh_compiler")

SHAPES = [(2, 3), (3, 4), (4, 5), (4, 5), (6, 2), (3, 4)]
MODES = [{"dynamic": True, "backend": "eager"}, {"dynamic": None, "backend": "eager"},
         {"dynamic": True}, {"dynamic": None}]


def _leaves(lib, arrays, grads):
    """Leaf tensors of ``lib`` holding ``arrays``, requiring grad, ``.grad`` preset from ``grads``."""
    out = []
    for a, g in zip(arrays, grads):
        t = lib.tensor(a, requires_grad=True)
        if g is not None:
            t.grad = lib.tensor(g)
        out.append(t)
    return out


def _sweep(make_step, make_inputs, options, preset=False, shapes=SHAPES):
    """Runs ``make_step(lib)`` compiled in ember (``options``) and plain in torch over ``shapes``;
    asserts each leaf's ``.grad`` equal after each call (and the outputs)."""
    rng = np.random.default_rng(0)
    t_step, e_step = make_step(torch), ember.compile(make_step(ember), **{"fullgraph": True, **options})
    for shape in shapes:
        arrays = make_inputs(rng, shape)
        grads = [rng.standard_normal(a.shape) if preset and i % 2 == 0 else None for i, a in enumerate(arrays)]
        want, got = _leaves(torch, arrays, grads), _leaves(ember, arrays, grads)
        w_out, g_out = t_step(*want), e_step(*got)
        if w_out is not None:
            np.testing.assert_allclose(g_out.detach().numpy(), w_out.detach().numpy(), rtol=1e-6, atol=1e-8)
        for i, (w, g) in enumerate(zip(want, got)):
            assert (g.grad is None) == (w.grad is None), (shape, i)
            if w.grad is not None:
                np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-6, atol=1e-8,
                                           err_msg=f"input {i}'s .grad at {shape}, {options}")
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), err_msg=f"input {i} at {shape}")


def _product(lib):
    def step(x, w):
        (x * w).sum().backward()
    return step


def _columns(rng, shape):
    return [rng.standard_normal(shape), rng.standard_normal(shape[1])]


@pytest.mark.parametrize("options, preset", list(zip(MODES, [False, True, True, False])))
def test_an_input_of_one_dynamic_dim_gets_its_own_gradient_once(options, preset):
    _sweep(_product, _columns, options, preset)


def test_the_issue_example_values():
    run = ember.compile(_product(ember), fullgraph=True)
    for shape in [(2, 3), (3, 4), (4, 5)]:
        x0 = np.arange(np.prod(shape), dtype=float).reshape(shape) + 1
        x = ember.tensor(x0, requires_grad=True)
        w = ember.tensor(10.0 ** np.arange(shape[1]), requires_grad=True)
        run(x, w)
        assert w.grad.tolist() == x0.sum(0).tolist()
        assert x.grad.tolist() == [(10.0 ** np.arange(shape[1])).tolist()] * shape[0]


def _scalar_and_rows(lib):
    def step(x, s, b):  # s: no dynamic dim at all; b: the rows' size only
        y = (x * s + b[:, None]).tanh()
        (y.square().sum() + (s * b).sum()).backward()
        return y
    return step


def _scalar_rows_inputs(rng, shape):
    return [rng.standard_normal(shape), rng.standard_normal(()), rng.standard_normal(shape[0])]


@pytest.mark.parametrize("options", MODES[:3])
def test_a_scalar_input_and_an_input_of_the_other_dim(options):
    _sweep(_scalar_and_rows, _scalar_rows_inputs, options, preset=True)


class _SGD:
    """torch's SGD with momentum written out (torch.optim's first use imports torch._dynamo: 3 s)."""

    def __init__(self, params, lr, momentum):
        self.params, self.lr, self.momentum, self.bufs = params, lr, momentum, [None] * len(params)

    def step(self):
        with torch.no_grad():
            for i, p in enumerate(self.params):
                b = self.bufs[i] = p.grad.clone() if self.bufs[i] is None else self.bufs[i] * self.momentum + p.grad
                p -= self.lr * b


def test_an_optimizer_step_in_the_same_function():
    def run(lib):
        rng = np.random.default_rng(3)
        w, u = (lib.tensor(rng.standard_normal(4), requires_grad=True) for _ in range(2))
        opt = (lib.optim.SGD if lib is ember else _SGD)([w], lr=0.1, momentum=0.9)

        def step(x, u, v):  # u: an input of no dynamic dim, its .grad summed over the calls
            ((x * w * u).sum() + (x.sum(1) * v).sum()).backward()
            opt.step()
        fn = ember.compile(step, fullgraph=True, backend="eager") if lib is ember else step
        out = []
        for b in (2, 3, 5, 5, 7, 3):
            x, v = lib.tensor(rng.standard_normal((b, 4))), lib.tensor(rng.standard_normal(b), requires_grad=True)
            fn(x, u, v)
            out.append([t.detach().numpy().copy() for t in (w, w.grad, u, u.grad, v.grad)])
        return out
    for b, want, got in zip((2, 3, 5, 5, 7, 3), run(torch), run(ember)):
        for a, e in zip(got, want):
            np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-8, err_msg=f"batch {b}")


def _norm(kind):
    def make(lib):
        F = lib.nn.functional

        def step(x, w, b):
            n = x.shape[-1:]
            y = {"layer": lambda: F.layer_norm(x, n, w, b),
                 "rms": lambda: F.rms_norm(x, n, w) + b,
                 "batch": lambda: F.batch_norm(x, None, None, w, b, training=True)}[kind]()
            (y * y.detach().cos()).sum().backward()
            return y
        return step
    return make


def _norm_inputs(rng, shape):
    return [rng.standard_normal(shape), rng.standard_normal(shape[1]), rng.standard_normal(shape[1])]


@pytest.mark.parametrize("kind", ["layer", "rms", "batch"])
def test_norms_with_dynamic_true(kind):
    _sweep(_norm(kind), _norm_inputs, {"dynamic": True, "backend": "eager"}, preset=True)


def _grad_update(lib):
    def step(x, w):  # no backward: an update of an input's .grad (in place, then rebound)
        x.grad.add_(1.0)
        x.grad = x.grad * 2
        return x * w
    return step


def test_a_callable_backend_s_first_call_updates_an_input_s_grad_once():
    """The same state (:class:`~ember.compiler.dynamic_ints.State`) sets back what the first call's
    recording wrote before a callable backend runs it again: an input's .grad was updated twice."""
    def backend(gm, inputs):
        return gm.forward
    x0 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    _sweep(_grad_update, lambda rng, shape: [x0, x0[0]], {"backend": backend}, preset=True,
           shapes=[(2, 3), (2, 3)])
