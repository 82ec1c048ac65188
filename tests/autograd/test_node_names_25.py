"""``grad_fn.name()`` of the engine's own nodes keeps torch's C++ namespace (session 25)."""
import pytest

import ember

torch = pytest.importorskip("torch")


def _names(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y[0] = 5  # a write into a view of y: CopySlices
    accumulate = (x * 2).grad_fn.next_functions[0][0]
    return [y.grad_fn.name(), type(y.grad_fn).__name__, accumulate.name(), type(accumulate).__name__]


def test_accumulate_grad_and_copy_slices_are_named_as_torchs():
    assert _names(ember) == _names(torch) == ["torch::autograd::CopySlices", "CopySlices",
                                              "torch::autograd::AccumulateGrad", "AccumulateGrad"]


def test_the_profiler_names_the_accumulation_as_torchs():
    keys = []
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.profiler.profile() as prof:
            (x * 2).sum().backward()
        keys.append({e.key for e in prof.key_averages() if "evaluate_function" in e.key and "Accumulate" in e.key})
    assert keys[0] == keys[1] == {"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"}
