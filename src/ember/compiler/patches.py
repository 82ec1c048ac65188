"""What a recording swaps into other modules while it runs (``math.sqrt``, ``builtins.min``,
``print``, ``sys.stdout``; Tensor's methods and the random draws: :mod:`.tensor_patches`), counted under one lock: the first recording to start installs the
swapped version, the last to end puts the original back, so recordings on several threads,
ending in either order, leave the originals in place (a per-recording restore could leave
one recording's version installed for good).
"""
import builtins
import contextlib
import logging
import sys
import threading
import warnings

from .._tensor_subclass import rebase

__all__ = ["patch", "unpatch", "breaking_print", "from_user", "quiet_output", "io_reason", "LIBRARIES", "PRINT",
           "WRITE", "WARN", "LOG", "PerThread"]

# the top-level packages whose code is no user code (its calls, prints and reads are not the user's)
LIBRARIES = {"ember", "numpy", "scipy", "torch", "functools", "builtins", "threadpoolctl", "ml_dtypes"}

# (module, name) -> [its original, how many recordings patched it, the version installed, whether the
# module held the original itself (a class may inherit it: deleted again at the end)]
_PATCHED, _PATCHING = {}, threading.Lock()


def patch(module, names, tracing):
    """Installs ``tracing(name, original)`` as each of ``module``'s ``names`` (a module's or a
    class's: ``original`` as the class holds it, a ``classmethod`` or ``property`` object)
    unless a running recording already did; returns what :func:`unpatch` takes (``{name: original}``)."""
    with _PATCHING:
        for name in names:
            held = _PATCHED.setdefault((module, name), [None, 0, None, True])
            if held[1] == 0:
                held[3] = name in vars(module)
                held[0] = vars(module)[name] if held[3] else next(  # (a class's inherited attribute)
                    vars(c)[name] for c in module.__mro__ if name in vars(c))
                held[2] = tracing(name, held[0])
                setattr(module, name, held[2])
            held[1] += 1
    return {name: _PATCHED[module, name][0] for name in names}


def unpatch(saved, module):
    """Ends one recording's :func:`patch` of ``module``'s names (``saved``): the last to end
    puts the originals back where the installed versions still are (one the user's code
    replaced meanwhile, ``sys.stdout = buf``, stays)."""
    with _PATCHING:
        for name in saved:
            held = _PATCHED[module, name]
            held[1] -= 1
            if held[1] == 0 and vars(module).get(name) is held[2]:
                if held[3]:
                    setattr(module, name, held[0])
                else:
                    delattr(module, name)
            elif held[1] == 0:  # (a mode entered in the call wrapped the patched one: the original now)
                rebase(module, name, held[2], held[0], not held[3])


# thread id -> the ``graph_break`` of each recording running on it, the innermost last
_PRINTING = {}
# thread id -> how many quiet_output() are open on it (its writes to the wrapped streams are dropped)
_MUTED = {}

PRINT = "print() is a Python side effect (a replay would not print)"
WRITE = "a write to sys.stdout or sys.stderr is a Python side effect (a replay would not write it)"
# (a logging handler's write, to any stream or file: the call logging it runs again only where the record is dropped)
LOG = "a logging handler's output is a Python side effect (a replay would not log it)"


def io_reason(what):
    """The reason of a graph break at a C call ``what`` doing input or output (``open()``)."""
    return f"{what} is input or output, a Python side effect (a replay would not repeat it)"


WARN = (io_reason("warnings.warn()"), io_reason("warnings.warn_explicit()"))


def breaking_print(graph_break):
    """Makes ``print`` and writes to ``sys.stdout``/``sys.stderr`` graph breaks while a call is
    recorded: a replay would not print, so the statement runs eagerly on every call (and
    ``fullgraph=True`` raises Unsupported, as torch's dynamo does: "Failed to trace builtin
    operator"). The streams are wrapped too, so ``sys.stdout.write(...)`` and a ``print``
    bound to another name before the call (``log = print``), ``pprint``, a warning shown or a
    logging handler writing to the stream at the time break as well (torch's dynamo does not
    trace into those either). Only calls from user code or the standard library called from it
    count (not ember's, NumPy's...), and each breaks the innermost recording of its own thread; so
    does a call of a logger's methods (``log.info(...)``: torch's dynamo breaks there). Returns
    the function ending it (:func:`unpatch`: a stream the call replaced stays)."""
    thread = threading.get_ident()
    with _PATCHING:
        _PRINTING.setdefault(thread, []).append(graph_break)
    printing, streams = patch(builtins, ("print",), _traced_print), patch(sys, ("stdout", "stderr"), _breaking_stream)
    logs = patch(logging.Logger, _LOG_METHODS, _traced_log)

    def restore():
        unpatch(printing, builtins)
        unpatch(streams, sys)
        unpatch(logs, logging.Logger)
        with _PATCHING:
            breaks = _PRINTING[thread]
            del breaks[next(i for i in range(len(breaks) - 1, -1, -1) if breaks[i] is graph_break)]
            if not breaks:
                del _PRINTING[thread]
    return restore


