"""ember.utils.memory_footprint: bytes by role of one training step, checked against closed
forms and against what PyTorch stores (its optimizer state, and the tensors its autograd graph
saves, read with saved_tensors_hooks)."""
import gc

import pytest
import torch

import ember
from ember.utils.memory import MemoryFootprint, format_bytes, memory_footprint

LINEAR_PARAMS = (1000 * 1000 + 1000) * 4  # Linear(1000, 1000) in float32: 4,004,000 bytes


@pytest.fixture(autouse=True)
def no_cycle_collection():
    # Garbage from earlier tests, collected halfway through a test, would move the counts.
    gc.disable()
    yield
    gc.enable()


def torch_storage_bytes(tensors):
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
                for t in tensors if isinstance(t, torch.Tensor)}
    return sum(storages.values())


def torch_state(optimizer):
    """PyTorch's optimizer state in bytes, in total and by state name."""
    by_name = {}
    for state in optimizer.state.values():
        for name, value in state.items():
            by_name.setdefault(name, []).append(value)
    return (torch_storage_bytes(v for values in by_name.values() for v in values),
            {name: torch_storage_bytes(values) for name, values in by_name.items()})


def torch_activations(model, x):
    """Bytes of the tensors PyTorch's graph saves that did not exist before the forward pass,
    plus the output: the same quantity memory_footprint calls activations."""
    before = {t.untyped_storage().data_ptr()
              for t in [x, *model.parameters(), *model.buffers()]}
    saved = {}

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in before:
            saved[storage.data_ptr()] = storage.nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    saved[out.untyped_storage().data_ptr()] = out.untyped_storage().nbytes()
    return sum(saved.values())


def step_both(make_optimizer):
    """One step of Linear(1000, 1000) on a batch of 8 in both libraries; the two reports."""
    reports = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = lib.nn.Linear(1000, 1000)
        optimizer = make_optimizer(lib, model.parameters())
        batch = lib.randn(8, 1000)
        if lib is ember:
            reports.append(memory_footprint(model, optimizer, batch))
        else:
            model(batch).sum().backward()
            optimizer.step()
            reports.append((torch_storage_bytes(model.parameters()),
                            torch_storage_bytes(p.grad for p in model.parameters()),
                            *torch_state(optimizer)))
    return reports


def test_adam_holds_two_buffers_per_parameter_and_a_step_counter():
    report, (params, grads, state, state_by_name) = step_both(lambda lib, p: lib.optim.Adam(p))
    assert report.parameters == params == LINEAR_PARAMS
    assert report.gradients == grads == LINEAR_PARAMS
    # exp_avg and exp_avg_sq per parameter, and a 0-d float32 step per parameter tensor.
    assert report.optimizer_state == state == 2 * LINEAR_PARAMS + 2 * 4
    assert report.optimizer_state_by_name == state_by_name == {
        "step": 8, "exp_avg": LINEAR_PARAMS, "exp_avg_sq": LINEAR_PARAMS}
    assert report.activations == 8 * 1000 * 4  # Linear saves its input and weight: only the output is new
    assert report.buffers == 0
    assert report.total == 4 * LINEAR_PARAMS + 8 + 8 * 1000 * 4


@pytest.mark.parametrize("make, buffers", [
    (lambda lib, p: lib.optim.Adam(p, amsgrad=True), 3),
    (lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9), 1),
    (lambda lib, p: lib.optim.SGD(p, lr=0.1), 0),
])
def test_optimizer_state_matches_what_pytorch_stores(make, buffers):
    report, (params, grads, state, state_by_name) = step_both(make)
    assert report.optimizer_state == state
    assert report.optimizer_state - report.optimizer_state_by_name.get("step", 0) == buffers * params
    assert report.optimizer_state_by_name == state_by_name


def mlp(nn):
    return nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Linear(30, 5))


def deep(nn):
    return nn.Sequential(nn.Linear(20, 30), nn.Tanh(), nn.Linear(30, 30), nn.Sigmoid(),
                         nn.Linear(30, 30), nn.GELU(), nn.Linear(30, 5))


def batchnorm(nn):
    return nn.Sequential(nn.Linear(20, 30), nn.BatchNorm1d(30), nn.ReLU(), nn.Linear(30, 5))


def convolution(nn):
    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 7 * 7, 10))


@pytest.mark.parametrize("build, shape", [(mlp, (16, 20)), (deep, (16, 20)), (batchnorm, (16, 20)),
                                          (convolution, (4, 3, 16, 16))])
def test_activations_are_the_bytes_pytorch_saves_for_backward(build, shape):
    torch.manual_seed(0)
    expected = torch_activations(build(torch.nn), torch.randn(*shape))
    report = memory_footprint(build(ember.nn), None, ember.randn(*shape))
    assert report.activations == expected


