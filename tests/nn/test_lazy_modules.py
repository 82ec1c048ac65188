"""Lazy modules against torch 2.13: printed forms before and after the first forward, the
class each becomes, parameter shapes and values (same seed, same draws), state_dict and
load_state_dict before initialization, an optimizer built before the first forward, and the
errors of uninitialized parameters (class and message)."""
import copy
import io

import numpy as np
import pytest
import torch

import ember

LAYERS = [  # (class, args, kwargs, input shape)
    ("LazyLinear", (3,), {}, (4, 5)),
    ("LazyLinear", (3,), {"bias": False}, (2, 6, 5)),
    ("LazyConv1d", (6, 3), {"padding": 1}, (2, 4, 9)),
    ("LazyConv1d", (6, 3), {}, (4, 9)),  # unbatched
    ("LazyConv2d", (6, 3), {"groups": 2, "stride": 2}, (2, 4, 9, 9)),
    ("LazyConvTranspose1d", (6, 3), {}, (2, 4, 9)),
    ("LazyConvTranspose2d", (6, 3), {"output_padding": 1, "stride": 2}, (2, 4, 5, 5)),
    ("LazyConv3d", (6, 2), {"groups": 2}, (2, 4, 3, 4, 4)),
    ("LazyConvTranspose3d", (6, 2), {"stride": 2}, (4, 3, 3, 3)),  # unbatched
    ("LazyBatchNorm1d", (), {}, (3, 4)),
    ("LazyBatchNorm2d", (), {"affine": False}, (3, 4, 2, 2)),
    ("LazyBatchNorm3d", (), {"bias": False}, (3, 4, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 4, 5)),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 4, 3, 3)),
]


def snapshot(lib, name, args, kwargs, shape):
    lib.manual_seed(0)
    m = getattr(lib.nn, name)(*args, **kwargs)
    before = (repr(m), [(k, type(v).__name__, repr(v)) for k, v in m.named_parameters()],
              [(k, type(v).__name__) for k, v in m.named_buffers()], m.has_uninitialized_params(),
              [(k, repr(v)) for k, v in m.state_dict().items() if "num_batches" not in k])
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    y = m(x)
    after = (repr(m), type(m).__name__, type(m).__module__.replace("torch", "ember"),
             [(k, type(v).__name__, tuple(v.shape)) for k, v in m.named_parameters()],
             [(k, tuple(v.shape)) for k, v in m.named_buffers()], hasattr(m, "_initialize_hook"))
    return before, after, y.detach().numpy(), {k: v.numpy() for k, v in m.state_dict().items()}


@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: layer[0] + str(layer[3]))
def test_a_lazy_layer_becomes_its_class_as_torchs(layer):
    e, t = snapshot(ember, *layer), snapshot(torch, *layer)
    assert e[0] == t[0]
    assert e[1] == t[1]
    if "Norm" in layer[0]:  # no random draws: the values too
        np.testing.assert_allclose(e[2], t[2], rtol=1e-5, atol=1e-6)
        for k in t[3]:
            np.testing.assert_allclose(e[3][k], t[3][k], rtol=1e-6)


def test_optimizer_before_the_first_forward_and_loading_before_it():
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.ReLU(), lib.nn.LazyLinear(1))
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        params = list(m.parameters())
        m(lib.ones(2, 3)).sum().backward()
        w = m[0].weight.detach().clone()
        opt.step()
        assert [p is q for p, q in zip(params, m.parameters())] == [True] * 4
        assert not np.allclose(w.numpy(), m[0].weight.detach().numpy())
        fresh = lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.ReLU(), lib.nn.LazyLinear(1))
        assert repr(fresh.load_state_dict(m.state_dict())) == "<All keys matched successfully>"
        assert [type(x).__name__ for x in fresh] == ["LazyLinear", "ReLU", "LazyLinear"]
        assert tuple(fresh[0].weight.shape) == (4, 3)
        np.testing.assert_array_equal(fresh(lib.ones(1, 3)).detach().numpy(), m(lib.ones(1, 3)).detach().numpy())
        assert type(fresh[0]).__name__ == "Linear"


def test_dtype_chosen_before_the_first_forward_and_deepcopy():
    for lib in (ember, torch):
        m = lib.nn.LazyLinear(2).double()
        c = copy.deepcopy(m)
        assert c(lib.ones(1, 3, dtype=lib.float64)).dtype == lib.float64
        assert m.weight.dtype == lib.float64 and repr(m.weight) == "<UninitializedParameter>"


def test_errors_of_uninitialized_parameters():
    for lib in (ember, torch):
        m = lib.nn.LazyLinear(3)
        with pytest.raises(RuntimeError, match="^Can't access the shape of an uninitialized parameter or buffer"):
            m.weight.shape
        with pytest.raises(ValueError, match="^Attempted to use an uninitialized parameter in .*"
                                             "`torch.nn.parameter.UninitializedParameter` objects"):
            m.weight + 1
        with pytest.raises(RuntimeError, match="^Can't access the shape of an uninitialized parameter"):
            lib.nn.Linear(2, 3).load_state_dict(m.state_dict())
        with pytest.raises(RuntimeError, match="^Expected 2D \\(unbatched\\) or 3D \\(batched\\) input to "
                                               "LazyConv1d, but got input of size: torch.Size\\(\\[2\\]\\)"):
            lib.nn.LazyConv1d(2, 3)(lib.ones(2))
        with pytest.raises(ValueError, match="^in_channels must be divisible by groups$"):
            lib.nn.LazyConv1d(4, 3, groups=2)(lib.ones(1, 3, 5))
        with pytest.raises(NotImplementedError, match="^initialize_parameters is not implemented for LazyLinear$"):
            lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(m)
        b = lib.nn.parameter.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and b.requires_grad is False
        b.materialize((2, 3))
        assert type(b) is lib.Tensor and tuple(b.shape) == (2, 3)


def test_saving_an_uninitialized_state_dict_as_torch_writes_it():
    for save, load in ((ember.save, torch.load), (torch.save, ember.load), (ember.save, ember.load)):
        lib = ember if save is ember.save else torch
        buffer = io.BytesIO()
        save(lib.nn.LazyLinear(3).state_dict(), buffer)
        buffer.seek(0)
        loaded = load(buffer, weights_only=False)
        assert [(k, repr(v)) for k, v in loaded.items()] == [("weight", "<UninitializedParameter>"),
                                                              ("bias", "<UninitializedParameter>")]
        buffer.seek(0)
        with pytest.raises(Exception, match="Weights only load failed"):
            load(buffer)


def test_a_compiled_lazy_model_runs_its_first_call_eagerly():
    """ember.compile of a model with lazy modules raised the uninitialized parameter's ValueError
    (reading the parameters' shapes for the guards); torch.compile runs it. The first call makes
    the parameters eagerly, the next ones are captured and equal eager."""
    ember.manual_seed(0)
    net = ember.nn.Sequential(ember.nn.LazyLinear(4), ember.nn.ReLU(), ember.nn.LazyLinear(1))
    x = ember.randn(8, 3)
    compiled = ember.compile(net)
    first = compiled(x)
    assert type(net[0]) is ember.nn.Linear and net[2].weight.shape == (1, 4)
    for _ in range(2):
        np.testing.assert_allclose(compiled(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(first.detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
