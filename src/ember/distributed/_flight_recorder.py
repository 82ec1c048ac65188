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

The buffer holds ``TORCH_FR_BUFFER_SIZE`` entries (default 2000; 0 turns recording off).
``frames`` holds the caller of the operation; ``EMBER_FR_STACK_DEPTH=N`` keeps N frames of the
stack from it outwards instead (0: none). A
rank writes ``<TORCH_FR_DUMP_TEMP_FILE><rank>.json`` (default prefix
``$TMPDIR/ember_fr_trace_rank_``) on a timeout, on a peer failure, on SIGUSR1 (handled from
the first recorded operation on, unless the program handles that signal itself) and when
asked (:func:`_dump_fr_trace_json`, :func:`dump`). ``ember fr-trace DIR`` reads all ranks'
dumps.

Source: https://pytorch.org/docs/stable/torch_nccl_debugging.html (flight recorder)
"""
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
# How many Python frames an entry keeps, innermost first: by default only the caller's, the
# line that issued the operation. Walking the stack is the largest part of recording (1.4 us of
# a 1 MB all_reduce's 7.8 us of Python, 9 frames deep, caches streamed before each call), so
# the stack above it is read only when asked (torch records the whole stack, in C++).
_STACK_DEPTH = max(int(os.environ.get("EMBER_FR_STACK_DEPTH", "1")), 0)
_LEVELS = range(_STACK_DEPTH)


# An entry is one list, made with one instruction on the operation's path and changed by
# index writes; torch's schema is spelt from it only when a dump is written (_as_dict).
(_ID, _PG, _NAME, _IS_P2P, _OP_ID, _SEQ, _P2P_SEQ, _CREATED, _INPUTS, _OUTPUTS, _COMPLETED, _THREAD,
 _CALLER, _FRAMES, _ERROR) = range(15)
_now = time.time_ns
_thread = threading.get_ident


class _Recorder:
    """The ring: ``size`` slots, the entry of record id ``i`` in slot ``i % size`` from the
    moment it is made (an older one there is dropped)."""

    def __init__(self):
        size = int(os.environ.get("TORCH_FR_BUFFER_SIZE", "2000"))
        self.enabled = size > 0
        self.size = max(size, 1)
        self.ring = [None] * self.size
        self.record_id = 0
        self.handler_installed = False

    def entries(self):
        """The entries in the ring, oldest first."""
        first = max(0, self.record_id - self.size)
        return [self.ring[i % self.size] for i in range(first, self.record_id)]


_RECORDER = _Recorder()


def _frames(frame):
    """The Python stack from ``frame`` outwards (innermost first), cut at
    ``EMBER_FR_STACK_DEPTH`` frames (default 1), as one flat list of code objects and
    instruction offsets: a frame's line number costs a line-table decoding each, so lines are
    found only when dumped (:func:`_line`)."""
    if _STACK_DEPTH == 1 and frame is not None:  # the default: the caller alone
        return [frame.f_code, frame.f_lasti]
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


def label(entry):
    """(``profiling_name``, ``collective_seq_id``) of ``entry``, for error messages
    (``("operation", "?")`` when the recorder is off)."""
    return ("operation", "?") if entry is None else (f"mpi:{entry[_NAME]}", entry[_SEQ])


def _as_dict(entry):
    """``entry`` (described) in the schema of torch's dump (version 2.10)."""
    pg, inputs, outputs, frames = entry[_PG], entry[_INPUTS], entry[_OUTPUTS], entry[_FRAMES]
    completed = entry[_COMPLETED]
    found = {
        "record_id": entry[_ID], "pg_id": pg.pg_id, "process_group": [pg.group_name, pg.group_desc],
        "collective_seq_id": entry[_SEQ], "p2p_seq_id": entry[_P2P_SEQ],
        "op_id": entry[_OP_ID], "profiling_name": f"mpi:{entry[_NAME]}",
        "time_created_ns": entry[_CREATED],
        "input_sizes": [list(shape) for shape, _ in inputs],
        "input_dtypes": [_TORCH_DTYPE_NAMES[dtype.name] for _, dtype in inputs],
        "output_sizes": [list(shape) for shape, _ in outputs],
        "output_dtypes": [_TORCH_DTYPE_NAMES[dtype.name] for _, dtype in outputs],
        "state": "completed" if completed else "started",
        "time_discovered_started_ns": entry[_CREATED], "time_discovered_completed_ns": completed,
        "retired": bool(completed),
        "timeout_ms": int(pg.timeout.total_seconds() * 1000), "is_p2p": entry[_IS_P2P],
        "thread_id": str(entry[_THREAD]), "thread_name": _thread_name(entry[_THREAD]),
        "frames": [{"name": code.co_name, "filename": code.co_filename, "line": _line(code, offset)}
                   for code, offset in zip(frames[::2], frames[1::2])],
    }
    if entry[_ERROR] is not None:
        found["error"] = entry[_ERROR]
    return found


