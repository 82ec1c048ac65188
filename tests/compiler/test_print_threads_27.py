"""SMALL27: ``print`` and ``sys.stdout``/``sys.stderr``, wrapped while ember.compile records a call
(a print is a graph break, as under torch.compile: it prints on every call), are put back once the
last recording ends, also when two threads' recordings end in another order than they started; a
print breaks only the recording of its own thread (the innermost there)."""
import builtins
import io
import sys
import threading

import torch as real

import ember as torch
from ember.compiler.patches import breaking_print


def _originals():
    return builtins.print, sys.stdout, sys.stderr


def _same(before):
    return [a is b for a, b in zip(_originals(), before)] == [True] * 3


def _run(*targets):
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not any(t.is_alive() for t in threads)


def test_compiled_print_prints_every_call_and_is_put_back(capsys):
    # (two threads' compiled recordings ending out of order are not tested here: capture.py's Tensor
    # method patches are still put back per recording, so such a test would leave them installed)
    def f(x, k):
        print("k =", k)
        sys.stdout.write("!\n")
        return x * k
    before, outs = _originals(), []
    for lib, g in ((torch, torch.compile(f)), (real, f)):  # (torch.compile breaks there: eager's prints)
        outs.append(([g(lib.ones(2), k).tolist() for k in (1, 2, 2)], capsys.readouterr().out))
    assert outs[0] == outs[1] and outs[0][1] == "k = 1\n!\nk = 2\n!\nk = 2\n!\n"
    assert _same(before)


def test_print_breaks_the_recording_of_its_own_thread():
    before, breaks = _originals(), []
    step = {n: threading.Event() for n in ("a_in", "b_printed", "a_out")}

    def recording_a():
        end = breaking_print(lambda reason: breaks.append(("a", reason)))
        step["a_in"].set()
        step["b_printed"].wait(60)  # (bounds, not measures: an event ends each wait)
        inner = breaking_print(lambda reason: breaks.append(("inner", reason)))
        print("a", file=io.StringIO())
        inner()
        sys.stderr.write("")
        end()
        step["a_out"].set()

    def recording_b():
        step["a_in"].wait(60)
        end = breaking_print(lambda reason: breaks.append(("b", reason)))
        print("b", file=io.StringIO())
        step["b_printed"].set()
        step["a_out"].wait(60)  # (A's recordings end first)
        end()
    _run(recording_a, recording_b)
    assert [who for who, _ in breaks] == ["b", "inner", "a"]
    assert breaks[0][1] == "print() is a Python side effect (a replay would not print)"
    assert breaks[2][1].startswith("a write to sys.stdout or sys.stderr")
    assert _same(before)


def test_stream_replaced_during_a_recording_stays():
    before, buf = _originals(), io.StringIO()
    end = breaking_print(lambda reason: None)
    try:
        sys.stdout = buf
    finally:
        end()
    try:
        assert sys.stdout is buf and builtins.print is before[0] and sys.stderr is before[2]
    finally:
        sys.stdout = before[1]
