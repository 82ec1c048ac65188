"""A compiled function returning a view of an input returns that view (compiler/aliases.py), as
torch.compile does: torch 2.13's ``torch.compile`` (inductor and aot_eager, checked by hand when
this was written) returns for each of these cases what its eager mode returns (the same strides,
storage_offset, ``_base`` and ``grad_fn``), so the oracle here is torch's eager result, cheaper
than compiling with inductor in a test. Before, ember returned a row-major copy of the values."""
import numpy as np
import pytest
import torch

import ember
from ember._dynamo.utils import counters

pytestmark = pytest.mark.usefixtures("fresh_compiler")

VIEWS = {
    "stepped": lambda x: x[:, ::2],
    "expand": lambda x: x[:1].expand(3, -1),
    "t": lambda x: x.t(),
    "sliced": lambda x: x[1:],
    "view": lambda x: x.view(2, -1),
    "view_of_view": lambda x: x.t()[1:, ::2],
    "diagonal": lambda x: x.diagonal(),
    "unsqueeze_select": lambda x: x.unsqueeze(1)[..., 2],
    "input_itself": lambda x: x,
    "detached": lambda x: x.detach()[::2],
}


def _layout(t):
    return tuple(t.shape), t.stride(), t.storage_offset()


def _check_view(got, x, want, wx, where):
    """``got`` (ember, of input ``x``) is the view torch's ``want`` (of ``wx``) is."""
    assert _layout(got) == _layout(want), where
    assert (got.data_ptr() - x.data_ptr()) == (want.data_ptr() - wx.data_ptr()), where
    assert got.requires_grad == want.requires_grad, where
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__, where
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy(), err_msg=where)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", list(VIEWS))
def test_a_returned_view_of_an_input_is_that_view_with_eagers_strides_base_and_node(name, requires_grad, backend):
    f = VIEWS[name]
    compiled = ember.compile(f, backend=backend)
    rng = np.random.default_rng(0)
    for call in range(3):  # the first call records; the later ones replay
        data = rng.standard_normal((4, 6)).astype(np.float32)
        x = ember.tensor(data, requires_grad=requires_grad)
        wx = torch.tensor(data, requires_grad=requires_grad)
        got, want, eager = compiled(x), f(wx), f(x)
        where = f"{name} call {call}"
        _check_view(got, x, want, wx, where)
        assert (got._base is x) == (eager._base is x) and (got is x) == (eager is x), where
        if requires_grad and got.requires_grad:
            g = rng.standard_normal(tuple(got.shape)).astype(np.float32)
            got.backward(ember.tensor(g))
            want.backward(torch.tensor(g))
            np.testing.assert_array_equal(x.grad.numpy(), wx.grad.numpy(), err_msg=where)
        else:  # a write through the view reaches the input, as torch's
            with ember.no_grad():
                got.mul_(0) if name != "expand" else got[0].mul_(0)
            with torch.no_grad():
                want.mul_(0) if name != "expand" else want[0].mul_(0)
            np.testing.assert_array_equal(x.detach().numpy(), wx.detach().numpy(), err_msg=where)
    assert counters["stats"]["unique_graphs"] == 1


def test_views_of_a_strided_input_and_of_a_parameter_share_their_bases():
    lin, oracle = ember.nn.Linear(6, 4), torch.nn.Linear(6, 4)
    oracle.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy()) for k, v in lin.state_dict().items()})

    def f(lin, x):
        return x[::2], lin.weight.t()[:, 1:], lin(x).relu(), x
    compiled = ember.compile(lambda x: f(lin, x))
    base = np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32)
    for call in range(3):
        xb, wb = ember.tensor(base + call, requires_grad=True), torch.tensor(base + call, requires_grad=True)
        x, wx = xb.t(), wb.t()  # a transposed input: its views' base is its base
        got, want = compiled(x), f(oracle, wx)
        for k, (g, w) in enumerate(zip(got, want)):
            assert _layout(g) == _layout(w), (call, k)
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)
        assert got[0]._base is xb and got[1]._base is lin.weight and got[3] is x  # (before: a copy of x)
        sum(o.sum() * (k + 1) for k, o in enumerate(got)).backward()
        sum(o.sum() * (k + 1) for k, o in enumerate(want)).backward()
        np.testing.assert_allclose(xb.grad.numpy(), wb.grad.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(lin.weight.grad.numpy(), oracle.weight.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert counters["stats"]["unique_graphs"] == 1


def test_a_view_of_an_input_written_in_place_is_remade_after_the_write():
    def f(lib, x):
        x.add_(1)
        return x[::2], x * 2
    compiled = ember.compile(lambda x: f(ember, x))
    for call in range(3):
        data = np.arange(24, dtype=np.float32).reshape(4, 6) * (call + 1)
        x, wx = ember.tensor(data), torch.tensor(data)
        (got, doubled), (want, _) = compiled(x), f(torch, wx)
        _check_view(got, x, want, wx, f"call {call}")
        assert got._base is x
        np.testing.assert_array_equal(x.numpy(), wx.numpy())
        np.testing.assert_array_equal(doubled.numpy(), (wx * 2).numpy())


def test_a_copying_reshape_stays_a_copy_and_a_dynamic_view_follows_the_sizes():
    f = ember.compile(lambda x: x.t().reshape(-1))  # strides forbid a view: eager copies too
    for _ in range(2):
        x = ember.randn(3, 4)
        y = f(x)
        assert y._base is None and y.stride() == (1,) and not np.shares_memory(y.numpy(), x.numpy())
    g = ember.compile(lambda x: x.view(2, -1)[:, 1:], dynamic=True)
    for n in (4, 6, 8, 10):
        data = np.random.default_rng(n).standard_normal((n, 6)).astype(np.float32)
        x, wx = ember.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        got, want = g(x), wx.view(2, -1)[:, 1:]
        _check_view(got, x, want, wx, f"n={n}")
        assert got._base is x
    assert counters["stats"]["unique_graphs"] == 2 and not counters["recompiles"]
