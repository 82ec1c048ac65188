"""Building a graph's C while the program runs (``options={"async_compile": True}``).

A cold compile costs the C compiler's time (a quarter to two seconds a graph); a short run
never earns it back. With ``async_compile`` the graph runs as generated Python (the backend
used where there is no compiler, already free of the dispatcher) from its first call, while
one background thread plans, generates and compiles its C, one compiler process at a time
beside the program's own work (at exit, the builds still queued run in parallel, a core each);
the first call after the library is ready switches to it. A graph whose library is in the
disk cache runs its C at once. torch's counterpart is Inductor's ``TORCHINDUCTOR_FX_COMPILE_MODE=async+subprocess`` (run eagerly until the compile
finishes).

What it changes: which code computes a step depends on when the compiler finishes, so two
runs can differ in the last bits (the C's vector math against NumPy's). At a normal exit the
builds under way and queued are finished (so a run shorter than its compile leaves the
libraries in the cache, and the next run starts warm); an exit by an uncaught exception or a
Ctrl-C (also one pressed during that wait) stops the compiler instead, and nothing of its build
stays in the cache (temporary files removed, nothing half-written installed).
"""
import atexit
import os
import sys
import threading
import warnings

from ..._ops.args import caller_level
from . import toolchain
from .c import cached_c, compile_c
from .python import compile_python

__all__ = ["compile_in_background", "BackgroundBuild"]

_waiting = []  # the builds not started, taken most-called first
_wake = threading.Condition()
_worker = []  # the one background thread, once started
_exiting = []  # [True] at exit: the worker ends when nothing waits
_PENDING, _SWITCHED = object(), object()


def compile_in_background(graph, options, compiler):
    """``graph``'s runner: its cached C library when there is one, else a
    :class:`BackgroundBuild` (generated Python until the C is built)."""
    return cached_c(graph, options, compiler) or BackgroundBuild(graph, options, compiler)


class BackgroundBuild:
    """Runs ``graph`` as generated Python until a background thread has built its C, then the
    C. ``backend``: "python" or "c", what the next call runs; ``wait(timeout)`` blocks until
    the build ends (True when it has); a failed build warns once (RuntimeWarning naming the
    compiler's log) and the Python stays."""

    def __init__(self, graph, options, compiler):
        self.run, self.backend = compile_python(graph), "python"
        self.graph_cache = "miss"
        self._args, self._result, self._done = (graph, options, compiler), _PENDING, threading.Event()
        self.calls = 0
        with _wake:
            _waiting.append(self)
            _wake.notify()
        if not _worker:
            _worker.append(threading.Thread(target=_work, name="ember-compile", daemon=True))
            _worker[0].start()

    def __call__(self, *arrays_and_sizes):
        self.calls += 1
        if self._result is not _PENDING and self._result is not _SWITCHED:
            self._switch()
        return self.run(*arrays_and_sizes)

    def wait(self, timeout=None):
        """Blocks until the build has ended (or ``timeout`` seconds); whether it has."""
        return self._done.wait(timeout)

    def _build(self):
        try:
            if toolchain._abandoned:
                raise toolchain.CompileError("the process is exiting", None)
            self._result = compile_c(*self._args, parallel=False)
        except Exception as e:  # noqa: BLE001 - the run goes on in Python, warned at the switch
            self._result = e
        self._args = None
        self._done.set()

    def _switch(self):
        result, self._result = self._result, _SWITCHED
        if isinstance(result, Exception):
            where = f" (log: {result.log})" if getattr(result, "log", None) else f": {result}"
            warnings.warn(f"ember.compile: building the generated C in the background failed{where}; "
                          "running generated Python instead", RuntimeWarning, stacklevel=caller_level())
            return
        self.run, self.backend = result, "c"
        self.c_source = result.c_source


def _work():
    # the graph called most so far first: a graph a recompile replaced (the first step's,
    # before the gradients existed) waits behind the one the run calls now
    while True:
        with _wake:
            while not _waiting and not _exiting:
                _wake.wait()
            if toolchain._abandoned or not _waiting:
                return
            build = max(_waiting, key=lambda b: b.calls)
            _waiting.remove(build)
        build._build()


@atexit.register
def _at_exit():
    """A normal exit finishes the builds (a Ctrl-C meanwhile skips them); an exit by an uncaught
    exception stops the compiler and drops the waiting builds."""
    if not _worker:
        return
    with _wake:
        _exiting.append(True)
        _wake.notify()
        # nothing runs beside the builds now: the queued ones take a core each, in parallel
        extra = min(len(_waiting), (os.cpu_count() or 1) - 1)
    if getattr(sys, "last_type", None) is None:  # (set when an uncaught exception ends the program)
        for _ in range(max(0, extra)):
            _worker.append(threading.Thread(target=_work, name="ember-compile", daemon=True))
            _worker[-1].start()
        try:
            for worker in _worker:
                worker.join()
            return
        except KeyboardInterrupt:
            pass
    toolchain.abandon()
    with _wake:
        _waiting.clear()
    for worker in _worker:
        worker.join(timeout=10)