def test_max_pooling_saves_byte_window_positions_where_pytorch_saves_int64_indices():
    model = ember.nn.Sequential(ember.nn.Conv2d(3, 8, 3), ember.nn.ReLU(), ember.nn.MaxPool2d(2),
                                ember.nn.Flatten(), ember.nn.Linear(8 * 7 * 7, 10))
    relu, positions, pooled, out = 4 * 8 * 14 * 14 * 4, 4 * 8 * 7 * 7 * 1, 4 * 8 * 7 * 7 * 4, 4 * 10 * 4
    assert memory_footprint(model, None, ember.randn(4, 3, 16, 16)).activations == (
        relu + positions + pooled + out)


def test_buffers_and_tuple_batches():
    class TwoInputs(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = ember.nn.BatchNorm1d(30)

        def forward(self, a, b):
            return self.norm(a * b)
    report = memory_footprint(TwoInputs(), None, (ember.randn(16, 30), ember.randn(16, 30)))
    expected = torch_storage_bytes(torch.nn.BatchNorm1d(30).buffers())
    assert report.buffers == expected == 2 * 30 * 4 + 8  # running mean/var and an int64 counter
    assert report.parameters == 2 * 30 * 4
    assert report.gradients == 2 * 30 * 4


def test_shared_parameters_are_counted_once():
    layer = ember.nn.Linear(10, 10)
    model = ember.nn.Sequential(layer, ember.nn.Tanh(), layer)
    report = memory_footprint(model, None, ember.randn(2, 10))
    assert report.parameters == report.gradients == 110 * 4


def test_without_a_batch_it_measures_the_objects_as_they_are():
    model = ember.nn.Linear(1000, 1000)
    optimizer = ember.optim.Adam(model.parameters())
    fresh = memory_footprint(model, optimizer)
    assert (fresh.parameters, fresh.gradients, fresh.optimizer_state) == (LINEAR_PARAMS, 0, 0)
    assert fresh.activations is None and fresh.peak is None
    assert fresh.total == LINEAR_PARAMS
    model(ember.randn(2, 1000)).sum().backward()
    optimizer.step()
    after = memory_footprint(model, optimizer)
    assert (after.gradients, after.optimizer_state) == (LINEAR_PARAMS, 2 * LINEAR_PARAMS + 8)


def test_peak_is_the_step_high_water_mark_and_the_global_peak_survives():
    model = ember.nn.Linear(1000, 1000)
    optimizer = ember.optim.Adam(model.parameters())
    batch = ember.randn(8, 1000)
    before = ember.memory_allocated()
    big = ember.empty(10_000_000)  # 40 MB, more than the step will reach
    del big
    outer_peak = ember.max_memory_allocated()
    report = memory_footprint(model, optimizer, batch)
    # The output is gone by the optimizer step, which is the high point: gradients and state.
    assert report.peak - before == LINEAR_PARAMS + 2 * LINEAR_PARAMS + 8
    assert ember.max_memory_allocated() == outer_peak
    assert ember.memory_allocated() - before == LINEAR_PARAMS + 2 * LINEAR_PARAMS + 8


def test_a_model_that_returns_no_tensor_is_refused():
    class Pair(ember.nn.Module):
        def forward(self, x):
            return x, x
    with pytest.raises(TypeError, match="returns a Tensor, got tuple"):
        memory_footprint(Pair(), None, ember.randn(3, requires_grad=True))


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1023 B"), (1024, "1.00 KiB"),
                                     (LINEAR_PARAMS, "3.82 MiB"), (3 * 2 ** 30, "3.00 GiB"),
                                     (2 ** 41, "2.00 TiB")])
def test_format_bytes(n, text):
    assert format_bytes(n) == text


def test_report_table():
    report = MemoryFootprint(parameters=LINEAR_PARAMS, buffers=0, gradients=LINEAR_PARAMS,
                             optimizer_state=2 * LINEAR_PARAMS + 8,
                             optimizer_state_by_name={"step": 8, "exp_avg": LINEAR_PARAMS,
                                                      "exp_avg_sq": LINEAR_PARAMS},
                             activations=32000, peak=None)
    lines = str(report).splitlines()
    assert lines[0].split() == ["category", "bytes"]
    assert lines[1].split() == ["parameters", "4,004,000", "3.82", "MiB"]
    assert lines[4].split() == ["optimizer", "state", "8,008,008", "7.64", "MiB"]
    assert lines[5].split() == ["step", "8", "8", "B"]
    assert lines[8].split() == ["activations", "32,000", "31.25", "KiB"]
    assert lines[9].split() == ["total", "16,048,008", "15.30", "MiB"]
    assert lines[10].split() == ["peak", "during", "the", "step", "-"]
    assert lines[11] == "optimizer state = 2.00 x parameters"
    assert ember.utils.memory_footprint is memory_footprint


def test_docstring_examples_run():
    import doctest
    import ember.utils.memory
    result = doctest.testmod(ember.utils.memory)
    assert result.attempted >= 3 and result.failed == 0
