"""The flight recorder: a ring buffer of the last operations of every process group.

Each entry follows the schema of PyTorch's flight recorder dump (version "2.10"), written by
``torch._C._distributed_c10d._dump_fr_trace_json``: ``collective_seq_id``, ``p2p_seq_id``,
``op_id``, ``profiling_name`` (``"mpi:all_reduce"``), ``input_sizes``/``input_dtypes``,
``output_sizes``/``output_dtypes`` (torch's scalar-type names: ``"Float"``, ``"Long"``...),
``state`` (``scheduled``, ``started``, ``completed``: an ember entry is started when made), ``time_created_ns``,
``time_discovered_started_ns``, ``time_discovered_completed_ns``, ``timeout_ms``,
``process_group`` (``[name, desc]``), ``thread_name`` and ``frames`` (the Python stack that
issued it). A dump adds ``pg_config`` and ``pg_status`` (last enqueued/started/completed
sequence number per group).

The buffer holds ``TORCH_FR_BUFFER_SIZE`` entries (default 2000; 0 turns recording off). A
rank writes ``<TORCH_FR_DUMP_TEMP_FILE><rank>.json`` (default prefix
``$TMPDIR/ember_fr_trace_rank_``) on a timeout, on a peer failure, on SIGUSR1 (handled from
the first recorded operation on, unless the program handles that signal itself) and when
asked (:func:`_dump_fr_trace_json`, :func:`dump`). ``ember fr-trace DIR`` reads all ranks'
dumps.

Source: https://pytorch.org/docs/stable/torch_nccl_debugging.html (flight recorder)
"""
import collections
import json
import os
import signal
import sys
import tempfile
import threading
import time

from .distributed_c10d import _World, _mpi

VERSION = "2.10"
_TORCH_DTYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "uint8": "Byte",
                      "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                      "bool": "Bool"}
_MAX_FRAMES = 16
_LEVELS = range(_MAX_FRAMES)


class _Recorder:
    def __init__(self):
        size = int(os.environ.get("TORCH_FR_BUFFER_SIZE", "2000"))
        self.entries = collections.deque(maxlen=max(size, 1))
        self.undescribed = []  # entries of operations in progress, not yet in the ring (describe)
        self.enabled = size > 0
        self.record_id = 0
        self.handler_installed = False


_RECORDER = _Recorder()


def _frames(frame):
    """The Python stack from ``frame`` outwards (innermost first), cut at 16 frames, as one
    flat list of code objects and instruction offsets: a frame's line number costs a
    line-table decoding each, so lines are found only when dumped (:func:`_line`)."""
    frames = []
    keep = frames.append
    for _ in _LEVELS:
        if frame is None:
            break
        keep(frame.f_code)
        keep(frame.f_lasti)
        frame = frame.f_back
    return frames


def _line(code, offset):
    """The source line of the instruction at ``offset`` in ``code``."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return code.co_firstlineno


class Entry:
    """One operation in the ring buffer. Recording sits on every collective's path, so it
    keeps what it saw as it is (shape tuples, dtypes, code objects) and spells torch's schema
    (:meth:`as_dict`) only when a dump is written. Until :func:`describe` runs, ``inputs`` and
    ``outputs`` are the tensors themselves and ``caller`` the frame that called the operation;
    then they are (shape, dtype) pairs and ``frames``, and ``caller`` is None."""

    __slots__ = ("record_id", "pg", "collective_seq_id", "p2p_seq_id", "op_id", "name", "is_p2p",
                 "time_created_ns", "inputs", "outputs", "state", "time_discovered_started_ns",
                 "time_discovered_completed_ns", "thread_id", "frames", "error", "caller")

    @property
    def profiling_name(self):
        return f"mpi:{self.name}"

    def as_dict(self):
        """The entry in the schema of torch's dump (version 2.10)."""
        pg = self.pg
        entry = {
            "record_id": self.record_id, "pg_id": pg.pg_id, "process_group": [pg.group_name, pg.group_desc],
            "collective_seq_id": self.collective_seq_id, "p2p_seq_id": self.p2p_seq_id,
            "op_id": self.op_id, "profiling_name": self.profiling_name,
            "time_created_ns": self.time_created_ns,
            "input_sizes": [list(shape) for shape, _ in self.inputs],
            "input_dtypes": [_TORCH_DTYPE_NAMES[dtype.name] for _, dtype in self.inputs],
            "output_sizes": [list(shape) for shape, _ in self.outputs],
            "output_dtypes": [_TORCH_DTYPE_NAMES[dtype.name] for _, dtype in self.outputs],
            "state": self.state, "time_discovered_started_ns": self.time_discovered_started_ns,
            "time_discovered_completed_ns": self.time_discovered_completed_ns,
            "retired": self.state == "completed",
            "timeout_ms": int(pg.timeout.total_seconds() * 1000), "is_p2p": self.is_p2p,
            "thread_id": str(self.thread_id), "thread_name": _thread_name(self.thread_id),
            "frames": [{"name": code.co_name, "filename": code.co_filename, "line": _line(code, offset)}
                       for code, offset in zip(self.frames[::2], self.frames[1::2])],
        }
        if self.error is not None:
            entry["error"] = self.error
        return entry


def _thread_name(ident):
    """The name of the thread ``ident`` (``"<ended thread>"`` once it has ended)."""
    found = next((t for t in threading.enumerate() if t.ident == ident), None)
    return found.name if found is not None else "<ended thread>"


