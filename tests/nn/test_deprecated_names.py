"""Names programs written for PyTorch before 0.4 call and torch still accepts with a
FutureWarning: ``nn.init.xavier_uniform`` & co. (the initialisers without their trailing
underscore) and ``nn.utils.clip_grad_norm``; and ``Module.bfloat16``. Against torch 2.13:
the warning's class, text and place (the caller's line), the values drawn from one seed."""
import warnings

import pytest
import torch

import ember

INITIALISERS = ["uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                "kaiming_normal", "orthogonal", "sparse", "dirac"]


def _call(L, name):
    L.manual_seed(0)
    args = {"constant": (0.5,), "sparse": (0.1,)}.get(name, ())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if name == "clip_grad_norm":
            layer = L.nn.Linear(2, 2)
            layer.weight.grad, layer.bias.grad = L.ones(2, 2), L.ones(2)
            out = [L.nn.utils.clip_grad_norm(layer.parameters(), 1.0), layer.weight.grad]
        else:
            out = getattr(L.nn.init, name)(L.empty(3, 4, 3) if name == "dirac" else L.empty(3, 4), *args)
    return out, [(w.category, str(w.message), w.filename) for w in caught]


@pytest.mark.parametrize("name", INITIALISERS + ["clip_grad_norm"])
def test_deprecated_spellings_warn_and_act_as_torchs(name):
    (got, got_warnings), (expected, expected_warnings) = _call(ember, name), _call(torch, name)
    assert got_warnings == expected_warnings and len(got_warnings) == 1
    assert got_warnings[0][2] == __file__
    for g, e in zip(got if isinstance(got, list) else [got], expected if isinstance(expected, list) else [expected]):
        assert g.shape == e.shape and g.dtype.__repr__().split(".")[-1] == e.dtype.__repr__().split(".")[-1]
        assert torch.allclose(torch.as_tensor(g.numpy()), e, rtol=1e-6, atol=1e-6)


def test_module_bfloat16_casts_floating_parameters_and_buffers():
    results = []
    for L in (torch, ember):
        model = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.BatchNorm1d(3))
        assert model.bfloat16() is model
        results.append([(name, str(t.dtype).split(".")[-1]) for name, t in model.state_dict().items()])
    assert results[1] == results[0]
