"""The meta device against torch 2.13's: factories, shapes and dtypes through ops, printing,
models built under ``with device("meta")`` and given storage by ``to_empty``, and the errors
where a value would be read."""
import copy

import numpy as np
import pytest
import torch

import ember


def _both(fn):
    return [fn(lib) for lib in (torch, ember)]


def _form(t):
    return repr(t).replace("ember.", "torch.")


FACTORIES = {
    "empty": lambda lib: lib.empty(2, 3, device="meta"),
    "zeros_int": lambda lib: lib.zeros(3, dtype=lib.int64, device="meta"),
    "ones_grad": lambda lib: lib.ones(2, requires_grad=True, device=lib.device("meta")),
    "full": lambda lib: lib.full((2, 2), 7.0, dtype=lib.float64, device="meta"),
    "randn": lambda lib: lib.randn(4, 5, device="meta"),
    "randint": lambda lib: lib.randint(0, 5, (3,), device="meta"),
    "arange": lambda lib: lib.arange(5, device="meta"),
    "eye": lambda lib: lib.eye(3, dtype=lib.float64, device="meta"),
    "tensor": lambda lib: lib.tensor([1, 2], device="meta"),
    "empty_0": lambda lib: lib.empty(0, device="meta"),
    "scalar": lambda lib: lib.zeros((), device="meta"),
    "to_meta": lambda lib: lib.randn(2, 2, dtype=lib.float64).to("meta"),
    "like": lambda lib: lib.zeros_like(lib.empty(3, 4, device="meta"), dtype=lib.float16),
    "new": lambda lib: lib.empty(3, device="meta").new_ones(2, 5),
    "rand_like": lambda lib: lib.rand_like(lib.empty(3, device="meta")),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_make_meta_tensors_printed_as_torch(name):
    t, e = _both(FACTORIES[name])
    assert e.is_meta and e.device == ember.device("meta") and str(e.device) == "meta"
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    assert _form(e) == _form(t)


OPS = {
    "matmul_relu_sum": lambda lib, x, y: (x @ y.T).relu().sum(0),
    "broadcast_promote": lambda lib, x, y: x[:, None, :].to(lib.float64) * lib.arange(3, device="meta")[:, None],
    "int_times_float": lambda lib, x, y: lib.ones(4, 5, dtype=lib.int32, device="meta") * 2.5 + x.mean(),
    "views": lambda lib, x, y: x.t()[1:, ::2].reshape(-1).unsqueeze(0).expand(3, 8),
    "softmax_logsoftmax": lambda lib, x, y: x.softmax(-1) + lib.nn.functional.log_softmax(y, 0),
    "max_dim": lambda lib, x, y: x.max(dim=1).indices,
    "cat_stack": lambda lib, x, y: lib.cat([lib.stack([x, y]), y[None]], 0),
    "conv2d": lambda lib, x, y: lib.nn.functional.conv2d(x.reshape(1, 1, 4, 5), lib.empty(6, 1, 3, 3, device="meta"),
                                                        padding=1, stride=2),
    "layer_norm": lambda lib, x, y: lib.nn.functional.layer_norm(x, (5,)),
    "embedding_cross_entropy": lambda lib, x, y: lib.nn.functional.cross_entropy(
        lib.nn.functional.embedding(lib.zeros(4, dtype=lib.long, device="meta"), y), lib.zeros(4, dtype=lib.long,
                                                                                              device="meta")),
    "index_int": lambda lib, x, y: x[lib.zeros(2, dtype=lib.long, device="meta")],
    "comparison": lambda lib, x, y: (x > y).any(1),
    "cpu_scalar": lambda lib, x, y: x + lib.tensor(2.0),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_shapes_and_dtypes_go_through_ops_without_data(name):
    def run(lib):
        x = lib.empty(4, 5, device="meta", requires_grad=True)
        y = lib.empty(4, 5, device="meta")
        return OPS[name](lib, x, y)
    t, e = _both(run)
    assert e.is_meta
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    assert e.requires_grad == t.requires_grad


def test_backward_on_meta_gives_meta_gradients():
    for lib in (torch, ember):
        x = lib.empty(2, 3, device="meta", requires_grad=True)
        (x * 2).sum().backward()
        assert x.grad.is_meta and tuple(x.grad.shape) == (2, 3)


def test_reading_values_raises_as_torch():
    reads = {
        "item": (lambda x: x[0, 0].item(), RuntimeError, "Tensor.item\\(\\) cannot be called on meta tensors"),
        "float": (lambda x: float(x[0, 0]), RuntimeError, "cannot be called on meta tensors"),
        "bool": (lambda x: bool(x[0, 0]), RuntimeError, "cannot be called on meta tensors"),
        "numpy": (lambda x: x.numpy(), TypeError, "can't convert meta device type tensor to numpy"),
        "tolist": (lambda x: x.tolist(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
        "cpu": (lambda x: x.cpu(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
        "to_cpu": (lambda x: x.to("cpu"), NotImplementedError, "Cannot copy out of meta tensor"),
        "mix": (lambda x: x + ember.ones(2, 3) if isinstance(x, ember.Tensor) else x + torch.ones(2, 3),
                RuntimeError, "Tensor on device cpu is not on the expected device meta!"),
        "mask": (lambda x: x[x > 0], NotImplementedError, ""),
        "into_cpu": (lambda x: (ember.zeros(2, 3) if isinstance(x, ember.Tensor) else torch.zeros(2, 3)).copy_(x),
                     NotImplementedError, "Cannot copy out of meta tensor"),
    }
    for name, (read, error, message) in reads.items():
        for lib in (torch, ember):
            x = lib.empty(2, 3, device="meta")
            with pytest.raises(error, match=message):
                read(x)
    with pytest.raises(TypeError, match="meta"):
        np.asarray(ember.empty(2, device="meta"))


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.LayerNorm(16), lib.nn.GELU(), lib.nn.Unflatten(1, (1, 16)),
                             lib.nn.Conv1d(1, 2, 3), lib.nn.Flatten(), lib.nn.Linear(28, 3), lib.nn.BatchNorm1d(3))


def test_a_model_built_on_meta_gets_storage_with_to_empty_and_loads_weights():
    for lib in (torch, ember):
        with lib.device("meta"):
            model = _net(lib)
        assert all(p.is_meta for p in model.parameters()) and all(b.is_meta for b in model.buffers())
        assert type(model[0].weight).__name__ == "Parameter"
        assert tuple(model(lib.empty(5, 6, device="meta")).shape) == (5, 3)
        assert not lib.ones(2).is_meta  # the block is over
    ember.manual_seed(0)
    reference = _net(ember).eval()
    with ember.device("meta"):
        model = _net(ember)
    model.to_empty(device="cpu")
    assert all(not p.is_meta for p in model.parameters()) and type(model[0].weight).__name__ == "Parameter"
    model.load_state_dict(reference.state_dict())
    x = ember.randn(4, 6)
    np.testing.assert_array_equal(model.eval()(x).detach().numpy(), reference(x).detach().numpy())
    # torch records the move (ToCopyBackward0); ember's meta copy is a leaf that requires grad
    assert _form(model[0].weight.to("meta").detach()) == _form(torch.nn.Linear(6, 16).weight.to("meta").detach())


def test_module_to_meta_is_a_stateless_copy_for_functional_call():
    """The model-ensembling tutorial's idiom: a deep copy moved to meta, called with stacked
    parameters by functional_call (here one model's)."""
    ember.manual_seed(0)
    models = [ember.nn.Linear(3, 2) for _ in range(3)]
    base = copy.deepcopy(models[0]).to("meta")
    assert base.weight.is_meta and not models[0].weight.is_meta
    x = ember.randn(4, 3)
    out = ember.func.functional_call(base, dict(models[1].named_parameters()), (x,))
    np.testing.assert_array_equal(out.detach().numpy(), models[1](x).detach().numpy())


def test_default_device_and_in_place_ops():
    ember.set_default_device("meta")
    try:
        t = ember.ones(2)
        assert t.is_meta and ember.get_default_device() == ember.device("meta")
    finally:
        ember.set_default_device(None)
    assert not ember.ones(2).is_meta
    x = ember.empty(3, 4, device="meta")
    version = x._version
    x.normal_()
    x.add_(1).mul_(ember.empty(4, device="meta"))
    assert x.is_meta and x._version == version + 3
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        x + ember.empty(5, device="meta")


def test_a_training_mode_forward_with_dropout_runs_on_meta():
    # shape inference of a model built under ``with device("meta")``: dropout's mask was drawn
    # on the CPU, and multiplying it into a meta tensor raised "not on the expected device meta";
    # trunc_normal_ and orthogonal_ read a meta tensor's values (RuntimeError, TypeError)
    def forward(lib):
        lib.manual_seed(0)
        with lib.device("meta"):  # its initialisation draws nothing (ember's moved the generator)
            layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, batch_first=True)
            lib.nn.init.trunc_normal_(layer.linear1.weight, std=0.02)  # (ViT's; tested the values)
            lib.nn.init.orthogonal_(layer.linear2.weight)  # (read the values to NumPy)
        x = lib.ones(2, 3, 8, device="meta")
        outs = [layer(x), lib.nn.functional.dropout(x.transpose(0, 1), 0.5),
                lib.nn.functional.dropout2d(x.unsqueeze(-1), 0.5), lib.nn.functional.dropout(x.clone(), 0.5, inplace=True)]
        return [(o.device.type, tuple(o.shape), str(o.dtype).split(".")[1]) for o in outs] + [lib.rand(2).tolist()]
    want, got = _both(forward)
    assert got == want and got[0] == ("meta", (2, 3, 8), "float32")  # (and no draw was made)


@pytest.mark.parametrize("draw", [
    lambda lib, g: lib.randn(3, 2), lambda lib, g: lib.rand(3), lambda lib, g: lib.randint(0, 3, (3,)),
    lambda lib, g: lib.randperm(4), lambda lib, g: lib.rand_like(lib.empty(3)), lambda lib, g: lib.randn_like(lib.empty(3)),
    lambda lib, g: lib.randint_like(lib.empty(3), 5), lambda lib, g: lib.randn(3, generator=g),
    lambda lib, g: lib.randn(3, device="cpu"),  # a CPU draw inside the context: this one moves it
    lambda lib, g: lib.get_rng_state(),  # a CPU tensor (ember's was a meta one: restoring it gave zeros)
])
def test_random_factories_on_meta_leave_the_generators_as_torchs(draw):
    def after(lib):
        lib.manual_seed(0)
        g = lib.Generator().manual_seed(1)
        with lib.device("meta"):
            out = draw(lib, g)
        return out.device.type, tuple(out.shape), lib.rand(2).tolist(), lib.rand(2, generator=g).tolist()
    want, got = _both(after)
    assert got == want