def record(pg, name, inputs, outputs, is_p2p=False, caller=None):
    """A new entry for operation ``name`` on ``pg``, in state ``started``; None when off.
    (torch's ``scheduled`` is a kernel queued on a GPU stream before it starts; every ember
    operation posts its first MPI calls within a microsecond of making its entry, a
    collective's agreement check just before it, so it is noted as started when it is
    created, without reading the clock again: 0.2-0.3 us on a virtual machine.)

    Advances the group's sequence numbers whether or not recording is on, so dumps from
    different ranks line up by ``collective_seq_id``. ``inputs`` and ``outputs`` are the
    operation's tensors, ``caller`` the frame that called it (default: ``record``'s caller's
    caller, past the operation itself). Only what costs nothing is noted now: the shapes,
    dtypes and stack are read by :func:`describe`, which the operation calls once its MPI calls
    are posted, so that it runs while the data moves. (A 1 MB all-reduce's traffic evicts the
    interpreter's data from the caches: recording before the call added 4-11 us to it on 2
    loaded ranks, recording after it was posted 1-2 us.) Whatever ends the operation describes
    the entry first: its completion, a failure, a dump.
    """
    pg.op_id += 1
    if is_p2p:
        pg.p2p_seq_id += 1
    else:
        pg.collective_seq_id += 1
    recorder = _RECORDER
    if not recorder.enabled:
        return None
    if not recorder.handler_installed:
        recorder.handler_installed = True
        install_signal_handler()
    entry = Entry()
    entry.record_id = recorder.record_id
    entry.pg, entry.name, entry.is_p2p, entry.op_id = pg, name, is_p2p, pg.op_id
    if is_p2p:
        entry.collective_seq_id, entry.p2p_seq_id = 0, pg.p2p_seq_id
    else:
        entry.collective_seq_id, entry.p2p_seq_id = pg.collective_seq_id, 0
    entry.time_created_ns = time.time_ns()
    entry.inputs, entry.outputs, entry.frames = inputs, outputs, None
    entry.state, entry.error = "started", None
    entry.time_discovered_started_ns, entry.time_discovered_completed_ns = entry.time_created_ns, 0
    if entry.collective_seq_id > pg.last_started:
        pg.last_started = entry.collective_seq_id
    entry.thread_id = threading.get_ident()
    entry.caller = caller or sys._getframe(2)  # past record and the operation itself
    recorder.record_id += 1
    if len(recorder.undescribed) > 64:  # an operation that raised before it could describe its entry
        describe(recorder.undescribed[0])
    recorder.undescribed.append(entry)
    return entry


def describe(entry):
    """Notes ``entry``'s shapes, dtypes and stack (while its operation is still in progress,
    so its caller's frames are still those that called it) and puts it in the ring; drops its
    references to tensors and frames. Does nothing when done already or recording is off."""
    if entry is None or entry.frames is not None:
        return
    entry.frames, entry.caller = _frames(entry.caller), None
    inputs = entry.inputs
    entry.inputs = [(t._data.shape, t.dtype) for t in inputs]
    outputs = entry.outputs
    entry.outputs = entry.inputs if outputs is inputs else [(t._data.shape, t.dtype) for t in outputs]
    _RECORDER.undescribed.remove(entry)
    _RECORDER.entries.append(entry)


def completed(entry, pg):
    if entry is not None:
        entry.state, entry.time_discovered_completed_ns = "completed", time.time_ns()
        if entry.collective_seq_id > pg.last_completed:
            pg.last_completed = entry.collective_seq_id


def failed(entry, pg, reason):
    """Notes why ``entry`` never completed, then dumps this rank's recorder."""
    if entry is not None:
        describe(entry)
        entry.error = reason
    dump()


def dump_json(include_collectives=True, only_active=False):
    """This rank's recorder as torch's dump dictionary."""
    for entry in list(_RECORDER.undescribed):  # operations in progress (a SIGUSR1 dump)
        describe(entry)
    entries = [] if not include_collectives else [
        e.as_dict() for e in _RECORDER.entries if not (only_active and e.state == "completed")]
    groups = list(_World.groups.values())
    return {
        "version": VERSION,
        "comm_lib_version": _library_version(),
        "pg_config": {pg.group_name: {"name": pg.group_name, "desc": pg.group_desc,
                                      "ranks": str(pg.ranks)} for pg in groups},
        "pg_status": {str(pg.pg_id): {"last_enqueued_collective": str(pg.collective_seq_id),
                                      "last_started_collective": str(pg.last_started),
                                      "last_completed_collective": str(pg.last_completed)}
                      for pg in groups},
        "nccl_comm_state": {},
        "entries": entries,
        "rank": _rank(),
    }


def _dump_fr_trace_json(includeCollectives=True, onlyActive=False):  # noqa: N803 (torch's names)
    """The dump as JSON bytes (``torch._C._distributed_c10d._dump_fr_trace_json``)."""
    return json.dumps(dump_json(includeCollectives, onlyActive)).encode()


def _library_version():
    return _mpi().Get_library_version().splitlines()[0].strip()


def _rank():
    return _mpi().COMM_WORLD.Get_rank()


def dump_path(rank=None):
    prefix = os.environ.get("TORCH_FR_DUMP_TEMP_FILE",
                            os.path.join(tempfile.gettempdir(), "ember_fr_trace_rank_"))
    return f"{prefix}{_rank() if rank is None else rank}.json"


def dump():
    """Writes this rank's dump to :func:`dump_path` atomically; returns the path."""
    path = dump_path()
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".fr-")
    with os.fdopen(fd, "w") as fh:
        json.dump(dump_json(), fh)
    os.replace(tmp, path)
    return path


def install_signal_handler():
    """SIGUSR1 dumps the recorder, unless the program already handles that signal."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGUSR1"):
        return
    if signal.getsignal(signal.SIGUSR1) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGUSR1, lambda signum, frame: dump())
