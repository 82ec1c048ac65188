"""``scatter(..., reduce=)`` and ``scatter_reduce``'s "max"/"min" as torch 2.13 has them.

torch's ``scatter`` takes ``reduce="add"`` or ``"multiply"`` (a tensor ``src`` or a number),
puts the result on its ``NotImplemented`` node (backward: "derivative for aten::scatter is not
implemented") and warns once that the tensor form is deprecated; ember refused "multiply" and
differentiated "add". ``scatter_reduce`` computes "max"/"min" as "amax"/"amin" but its backward
refuses them; ember differentiated them. Compared with torch on the same inputs.
"""
import warnings

import numpy as np
import pytest
import torch

import ember


def _run(L, reduce, number, dtype):
    x = L.tensor([[2., 3., 4.], [1., -2., 5.]], dtype=getattr(L, dtype))
    idx = L.tensor([[0, 1, 0], [2, 2, 1]])
    src = 2.5 if number else L.tensor([[1., 2., 3.], [4., -5., 6.]], dtype=x.dtype)
    if dtype == "float64":
        x.requires_grad_()
        if not number:
            src.requires_grad_()
    try:
        y = x.scatter(1, idx, src, reduce=reduce)
    except RuntimeError as error:
        return "raised", str(error)
    z = x.detach().clone()
    z.scatter_(1, idx, src.detach() if not number else src, reduce=reduce)
    out = [y.detach().numpy().tolist(), z.numpy().tolist(), str(y.dtype).split(".")[1]]
    if y.requires_grad:
        out.append(repr(y).split("grad_fn=")[1])
        out.append(y.grad_fn.name())
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        out.append(str(error.value))
    return out


@pytest.mark.parametrize("reduce", ["add", "multiply", "sum", "mean", "prod", "bogus"])
@pytest.mark.parametrize("number, dtype", [(False, "float64"), (True, "float64"), (False, "int64")])
def test_scatter_reduce_argument_is_torchs(reduce, number, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _run(ember, reduce, number, dtype) == _run(torch, reduce, number, dtype)


def test_tensor_src_warns_once_at_the_users_line():
    ember._ops.args.WARNED_ONCE.discard(ember._ops.scatter_reduce.SCATTER_REDUCE_DEPRECATED)
    x, idx = ember.zeros(3), ember.tensor([0, 0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.scatter(0, idx, ember.ones(2), reduce="add")
        x.scatter(0, idx, ember.ones(2), reduce="multiply")
        x.scatter(0, idx, 2.0, reduce="add")
    assert len(caught) == 1 and caught[0].filename == __file__
    assert "torch.scatter_reduce instead" in str(caught[0].message)


@pytest.mark.parametrize("reduce", ["max", "min", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_max_min_compute_as_amax_amin_and_refuse_backward(reduce, include_self):
    rng = np.random.default_rng(5)
    base, values = rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    idx = rng.integers(0, 4, (3, 5))
    results = []
    for L in (ember, torch):
        src = L.tensor(values, requires_grad=True)
        y = L.tensor(base).scatter_reduce(1, L.tensor(idx), src, reduce, include_self=include_self)
        try:
            y.sum().backward()
            outcome = src.grad.numpy()
        except RuntimeError as error:
            outcome = str(error)
        results.append((y.detach().numpy(), type(y.grad_fn).__name__, outcome))
    (ey, en, eo), (ty, tn, to) = results
    np.testing.assert_allclose(ey, ty)
    assert en == tn == "ScatterReduceBackward0"
    if isinstance(to, str):
        assert eo == to and to.endswith(f"but got {reduce}.")
    else:
        np.testing.assert_allclose(eo, to)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_refusing_backward_raises_at_backward_as_eager(backend):
    """The joint capture meets the refusing node: the graph replays through the dispatcher
    (no recorded backward), so the forward runs and the backward raises eager's error."""
    ember.compiler.reset()
    i = ember.tensor([[0, 1, 0, 1]])
    compiled = ember.compile(lambda x: x.scatter(1, i, 2.0, reduce="multiply") * 3 + x, backend=backend)
    for _ in range(3):
        x = ember.randn(1, 4, requires_grad=True)
        y = compiled(x)
        expected = x.detach().scatter(1, i, 2.0, reduce="multiply") * 3 + x.detach()
        np.testing.assert_allclose(y.detach().numpy(), expected.numpy())
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            y.sum().backward()
