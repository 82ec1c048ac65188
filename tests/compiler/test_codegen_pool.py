"""The C backend's max-pooling kernels (MaxPoolIndices, MaxPool, MaxPoolBackward) against eager
ember's (which follow torch's CPU kernels): values, argmax and gradient of a compiled step over
overlapping windows, padding, dilation, ceil_mode, float64, ties, NaN and -inf."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

CASES = {  # name: (x shape, kernel, stride, padding, dilation, ceil_mode, dtype)
    "lenet": ((4, 6, 8, 8), 2, 2, 0, 1, False, np.float32),
    "overlapping_padded": ((2, 3, 9, 7), 3, 2, 1, 1, False, np.float32),
    "dilated_ceil_float64": ((2, 2, 10, 11), (2, 3), (2, 1), (1, 1), (2, 1), True, np.float64),
    "three_dims": ((5, 7, 6), 2, 1, 0, 1, True, np.float32),
}


pytestmark = pytest.mark.usefixtures("fresh_compiler")


@pytest.mark.parametrize("case", list(CASES))
def test_pool_kernels_equal_eager(case, monkeypatch, capsys):
    shape, kernel, stride, padding, dilation, ceil_mode, dtype = CASES[case]
    rng = np.random.default_rng(0)
    x0 = rng.integers(-3, 4, shape).astype(dtype)  # small integers: many ties
    flat = x0.reshape(-1)
    flat[rng.choice(flat.size, 6, replace=False)] = np.nan
    flat[rng.choice(flat.size, 6, replace=False)] = -np.inf
    x0[..., :2, :2] = -np.inf  # whole windows of -inf
    geometry = dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=ceil_mode)
    out_shape = F.max_pool2d(ember.tensor(x0), **geometry).shape
    r = ember.tensor(rng.standard_normal(tuple(out_shape)).astype(dtype))
    results = []
    for compiled in (False, True):
        x = ember.tensor(x0, requires_grad=True)

        def step():
            x.grad = None
            y = F.max_pool2d(x, **geometry)
            (y * r).sum().backward()
            return y
        if compiled:
            monkeypatch.setenv("EMBER_LOGS", "output_code")
            step = ember.compile(step, fullgraph=True)
        for _ in range(3):  # the third call runs the generated C
            y = step()
        results.append((y.detach().numpy(), x.grad.numpy()))
    source = capsys.readouterr().err
    for kind in ("max-pool argmax", "max-pool maximum", "max-pool gradient"):
        assert kind in source, kind
    for mine, eager in zip(results[1], results[0]):
        assert mine.shape == eager.shape and mine.dtype == eager.dtype
        np.testing.assert_array_equal(mine, eager)  # the same picks: exactly equal, NaN included


def test_pool_maximum_equals_torch():
    """The maximum kernel alone (a forward without gradient: no argmax), against torch."""
    torch = pytest.importorskip("torch")
    x0 = np.random.default_rng(1).integers(-2, 3, (2, 3, 9, 9)).astype(np.float32)
    x0[0, 0, 1, 1] = np.nan
    pool = ember.compile(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), fullgraph=True)
    for _ in range(3):
        got = pool(ember.tensor(x0)).numpy()
    want = torch.nn.functional.max_pool2d(torch.tensor(x0), 3, 2, 1, ceil_mode=True).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("geometry", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, dilation=2,
                                                                ceil_mode=True)])
def test_return_indices_are_flat_plane_indices_when_compiled(geometry):
    """``return_indices=True`` gives torch's flat index into each H*W plane on every call (a
    break-it review found the compiled calls returning the position inside the window)."""
    torch = pytest.importorskip("torch")
    x0 = np.random.default_rng(2).standard_normal((2, 3, 9, 8)).astype(np.float32)
    pool = ember.compile(lambda x: F.max_pool2d(x, return_indices=True, **geometry), fullgraph=True)
    want = torch.nn.functional.max_pool2d(torch.tensor(x0), return_indices=True, **geometry)
    for _ in range(3):
        values, indices = pool(ember.tensor(x0))
        np.testing.assert_array_equal(values.numpy(), want[0].numpy())
        np.testing.assert_array_equal(indices.numpy(), want[1].numpy())
