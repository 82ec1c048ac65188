"""autograd.forward_ad (dual numbers) against torch 2.13's forward-mode AD on random inputs:
tangents of pointwise ops, products, reductions, views, softmax, activations, convolution and
losses (broadcasting, non-contiguous inputs), writes in place, printing and errors."""
import numpy as np
import pytest
import torch

import ember


def _pair(rng, shape, dtype="float64"):
    return rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)


CASES = {
    "exp_sin_mul": (lambda lib, x, y: (x.exp() * y.sin()).tanh(), [(3, 4), (4,)]),
    "div_pow_broadcast": (lambda lib, x, y: x / (y * y + 1) + x ** 3, [(2, 3, 4), (3, 1)]),
    "where_clamp_abs": (lambda lib, x, y: lib.where(x > 0, x.abs(), y.clamp(-0.5, 0.5)), [(5,), (5,)]),
    "matmul": (lambda lib, x, y: x @ y, [(3, 4), (4, 2)]),
    "batched_matmul_transposed": (lambda lib, x, y: x.transpose(-1, -2) @ y, [(2, 4, 3), (2, 4, 5)]),
    "linear": (lambda lib, x, w: lib.nn.functional.linear(x, w, w[:, 0]), [(6, 4), (3, 4)]),
    "sum_mean_var": (lambda lib, x, y: x.sum(0) + y.mean(-1, keepdim=True) + x.var(1, keepdim=True).T,
                     [(4, 4), (4, 3)]),
    "max_dim_and_amax": (lambda lib, x, y: x.max(1).values + y.amax(1), [(3, 5), (3, 5)]),
    "norm_logsumexp_cumsum": (lambda lib, x, y: x.norm() + lib.logsumexp(y, 0) + x.cumsum(0).prod(0),
                              [(3, 3), (3, 3)]),
    "views": (lambda lib, x, y: x.t()[1:, ::2].reshape(-1) * y.permute(1, 0).flatten()[:6]
              + x.unsqueeze(0).expand(2, 4, 4)[1, 2:, 0].repeat(3), [(4, 4), (4, 4)]),
    "softmax_log_softmax": (lambda lib, x, y: x.softmax(-1) * lib.nn.functional.log_softmax(y, dim=0),
                            [(3, 5), (3, 5)]),
    "activations": (lambda lib, x, y: lib.nn.functional.gelu(x) + lib.nn.functional.silu(y) + x.relu()
                    + lib.nn.functional.elu(y) + lib.nn.functional.leaky_relu(x, 0.1) + y.sigmoid()
                    + lib.nn.functional.softplus(x), [(4, 6), (4, 6)]),
    "layer_norm": (lambda lib, x, w: lib.nn.functional.layer_norm(x, (5,), w[0], w[1]), [(3, 5), (2, 5)]),
    "conv2d": (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1, stride=2), [(2, 3, 7, 6), (4, 3, 3, 3)]),
    "losses": (lambda lib, x, y: lib.nn.functional.mse_loss(x, y) + lib.nn.functional.smooth_l1_loss(x, y)
               + lib.nn.functional.cross_entropy(x, y.softmax(-1)), [(4, 5), (4, 5)]),
    "cat_stack_index": (lambda lib, x, y: lib.cat([x, y[:2]]).index_select(0, lib.tensor([0, 3]))
                        + lib.stack([x[0], y[1]])[:, [2, 0]].repeat(1, 2), [(2, 4), (3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangents_equal_torch_forward_ad(name):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    arrays = [_pair(rng, s) for s in shapes]
    results = []
    for lib in (torch, ember):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in arrays]
            out = fn(lib, *duals)
            primal, tangent = fw.unpack_dual(out)
            results.append((primal.detach().numpy(), tangent.numpy()))
    (pt, tt), (pe, te) = results
    np.testing.assert_allclose(pe, pt, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(te, tt, rtol=1e-9, atol=1e-11)


def test_one_dual_input_among_plain_ones_and_a_multi_output_op():
    rng = np.random.default_rng(7)
    x, t = _pair(rng, (4, 5))
    w = rng.standard_normal((5, 3))
    results = []
    for lib in (torch, ember):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(t))
            values, indices = (d @ lib.tensor(w)).sort(dim=1)
            results.append((fw.unpack_dual(values).tangent.numpy(), fw.unpack_dual(indices).tangent,
                            fw.unpack_dual(lib.tensor(w) * 2).tangent))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-10)
    assert results[0][1:] == results[1][1:] == (None, None)


def test_a_model_s_parameters_as_dual_tensors_tutorial_style():
    """The forward-mode AD tutorial's two ways: parameters replaced by dual tensors, and
    ``functional_call`` with dual parameters."""
    jvps = []
    for lib in (torch, ember):
        rng = np.random.default_rng(3)
        inp = rng.standard_normal((16, 5)).astype("float32")
        fw = lib.autograd.forward_ad
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
        params = dict(model.named_parameters())
        tangents = {n: lib.tensor(np.full(tuple(p.shape), 0.5, dtype="float32")) for n, p in params.items()}
        with fw.dual_level():
            dual = {n: fw.make_dual(p, tangents[n]) for n, p in params.items()}
            out = lib.func.functional_call(model, dual, (lib.tensor(inp),))
            jvps.append(fw.unpack_dual(out).tangent.detach().numpy())
        layer = lib.nn.Linear(5, 5)
        with fw.dual_level():
            for n, p in dict(layer.named_parameters()).items():
                delattr(layer, n)
                setattr(layer, n, fw.make_dual(lib.ones_like(p), lib.ones_like(p)))
            jvps.append(fw.unpack_dual(layer(lib.tensor(inp))).tangent.numpy())
    np.testing.assert_allclose(jvps[2], jvps[0], rtol=1e-5, atol=1e-5)  # float32 sums
    np.testing.assert_allclose(jvps[3], jvps[1], rtol=1e-5, atol=1e-5)


def test_writes_in_place_update_tangents_as_torch():
    def run(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        t = lib.tensor([1.0, 1.0, 1.0], dtype=lib.float64)
        log = []
        with fw.dual_level():
            d = fw.make_dual(x, t)
            d.mul_(2)
            log.append(t.tolist())            # the given tangent is updated in place
            y = d.clone()
            v = y[:2]
            y.mul_(3)
            log.append(fw.unpack_dual(v).tangent.tolist())  # a view sees its base's write
            z = lib.zeros(3, dtype=lib.float64)
            z[1:] = d[1:] * d[1:]
            log.append(fw.unpack_dual(z).tangent.tolist())
            w = y[1:]
            w.exp_()
            log.append(fw.unpack_dual(y).tangent.tolist())  # a write through a view reaches the base
            with lib.no_grad():
                log.append(fw.unpack_dual(d.sin()).tangent.tolist())  # forward mode ignores no_grad
        log.append(fw.unpack_dual(d).tangent)  # dropped when the level closes
        return log
    expected = run(torch)
    got = run(ember)
    assert got[-1] is None and expected[-1] is None
    for a, b in zip(got[:-1], expected[:-1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_tangent_depends_on_a_primal_that_requires_grad():
    grads = []
    for lib in (torch, ember):
        fw = lib.autograd.forward_ad
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.ones(3, dtype=lib.float64))
            tangent = fw.unpack_dual((d * d).sin()).tangent   # 2x cos(x^2)
            assert tangent.requires_grad
            tangent.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_printed_form_and_unpacked_tuple():
    for lib in (torch, ember):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.25]))
            text = repr(d)
            long = repr(fw.make_dual(lib.ones(2, 3, dtype=lib.float64), lib.ones(2, 3, dtype=lib.float64)).exp())
            unpacked = fw.unpack_dual(d)
            assert unpacked._fields == ("primal", "tangent") and unpacked.primal._base is not None
        assert text == "tensor([1., 2.], tangent=tensor([0.5000, 0.2500]))"
        assert long == ("tensor([[2.7183, 2.7183, 2.7183],\n        [2.7183, 2.7183, 2.7183]], dtype=torch.float64,\n"
                        "       tangent=tensor([[2.7183, 2.7183, 2.7183],\n        [2.7183, 2.7183, 2.7183]], "
                        "dtype=torch.float64))")
        assert repr(d) == "tensor([1., 2.])"


