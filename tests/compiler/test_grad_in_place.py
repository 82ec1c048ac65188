"""``.grad`` keeps its identity across training steps, as torch's: the backward accumulates into
an existing gradient in place (``g = p.grad; step(); g is p.grad``), eagerly and compiled, where
the generated C writes the new gradient into the array ``.grad`` already holds."""
import numpy as np
import pytest

import ember
from ember.compiler.backends import toolchain

torch = pytest.importorskip("torch")


def _run(lib, compiled, zero_inside):
    """Five steps of a small MLP with SGD (momentum): ``zero_grad(set_to_none=False)`` inside the
    step, or no zeroing (gradients accumulate across steps). Returns, per step, whether each
    parameter's .grad is the same tensor as before the step, then the final gradients."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
    for p, w in zip(model.parameters(), _weights(model)):
        p.data.copy_(lib.tensor(w))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))

    def step(x):
        if zero_inside:
            opt.zero_grad(set_to_none=False)
        loss = model(x).square().sum()
        loss.backward()
        opt.step()
        return loss
    if compiled:
        step = ember.compile(step, fullgraph=False) if lib is ember else torch.compile(step, backend="eager")
    same = []
    for _ in range(5):
        before = [p.grad for p in model.parameters()]
        step(x)
        same.append([b is p.grad for b, p in zip(before, model.parameters())])
    return same, [p.grad.detach().numpy().copy() for p in model.parameters()], step


def _weights(model):
    rng = np.random.default_rng(1)
    return [rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5 for p in model.parameters()]


@pytest.mark.parametrize("zero_inside", [True, False], ids=["zero_grad_set_to_none_false", "accumulating"])
def test_grad_identity_is_kept_across_steps_as_torch(zero_inside):
    want_same, want_grads, _ = _run(torch, False, zero_inside)
    assert want_same == [[False] * 4] + [[True] * 4] * 4  # torch: new on the first step, then kept
    for compiled in (False, True):
        same, grads, step = _run(ember, compiled, zero_inside)
        assert same == want_same, f"compiled={compiled}"
        for g, w in zip(grads, want_grads):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * np.abs(w).max())
    entry = step._entries[-1]
    assert hasattr(entry, "run"), "the step was expected to capture as one graph"
    if toolchain.find_compiler() is not None:
        # the C code writes each gradient into .grad's own array: the driver copies none
        copies = [ln for ln in entry.run.source.splitlines() if "np.copyto(v_" in ln and "_grad," in ln]
        assert copies and all(ln.lstrip().startswith("if ") for ln in copies), copies
