"""A callable backend on a function split at a warning or a logging call, as torch 2.13's: the
backend is called for each piece and its callables run from the first call on, each warning and
log record shown once per call (ember.compiler.custom_backend.first_split_run drops the second
run's: patches.quiet_output); a global logger (torch imported: hundreds of loggers linked to each
other) is no container the guards walk; a graph setting a parameter's ``.grad`` runs the callable
from the first call too; a packed sequence into a compiled LSTM runs eagerly, as torch's."""
import logging
import time
import warnings

import numpy as np
import torch

import ember
from ember.compiler.contents import baked
from graph_counts import counting_backend

_LOG = logging.getLogger("ember.tests.backend_29")


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _functions():
    def logs(x):
        y = x * 2
        _LOG.info("step %d", y.shape[0])
        return y + 1

    def warns(x):
        y = x.cos()
        warnings.warn("careful")
        return y * 3

    def logs_after_item(x):
        y = x * 2
        s = y.sum().item()
        _LOG.warning("sum %.1f", s)
        return y - s
    return logs, warns, logs_after_item


def _runs(lib, a):
    """Per function: the counts after each of 3 calls, the warnings and log records made; the results."""
    if lib is torch:
        torch._dynamo.reset()
    handler, rows, results = _Records(), [], []
    _LOG.addHandler(handler), _LOG.setLevel(logging.INFO)
    try:
        for fn in _functions():
            counts, history = [0, 0], []
            f = lib.compile(fn, backend=counting_backend(counts))
            with warnings.catch_warnings(record=True) as shown:
                warnings.simplefilter("always")
                for k in range(3):
                    results.append(f(lib.tensor(a[k])).numpy())
                    history.append(tuple(counts))
            rows.append((fn.__name__, history, [str(w.message) for w in shown], handler.messages[:]))
            handler.messages.clear()
    finally:
        _LOG.removeHandler(handler)
    return rows, results


def test_warnings_and_log_records_run_the_callables_from_the_first_call_once_each():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    (want_rows, want), (got_rows, got) = _runs(torch, a), _runs(ember, a)
    # before: the first call ran eagerly, the callables from the second: (0, 0), (2, 2), (2, 4)
    assert want_rows[0] == ("logs", [(2, 2), (2, 4), (2, 6)], [], ["step 4"] * 3)
    assert want_rows[1] == ("warns", [(2, 2), (2, 4), (2, 6)], ["careful"] * 3, [])
    assert [r[0] for r in want_rows[2][1]] == [2, 4, 4]  # (torch: a graph per float `s`, then dynamic)
    assert got_rows[:2] == want_rows[:2]
    assert got_rows[2][1] == [(2, 2), (3, 4), (3, 6)] and got_rows[2][2:] == want_rows[2][2:]  # (a float once)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


class _Node:
    def __init__(self, child):
        self.left = self.right = child
        self.scale = 2.0


def test_linked_objects_are_walked_once_per_item_not_per_path():
    """Objects linking each other twice, 18 deep: ember's guards walked and compared each of the
    2**18 paths (a global logger with torch imported: minutes and gigabytes); now each object once."""
    node = None
    for _ in range(18):
        node = _Node(node)
    root, start = node, time.process_time()
    before = baked(root)
    assert baked(root) == before
    root.left.left.left.scale = 3.0  # (a write deep inside shows)
    assert baked(root) != before
    root.left.left.left.scale = 2.0
    assert time.process_time() - start < 1.0

    def f(x):
        return x * root.left.scale
    counts = [0, 0]
    g = ember.compile(f, backend=counting_backend(counts))
    for _ in range(2):  # (too many paths for the guards' flat list: eagerly, as before, but at once)
        start = time.process_time()
        np.testing.assert_array_equal(g(ember.ones(3)).numpy(), [2.0, 2.0, 2.0])
        assert time.process_time() - start < 1.0


def _grad_sets(lib):
    """A graph setting a parameter's ``.grad``: counts over 3 calls, results and the gradient."""
    if lib is torch:
        torch._dynamo.reset()
    lib.manual_seed(0)
    net, counts, history, out = lib.nn.Linear(3, 2), [0, 0], [], []

    def f(x):
        net.weight.grad = net.weight * x.sum()
        return net(x).sum().detach()
    g = lib.compile(f, backend=counting_backend(counts))
    for k in range(1, 4):
        out.append(g(lib.ones(3) * k).item())
        history.append(tuple(counts))
    return history, out, net.weight.grad.requires_grad, net.weight.grad.detach().numpy()


def test_a_graph_setting_a_parameters_grad_runs_the_callable_from_the_first_call():
    (want_counts, want, want_rg, want_grad), (got_counts, got, got_rg, got_grad) = _grad_sets(torch), _grad_sets(ember)
    assert want_counts == [(1, 1), (1, 2), (1, 3)]
    assert (got_counts, got_rg) == (want_counts, want_rg)  # (was (1, 0), (1, 1), (1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)


def _packed_counts(lib):
    """An LSTM compiled, fed packed sequences of three sets of lengths: the backend's counts, the last output."""
    if lib is torch:
        torch._dynamo.reset()
    lib.manual_seed(0)
    lstm, counts = lib.nn.LSTM(3, 4, batch_first=True), [0, 0]
    f = lib.compile(lambda packed: lstm(packed)[1][0], backend=counting_backend(counts))
    for lengths in ([5, 3, 2], [4, 4, 1], [5, 2, 2]):
        x = lib.arange(45.0).reshape(3, 5, 3) / 45
        h = f(lib.nn.utils.rnn.pack_padded_sequence(x, lib.tensor(lengths), batch_first=True, enforce_sorted=False))
    return counts, h.detach().numpy()


def test_a_packed_sequence_into_a_compiled_lstm_runs_eagerly_as_torchs():
    """torch 2.13's dynamo runs RNN modules eagerly (no graph for any set of lengths); so does ember."""
    (want_counts, want), (got_counts, got) = _packed_counts(torch), _packed_counts(ember)
    assert want_counts == [0, 0] and got_counts == want_counts
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _level_reads(lib):
    """``if log.isEnabledFor(DEBUG)`` in a compiled function, the level set to DEBUG after 2 of 4
    calls: the backend's calls and the results."""
    if lib is torch:
        torch._dynamo.reset()
    _LOG.setLevel(logging.INFO)

    def f(x):
        y = x * 2
        if _LOG.isEnabledFor(logging.DEBUG):
            y = y + 100
        return y + 1
    counts, out = [0, 0], []
    g = lib.compile(f, backend=counting_backend(counts))
    for k in range(4):
        if k == 2:
            _LOG.setLevel(logging.DEBUG)
        out.append(g(lib.ones(2)).tolist())
    _LOG.setLevel(logging.INFO)
    return counts[0], out


def test_a_loggers_level_read_follows_a_later_set_level():
    """A logger's methods break the graph (torch's too), so its level is read by Python at each
    call; a graph that baked the first call's level in would give 3.0 after setLevel(DEBUG)."""
    want, got = _level_reads(torch), _level_reads(ember)
    assert want == (3, [[3.0, 3.0]] * 2 + [[103.0, 103.0]] * 2)
    assert got == want
