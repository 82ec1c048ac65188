"""A returned ``y.detach()`` beside ``y`` (either order), under grad: torch 2.13 keeps one graph
(``fullgraph=True`` too) and returns the detached result over ``y``'s memory; ember broke the
graph (the two results share one array). It now remakes the detached one from ``y`` after each
replay (ember.compiler.aliases.output_views)."""
import numpy as np
import torch

import ember


def _runs(lib):
    if lib is torch:
        torch._dynamo.reset()

    def after(x):
        y = x * 2
        return y, y.detach()

    def before(x):
        y = x.sin()
        return y.detach(), y
    rows = []
    for fn in (after, before):
        counts = [0, 0]

        def backend(gm, example_inputs):
            counts[0] += 1
            return lambda *args: (counts.__setitem__(1, counts[1] + 1), gm(*args))[1]
        compiled = lib.compile(fn, backend=backend, fullgraph=True)
        for k in range(3):
            x = lib.arange(4.0, requires_grad=True)
            a, b = compiled(x + k)
        loss = a if a.requires_grad else b
        loss.sum().backward()
        flags = (a.requires_grad, b.requires_grad, a.grad_fn is None, b.grad_fn is None)
        values = (a.detach().numpy().copy(), b.detach().numpy().copy(), x.grad.numpy())
        a.data[0] = 100.0  # (one memory: seen in the other)
        rows.append((tuple(counts), flags, b.detach()[0].item(), values))
    return rows


def test_a_detached_result_beside_its_value_keeps_one_graph():
    want, got = _runs(torch), _runs(ember)
    assert [r[:3] for r in got] == [r[:3] for r in want]
    assert want[0][:3] == ((1, 3), (True, False, False, True), 100.0)
    for g, w in zip(got, want):
        for a, b in zip(g[3], w[3], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)