def from_user(frame):
    """Whether ``frame`` runs for user code: the user's own, or the standard library's called
    from it (``json.dump(obj, fh)`` writes from json's frame), not ember's, NumPy's..."""
    while frame is not None:
        top = (frame.f_globals.get("__name__") or "").partition(".")[0]
        if top not in sys.stdlib_module_names:
            return top not in LIBRARIES
        frame = frame.f_back
    return False


def _user_call(reason):
    """The recording on this thread breaks with ``reason`` when the call came from the user's
    code (frame 2: the caller of ``print`` or of a stream's write), or from the standard library
    called from it: not an op's warning shown by ``warnings`` for ember (``affine_grid``'s: once,
    as eagerly; torch's dynamo keeps it in the graph, no break)."""
    breaks = _PRINTING.get(threading.get_ident())
    if breaks and from_user(sys._getframe(2)):
        breaks[-1](reason)


def _traced_print(name, original):
    def traced_print(*args, **kwargs):
        _user_call(PRINT)
        if threading.get_ident() in _MUTED:  # (quiet_output: to any file, print(..., file=buf) too)
            return None
        return original(*args, **kwargs)  # (its write to a wrapped stream comes from ember: no break)
    traced_print.__name__, traced_print.__doc__ = name, original.__doc__
    return traced_print


# a logger's methods: each call from user code breaks the graph, as torch's dynamo's, whatever the
# level (the level read by Python each call: ``if log.isEnabledFor(DEBUG)`` follows a later setLevel)
_LOG_METHODS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log", "isEnabledFor",
                "getEffectiveLevel", "hasHandlers")


def _traced_log(name, original):
    def traced_log(*args, **kwargs):
        _user_call(LOG)
        return original(*args, **kwargs)
    traced_log.__name__, traced_log.__doc__ = name, original.__doc__
    return traced_log


def _breaking_stream(name, stream):
    return None if stream is None else _BreakingStream(stream)


class _BreakingStream:
    """``sys.stdout``/``sys.stderr`` while a call is recorded: its writes are graph breaks (see
    :func:`breaking_print`); everything else is the stream's."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        _user_call(WRITE)
        return len(text) if threading.get_ident() in _MUTED else self._stream.write(text)

    def writelines(self, lines):
        _user_call(WRITE)
        return None if threading.get_ident() in _MUTED else self._stream.writelines(lines)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _unless_muted(name, original):
    def unless_muted(*args, **kwargs):
        return None if threading.get_ident() in _MUTED else original(*args, **kwargs)
    unless_muted.__name__, unless_muted.__doc__ = original.__name__, original.__doc__
    return unless_muted


# what quiet_output() swaps in: (module or class, name, the version dropping the muted thread's calls)
_QUIET = ((builtins, "print", _traced_print), (sys, "stdout", _breaking_stream), (sys, "stderr", _breaking_stream),
          # (every warning shown or recorded passes through it: the C warnings.warn calls it by name)
          (warnings, "_showwarnmsg", _unless_muted), (logging.Logger, "handle", _unless_muted))


@contextlib.contextmanager
def quiet_output():
    """While it runs, what this thread prints (to any file), writes to ``sys.stdout``/``sys.stderr``,
    warns (shown or recorded) or logs (a logger's records) is dropped (other threads' is
    shown); recordings inside it still break at each print or write (:func:`breaking_print`).
    For a second run of a call whose output, warnings and records were shown already
    (:func:`~.custom_backend.first_split_run`)."""
    thread = threading.get_ident()
    saved = [patch(owner, (name,), swapped) for owner, name, swapped in _QUIET]
    with _PATCHING:
        _MUTED[thread] = _MUTED.get(thread, 0) + 1
    try:
        yield
    finally:
        with _PATCHING:
            _MUTED[thread] -= 1
            if not _MUTED[thread]:
                del _MUTED[thread]
        for (owner, _, _), names in zip(_QUIET, saved):
            unpatch(names, owner)


class PerThread(threading.local):
    """A list, set or dict (``kind``) of which each thread has its own: a recording's notes
    (:data:`.traced_ints.TRACING`, the values its traced ints took, ...), which a recording on
    another thread at the same time must neither read nor clear. Its contents are read and
    written through the list's, set's or dict's methods, ``in``, ``[]``, iteration and truth, or
    as ``value`` (this thread's container itself: what a check on every op reads, without a call)."""

    def __init__(self, kind):
        self.value = kind()

    def __getattr__(self, name):  # (append, remove, clear, add, pop, update, ...)
        return getattr(self.value, name)

    def __bool__(self):
        return bool(self.value)

    def __len__(self):
        return len(self.value)

    def __iter__(self):
        return iter(self.value)

    def __contains__(self, item):
        return item in self.value

    def __getitem__(self, key):
        return self.value[key]

    def __setitem__(self, key, item):
        self.value[key] = item
