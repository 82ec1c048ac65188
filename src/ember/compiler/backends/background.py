"""Building a graph's C while the program runs (``options={"async_compile": True}``).

A cold compile costs the C compiler's time (a quarter to two seconds a graph); a short run
never earns it back. With ``async_compile`` the graph runs as generated Python (the backend
used where there is no compiler, already free of the dispatcher) from its first call, while
one background thread plans and generates its C and compiles it in a process of its own, one
compiler at a time beside the program's own work; the first call after the library is ready
switches to it. A graph whose library is in the disk cache runs its C at once. torch's
counterpart is Inductor's ``TORCHINDUCTOR_FX_COMPILE_MODE=async+subprocess`` (run eagerly until
the compile finishes).

What it changes: which code computes a step depends on when the compiler finishes, so two
runs can differ in the last bits (the C's vector math against NumPy's). A normal exit does not
wait for the C: the build under way goes on in its process and each queued one (its C
generated first) starts in one of its own, in parallel, and each installs its library in the
disk cache when it is built, so a run shorter than its compile ends when its work does and a
later run starts warm (one started before the build ends compiles again). An exit by an
uncaught exception or a Ctrl-C stops the compilers instead, and nothing of their builds stays
in the cache (temporary files removed, nothing half-written installed).
"""
import atexit
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
_taken = []  # the builds the thread has taken
_exiting = []  # [True] at exit: the worker ends when nothing waits
_PENDING, _SWITCHED = object(), object()


def compile_in_background(graph, options, compiler, c_graph=None):
    """``graph``'s runner: its cached C library when there is one, else a
    :class:`BackgroundBuild` (generated Python until the C is built). ``c_graph``: what the C
    compiles, ``graph`` after the C backend's own passes (``graph`` itself by default)."""
    c_graph = graph if c_graph is None else c_graph
    return cached_c(c_graph, options, compiler) or BackgroundBuild(graph, options, compiler, c_graph)


class BackgroundBuild:
    """Runs ``graph`` as generated Python until a background thread has built its C, then the
    C. ``backend``: "python" or "c", what the next call runs; ``wait(timeout)`` blocks until
    the build ends (True when it has); a failed build warns once (RuntimeWarning naming the
    compiler's log) and the Python stays. ``c_graph``: the graph the C is built from (``graph``
    after the C backend's own passes; ``graph`` by default)."""

    def __init__(self, graph, options, compiler, c_graph=None):
        self.run, self.backend = compile_python(graph), "python"
        self.graph_cache = "miss"
        c_graph = graph if c_graph is None else c_graph
        self._args, self._result, self._done = (c_graph, options, compiler), _PENDING, threading.Event()
        self._handed = threading.Event()  # built, failed, or its compiler's process runs
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
            self._result = compile_c(*self._args, parallel=False, apart=self._handed.set)
        except Exception as e:  # noqa: BLE001 - the run goes on in Python, warned at the switch
            self._result = e
        self._args = None
        self._done.set()
        self._handed.set()

    def _switch(self):
        result, self._result = self._result, _SWITCHED
        if isinstance(result, toolchain.Left):  # called after the exit began: its C is for later runs
            return
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
            _taken.append(build)
        build._build()


@atexit.register
def _at_exit():
    """A normal exit leaves the builds to their own processes: the queued ones' C is generated
    and their compilers started, none is waited for (a Ctrl-C meanwhile stops them). An exit by
    an uncaught exception stops the compilers and drops the waiting builds."""
    if not _worker:
        return
    if getattr(sys, "last_type", None) is None:  # (set when an uncaught exception ends the program)
        toolchain.leave()
        try:
            while True:
                with _wake:
                    if not _waiting:
                        break
                    build = _waiting.pop()
                    _taken.append(build)
                build._build()
            for build in list(_taken):  # the thread's build: its process started, or it ended
                build._handed.wait()
            return
        except KeyboardInterrupt:
            pass
    with _wake:
        _exiting.append(True)
        _waiting.clear()
        _wake.notify()
    toolchain.abandon()
    for worker in _worker:
        worker.join(timeout=10)
