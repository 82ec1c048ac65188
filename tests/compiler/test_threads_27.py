"""THREADS27: two threads recording compiled functions at once (a data-loader thread beside the
training thread). Each recording sees only its own thread: its graph breaks (``.item()``,
``.tolist()``), the tensors made inside it, dropout's random draw and the ops it dispatches,
so its graphs are the ones a single-threaded run records; and once both end, every attribute a
recording patches (Tensor's value methods, ``.grad``, ``_make``, ``_init``, ``_snapshot``, the
random draws) is the original again, whichever recording ended first, and neither thread keeps a
recording's profile function (side_effects.breaking_io)."""
import inspect
import sys
import threading
import time

import ember as torch
from ember import _distributions, _random
from ember._dynamo.testing import CompileCounter
from ember._tensor import Tensor
from ember.compiler.breaks import VALUE_METHODS

_PATCHED = [(Tensor, name) for name in (*VALUE_METHODS, "grad", "_make", "_init", "_snapshot")] + [
    (_random, "rng"), (_distributions, "generator_or_default")] + [
    (_random.Generator, name) for name in ("manual_seed", "seed", "set_state")]


def _attributes():
    return [inspect.getattr_static(owner, name) for owner, name in _PATCHED]


def _fa(x, w, sync):
    sync()
    s = (x * w).sum()
    n = s.item()  # a graph break: this recording's, not the other thread's
    y = torch.nn.functional.dropout(x + n, 0.0, training=True) + torch.ones(3)  # (a factory)
    y = y + torch.rand(3) * 0  # (a random draw, through the patched stream: this thread's recording)
    sync()
    return y * 2


def _fb(x, sync):
    sync()
    t = torch.arange(3.0) + x
    values = t.tolist()  # a graph break
    sync()
    time.sleep(0.02)  # (b's recording most often ends after a's: a restoring first left a's patches in)
    return t * len(values) - 1


_LOCAL, _BARRIER = threading.local(), [None]


def _sync():
    barrier = getattr(_LOCAL, "barrier", None)  # (the recording call of a thread: both are inside theirs)
    if barrier is not None:
        barrier.wait()
        # (its two waits are the recording's: a callable backend's first call runs the split function
        # again, where one waiting would be alone if the other thread's recording saw a side effect)
        _LOCAL.waits = getattr(_LOCAL, "waits", 0) + 1
        if _LOCAL.waits == 2:
            _LOCAL.barrier, _LOCAL.waits = None, 0


def _counts(fn, args, together=False):
    counter = CompileCounter()
    compiled = torch.compile(fn, backend=counter)
    results = []
    for call in range(2):
        # (held by the thread's own local on the first call only: a global the later calls' recordings
        # read would change while the other thread leaves the barrier, a side effect that breaks them)
        _LOCAL.barrier = _BARRIER[0] if together and call == 0 else None
        results.append(compiled(*args, _sync).tolist())
    return results, (counter.frame_count, counter.op_count)


def test_two_threads_recording_at_once_see_only_their_own_thread():
    original = _attributes()
    xa, w, xb = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 0.25, 2.0]), torch.tensor([4.0, 5.0, 6.0])
    eager = [_fa(xa, w, _sync).tolist()] * 2, [_fb(xb, _sync).tolist()] * 2
    torch._dynamo.reset()
    alone = _counts(_fa, (xa, w)), _counts(_fb, (xb,))
    assert [r for r, _ in alone] == list(eager) and all(c[0] >= 2 for _, c in alone)  # (a break: two graphs)
    for _ in range(4):
        torch._dynamo.reset()
        _BARRIER[0], seen, hooks = threading.Barrier(2, timeout=10), [None, None], [0, 0]

        def run(i, fn, args):
            seen[i] = _counts(fn, args, together=True)
            hooks[i] = sys.getprofile()  # (a recording's side-effect hook is its thread's: off again)
        threads = [threading.Thread(target=run, args=(0, _fa, (xa, w))),
                   threading.Thread(target=run, args=(1, _fb, (xb,)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert not any(t.is_alive() for t in threads)
        assert seen == list(alone) and hooks == [None, None]
        assert _attributes() == original