def test_errors_as_torch():
    for lib in (torch, ember):
        fw = lib.autograd.forward_ad
        x = lib.randn(3)
        with pytest.raises(RuntimeError, match="no level exists"):
            fw.make_dual(x, x)
        assert fw.unpack_dual(x).tangent is None
        with fw.dual_level():
            with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given forward gradient "
                                                   r"is of size \[4\]"):
                fw.make_dual(x, lib.randn(4))
            with pytest.raises(ValueError, match="Expected primal to be floating point or complex, but got: "
                                                 "torch.int64"):
                fw.make_dual(lib.arange(3), x)
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
                with fw.dual_level():
                    pass
            a = fw.make_dual(lib.rand(3) + 0.5, lib.ones(3))
            with pytest.raises(NotImplementedError, match="Trying to use forward AD with igamma that does not "
                                                          "support it because it has not been implemented yet"):
                lib.igamma(a, lib.rand(3) + 0.5)


def test_a_custom_function_s_jvp_and_gradcheck_of_forward_mode():
    """The forward-mode tutorial's custom Function: ``jvp`` gives the output's tangent, and
    ``gradcheck(check_forward_ad=True, check_backward_ad=False)`` checks it (a wrong jvp fails)."""
    def make(lib, factor):
        class Exp(lib.autograd.Function):
            calls = 0

            @staticmethod
            def forward(ctx, x):
                ctx.result = lib.exp(x)
                return ctx.result

            @staticmethod
            def jvp(ctx, g):
                Exp.calls += 1
                return factor * g * ctx.result
        return Exp
    rng = np.random.default_rng(5)
    x, t = _pair(rng, (3, 4))
    tangents = []
    for lib in (torch, ember):
        Exp = make(lib, 1.0)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            out = Exp.apply(fw.make_dual(lib.tensor(x, requires_grad=True), lib.tensor(t)))
            tangents.append(fw.unpack_dual(out).tangent.detach().numpy())
        assert Exp.calls == 1
        primal = lib.tensor(x[:2, :2], requires_grad=True)
        assert lib.autograd.gradcheck(Exp.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                      check_undefined_grad=False, check_batched_grad=False)
        assert not lib.autograd.gradcheck(make(lib, 1.5).apply, (primal,), check_forward_ad=True,
                                          check_backward_ad=False, check_undefined_grad=False,
                                          check_batched_grad=False, raise_exception=False)
    np.testing.assert_allclose(tangents[1], tangents[0], rtol=1e-12)
    np.testing.assert_allclose(tangents[1], np.exp(x) * t, rtol=1e-12)
