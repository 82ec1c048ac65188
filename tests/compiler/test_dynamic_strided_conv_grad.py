"""Dynamic image sizes through a pooling then a stride-2 convolution: the convolution's input
gradient crops by ``(s0 // 2 - 3) % 2`` (its padding ``s0 // 2 % 2 - 1``), a remainder of a
floor that ``size_fits.fit`` now expresses (``_fit_remainder_of_floor``), so H and W stay
symbols: one graph for every size, as torch.compile(dynamic=True) compiles one. Before, both
were specialised and each new size compiled again."""
import numpy as np
import pytest
import torch

import ember
from ember._dynamo.utils import counters
from ember.compiler.size_fits import fit
from ember.compiler.symbolic import Underdetermined, evaluate, symbol

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def test_fit_expresses_a_remainder_of_a_floor_and_never_guesses_one():
    sizes = list(range(20, 37)) + [52]  # every residue of the periods up to 16
    points = [{"s0": n} for n in sizes]
    crop = fit([-((n // 2 - 3) % 2) for n in sizes], points)
    assert str(crop) == "s0 // 2 % 2 - 1"
    assert all(evaluate(crop, {"s0": n}) == -((n // 2 - 3) % 2) for n in range(6, 200))
    # two symbols, a stride of 3 after a pooling of 2, a positive offset
    pts = [{"s0": a, "s1": b} for a in range(20, 37) for b in (30, 31, 32, 47)]
    value = [(a // 2 + 2 * b + 1) % 3 + 4 for a, b in ((p["s0"], p["s1"]) for p in pts)]
    found = fit(value, pts)
    assert all(evaluate(found, {"s0": a, "s1": b}) == (a // 2 + 2 * b + 1) % 3 + 4
               for a in range(2, 60) for b in range(2, 60))
    few = (16, 17, 18, 19, 32, 33, 34, 35)
    with pytest.raises(Underdetermined):  # s0 // 2 % 2 and s0 // 2 % 4 agree at all of these
        fit([n // 2 % 2 for n in few], [{"s0": n} for n in few])
    assert fit([min(n, 30) % 2 for n in sizes], points) is None  # not periodic
    assert str(symbol("s0") // 2 % 2 - 1) == str(crop)


def _net(lib):
    n = lib.nn
    return n.Sequential(n.Conv2d(3, 4, 3, padding=1), n.ReLU(), n.MaxPool2d(2), n.Conv2d(4, 4, 3, stride=2))


def test_pooling_then_a_stride_2_convolution_compiles_once_over_image_sizes(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "dynamic")
    ember.manual_seed(0)
    model, oracle = _net(ember), _net(torch)
    oracle.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()})
    compiled = ember.compile(lambda x: model(x).relu(), dynamic=True)
    rng = np.random.default_rng(0)
    for h, w in ((20, 21), (25, 23), (30, 34)):  # crops (0, 1), (1, 0), (0, 0): both phases of each
        data = rng.standard_normal((2, 3, h, w)).astype(np.float32)
        x, e, t = (ember.tensor(data, requires_grad=True), ember.tensor(data, requires_grad=True),
                   torch.tensor(data, requires_grad=True))
        got, want, truth = compiled(x), model(e).relu(), oracle(t).relu()
        for out in (got, want, truth):
            out.square().sum().backward()
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy(), err_msg=f"{h, w}")
        np.testing.assert_array_equal(x.grad.numpy(), e.grad.numpy(), err_msg=f"{h, w}")
        np.testing.assert_allclose(got.detach().numpy(), truth.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=f"{h, w}")
    assert counters["stats"]["unique_graphs"] == 1 and not counters["recompiles"]
    err = capfd.readouterr().err
    assert "s2 = x.size(2) in" in err and "s3 = x.size(3) in" in err and "specialising s2" not in err, err
