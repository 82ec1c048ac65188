"""A function split at graph breaks with a callable backend, as torch 2.13's: the backend is
called for each piece and its callables run from the first call on (the first call runs the split
function again after the recording: ember.compiler.custom_backend.first_split_run), each write and
random draw made once and each print shown once per call."""
import numpy as np
import torch

import ember
from graph_counts import counting_backend


def _functions(lib):
    def item(x):
        y = x * 2
        s = y.sum().item()
        return y + s

    def printed(x):
        y = x * 2
        print("step", y.shape[0])
        return y + 1

    def tolist(x):
        y = x.sin()
        n = len(y.tolist())
        return y * n

    def marked(x):
        y = x.cos()
        lib._dynamo.graph_break()
        return y + 1

    def helper(x):
        y = x.exp()
        print("in helper")
        return y * 2

    def callee(x):
        z = x + 1
        z = helper(z)
        return z - 1

    def written(x, c):
        c.add_(1)
        s = (c * x).sum().item()
        return x * s + c
    return item, printed, tolist, marked, callee, written


def _runs(lib, a, capsys):
    """Per function: the counts after each of 3 calls, the results, the lines printed; then a module
    whose forward breaks at ``.item()``, its output and gradients over 2 calls."""
    if lib is torch:
        torch._dynamo.reset()
    rows, results = [], []
    for fn in _functions(lib):
        counts, c = [0, 0], lib.zeros(4)
        f, history = lib.compile(fn, backend=counting_backend(counts)), []
        for k in range(3):
            x = lib.tensor(a[k])
            results.append((f(x, c) if fn.__name__ == "written" else f(x)).numpy())
            history.append(tuple(counts))
        results.append(c.numpy())
        rows.append((fn.__name__, history, capsys.readouterr().out.count("\n")))

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x).tanh()
            scale = h.abs().max().item()
            return (h / scale).sum()
    lib.manual_seed(0)
    net, counts = Net(), [0, 0]
    with lib.no_grad():
        net.fc.weight.copy_(lib.tensor(a[:4])), net.fc.bias.copy_(lib.tensor(a[4]))
    compiled, history = lib.compile(net, backend=counting_backend(counts)), []
    for k in range(2):
        out = compiled(lib.tensor(a) * (k + 1))
        out.backward()
        results += [out.detach().numpy(), net.fc.weight.grad.numpy().copy()]
        history.append(tuple(counts))
    rows.append(("module", history, 0))
    return rows, results


def test_pieces_run_the_callables_from_the_first_call_as_torchs(capsys):
    a = np.random.default_rng(0).standard_normal((8, 4), dtype=np.float32)
    (want_rows, want), (got_rows, got) = _runs(torch, a, capsys), _runs(ember, a, capsys)
    # before: the first call ran eagerly, the pieces' callables from the second: (0, 0), (2, 2), (2, 4)
    assert got_rows == want_rows
    assert want_rows[0] == ("item", [(2, 2), (3, 4), (3, 6)], 0)
    assert want_rows[1][2] == 3 and want_rows[4] == ("callee", [(4, 4), (4, 8), (4, 12)], 3)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_a_piece_draws_the_recordings_random_numbers():
    """Dropout before a break: the first call's split run draws what the recording drew (the
    stream is set back), so the results are eager's under the same seed, and the next call draws on."""
    def f(x):
        y = ember.nn.functional.dropout(x, 0.5)
        s = y.sum().item()
        return y * s
    x = ember.ones(64)
    ember.manual_seed(3)
    want = [f(x).numpy(), f(x).numpy()]
    counts = [0, 0]
    g = ember.compile(f, backend=counting_backend(counts))
    ember.manual_seed(3)
    got = [g(x).numpy(), g(x).numpy()]
    assert counts == [3, 4]  # (the second piece recompiled for another float s, as torch: test above)
    for g_, w in zip(got, want):
        np.testing.assert_array_equal(g_, w)
