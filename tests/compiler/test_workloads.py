"""The workloads of benchmarks/bench_compile.py capture as one graph each (fullgraph=True) and
compiled give eager's results: losses or sums over steps, the parameters after them, the
tokens and KV caches of generation (the benchmark's rows measure what these tests check)."""
import pathlib
import sys

import numpy as np
import pytest

import ember

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_compile  # noqa: E402


pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _twins(name):
    """The workload's step built twice from the same weights: eager, and compiled whole."""
    build, make_data = bench_compile.WORKLOADS[name]
    data, reference = make_data(np), {}

    def weights(model):
        if not reference:
            ember.manual_seed(0)
            reference.update({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
        return reference
    eager = build(ember, weights, data)
    plain = build(ember, weights, data)
    return eager, plain, bench_compile.compiled(ember, plain, fullgraph=True)


def _state(step):
    """Every array the step's closure updates: parameters, their gradients, KV caches."""
    arrays = [c.numpy().copy() for c in getattr(step, "caches", ())]
    for cell in step.__closure__ or ():
        value = cell.cell_contents
        if isinstance(value, ember.nn.Module):
            for p in value.parameters():
                arrays.append(p.detach().numpy().copy())
                if p.grad is not None:
                    arrays.append(p.grad.numpy().copy())
    return arrays


@pytest.mark.parametrize("name", ["mlp_digits_step", "lenet_step", "depthwise_fwd_bwd", "conv2d_fwd_bwd",
                                  "lstm_fwd_bwd", "gpt_train_step", "gpt_decode_token"])
def test_workload_compiled_equals_eager(name):
    """Float32 through fused C (sums of up to ~10^4 terms reassociated by omp simd, as the
    weight gradients): 1e-4 relative, and 1e-5 of each array's largest magnitude absolute
    (elements that cancel), over the steps (the first two calls run eagerly and capture)."""
    eager, plain, compiled = _twins(name)
    steps = 8 if name == "gpt_decode_token" else 4
    for i in range(steps):
        expected, actual = eager(), compiled()
        _close(actual.detach().numpy(), expected.detach().numpy(), f"{name} step {i}")
    mine, theirs = _state(plain), _state(eager)
    assert len(mine) == len(theirs) > 0
    for a, b in zip(mine, theirs):
        _close(a, b, name)


def _close(actual, expected, what):
    scale = float(np.abs(expected).max(initial=1.0))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * scale, err_msg=what)