def _thread_name(ident):
    """The name of the thread ``ident`` (``"<ended thread>"`` once it has ended)."""
    found = next((t for t in threading.enumerate() if t.ident == ident), None)
    return found.name if found is not None else "<ended thread>"


def record(pg, name, inputs, outputs, is_p2p=False, caller=None):
    """A new entry for operation ``name`` on ``pg``, in state ``started``, put in the ring;
    None when off. (torch's ``scheduled`` is a kernel queued on a GPU stream before it starts;
    every ember operation posts its first MPI calls within a microsecond of making its entry, a
    collective's agreement check just before it, so it is noted as started when it is
    created, without reading the clock again: 0.2-0.3 us on a virtual machine.)

    Advances the group's sequence numbers whether or not recording is on, so dumps from
    different ranks line up by ``collective_seq_id``. ``inputs`` and ``outputs`` are the
    operation's tensors, ``caller`` the frame that called it (default: ``record``'s caller's
    caller, past the operation itself). Only what costs nothing is noted now, in one list: the
    shapes, dtypes and stack are read by :func:`describe`, which the operation calls once its
    MPI calls are posted, so that it runs while the data moves. (A 1 MB all-reduce's traffic
    evicts the interpreter's data from the caches: recording before the call added 4-11 us to
    it on 2 loaded ranks, recording after it was posted 1-2 us.) Whatever ends the operation
    describes the entry first: its completion, a failure, a dump.
    """
    op_id = pg.op_id = pg.op_id + 1
    if is_p2p:
        seq, p2p_seq = 0, pg.p2p_seq_id + 1
        pg.p2p_seq_id = p2p_seq
    else:
        seq, p2p_seq = pg.collective_seq_id + 1, 0
        pg.collective_seq_id = seq
    recorder = _RECORDER
    if not recorder.enabled:
        return None
    if not recorder.handler_installed:
        recorder.handler_installed = True
        install_signal_handler()
    if seq > pg.last_started:
        pg.last_started = seq
    record_id = recorder.record_id
    recorder.record_id = record_id + 1
    entry = [record_id, pg, name, is_p2p, op_id, seq, p2p_seq, _now(), inputs, outputs, 0, _thread(),
             caller or sys._getframe(2), None, None]  # past record and the operation itself
    recorder.ring[record_id % recorder.size] = entry
    return entry


def describe(entry):
    """Notes ``entry``'s shapes, dtypes and stack (while its operation is still in progress,
    so its caller's frames are still those that called it); drops its references to tensors
    and frames. Does nothing when done already or recording is off."""
    if entry is None or entry[_FRAMES] is not None:
        return
    entry[_FRAMES], entry[_CALLER] = _frames(entry[_CALLER]), None
    inputs, outputs = entry[_INPUTS], entry[_OUTPUTS]
    entry[_INPUTS] = described = [(t._data.shape, t.dtype) for t in inputs]
    entry[_OUTPUTS] = described if outputs is inputs else [(t._data.shape, t.dtype) for t in outputs]


def completed(entry, pg):
    if entry is not None:
        entry[_COMPLETED] = _now()
        if entry[_SEQ] > pg.last_completed:
            pg.last_completed = entry[_SEQ]


def failed(entry, pg, reason):
    """Notes why ``entry`` never completed, then dumps this rank's recorder."""
    if entry is not None:
        describe(entry)
        entry[_ERROR] = reason
    dump()


def dump_json(include_collectives=True, only_active=False):
    """This rank's recorder as torch's dump dictionary."""
    ring = _RECORDER.entries()
    for entry in ring:  # operations in progress (a SIGUSR1 dump)
        describe(entry)
    entries = [] if not include_collectives else [
        _as_dict(e) for e in ring if not (only_active and e[_COMPLETED])]
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
