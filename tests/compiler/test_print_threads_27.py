"""SMALL27: ``print`` and ``sys.stdout``/``sys.stderr``, wrapped while ember.compile records a call
(a print is a graph break, as under torch.compile), are put back once the last recording ends, also
when two threads' recordings end in another order than they started; a print breaks only the
recording of its own thread (the innermost there)."""
import builtins
import io
import sys
import threading

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


def test_put_back_after_two_threads_recordings_end_out_of_order():
    before, x = _originals(), torch.ones(3)
    go, ev, wrapped, seen = [False], {n: threading.Event() for n in ("a_in", "b_in", "a_out")}, [], []

    def fa(x, k):
        if go[0]:
            wrapped.append(builtins.print is not before[0])
            ev["a_in"].set()
            ev["b_in"].wait(5)
        return x * k

    def fb(x, k):
        if go[0]:
            ev["a_in"].wait(5)
            wrapped.append(builtins.print is not before[0])
            ev["b_in"].set()
            ev["a_out"].wait(5)  # (A's recording has ended: B's ends last)
        return x * k
    ca, cb = torch.compile(fa), torch.compile(fb)
    ca(x, 1), cb(x, 1)  # (the calls below record again: another int)
    go[0] = True

    def a():
        seen.append(ca(x, 2).tolist())
        ev["a_out"].set()
    _run(a, lambda: seen.append(cb(x, 9).tolist()))
    assert wrapped == [True, True] and sorted(seen) == [[2.0] * 3, [9.0] * 3]
    assert _same(before)


def test_print_breaks_the_recording_of_its_own_thread():
    before, breaks = _originals(), []
    step = {n: threading.Event() for n in ("a_in", "b_printed", "a_out")}

    def recording_a():
        end = breaking_print(lambda reason: breaks.append(("a", reason)))
        step["a_in"].set()
        step["b_printed"].wait(5)
        inner = breaking_print(lambda reason: breaks.append(("inner", reason)))
        print("a", file=io.StringIO())
        inner()
        sys.stderr.write("")
        end()
        step["a_out"].set()

    def recording_b():
        step["a_in"].wait(5)
        end = breaking_print(lambda reason: breaks.append(("b", reason)))
        print("b", file=io.StringIO())
        step["b_printed"].set()
        step["a_out"].wait(5)  # (A's recordings end first)
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
