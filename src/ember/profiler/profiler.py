"""The profiler: ``profile``, ``record_function`` and ``schedule``
(https://pytorch.org/docs/stable/profiler.html).

While recording, a :class:`_Recorder` watches op dispatch (``ember._ops.core.OBSERVERS``):
every op is an event named ``ember::<Op>``, every backward node an
``autograd::engine::evaluate_function: <Node>`` range holding the ops its backward ran, and
every ``record_function`` a range of its own. When nothing records, an op pays one list
truthiness check.
"""
import enum
import functools
import os
import socket
import threading
import time
import traceback
import warnings

from .. import _memory
from .._ops import core
from .._tensor import Tensor
from ..utils.flop_counter import op_flops
from .events import EventList, FunctionEvent

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction",
           "supported_activities", "tensorboard_trace_handler"]

# The recorders of running profilers; record_function opens its range in each.
_RECORDERS = []
_HERE = os.path.dirname(os.path.abspath(__file__))
_CORE = os.path.abspath(core.__file__)


def recording():
    """Whether a profiler is recording now (one list check): code that would open ranges
    only when profiled asks first (the compiler's generated drivers)."""
    return bool(_RECORDERS)


class ProfilerActivity(enum.Enum):
    """What to profile: ``CPU`` (host-side ops) or ``CUDA`` (device kernels)."""
    CPU = 0
    CUDA = 1


def supported_activities():
    """The activities this build can record: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a :func:`schedule` asks of the profiler at a step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A step -> :class:`ProfilerAction` function: after ``skip_first`` steps, cycles of
    ``wait`` idle steps, ``warmup`` steps, then ``active`` recorded steps, the last of which
    saves (``on_trace_ready`` runs after it); ``repeat`` cycles (0: until the end).
    ``skip_first_wait`` drops the wait of the first cycle. AssertionError for a negative
    count or ``active < 1`` (``torch.profiler.schedule``)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f"Invalid profiler schedule arguments: wait={wait}, warmup={warmup}, "
                             f"active={active}, repeat={repeat}, skip_first={skip_first}")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step should be non-negative, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` callback that writes each finished trace as Chrome trace JSON to
    ``dir_name/<worker_name>.<nanoseconds since the epoch>.pt.trace.json[.gz]`` (the folder is
    created; ``worker_name`` defaults to ``<host name>_<process id>``), where TensorBoard's
    profiler plugin and Perfetto find it (``torch.profiler.tensorboard_trace_handler``)."""
    dir_name = os.fspath(dir_name)

    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        # Nanoseconds, as torch: two cycles that end within one millisecond keep both traces.
        file_name = f"{name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


def _always_record(step):
    return ProfilerAction.RECORD


class _Recorder(core.Observer):
    """The dispatch observer of one recording: builds the event tree thread by thread."""

    def __init__(self, record_shapes, memory, with_flops, with_stack):
        self.record_shapes = record_shapes
        self.memory = memory          # memory_allocated, or None
        self.with_flops = with_flops
        self.with_stack = with_stack
        self.origin = time.perf_counter_ns()
        self.events = []
        self.open = {}                # thread id -> stack of open events

    def begin(self, name, inputs=None):
        thread = threading.get_native_id()
        stack = self.open.setdefault(thread, [])
        shapes = None
        if self.record_shapes and inputs is not None:
            shapes = [list(x.shape) if isinstance(x, Tensor) else [] for x in inputs]
        event = FunctionEvent(len(self.events), name, thread, 0.0, shapes,
                              _python_stack() if self.with_stack else None)
        if stack:
            event.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(event)
        stack.append(event)
        self.events.append(event)
        if self.memory is not None:
            event.cpu_memory_usage = -self.memory()
        event.start_us = (time.perf_counter_ns() - self.origin) / 1e3
        return event

    def end(self, event):
        stack = self.open.get(event.thread, ())
        if event not in stack:  # closed already: the recording stopped inside this range
            return
        event.end_us = (time.perf_counter_ns() - self.origin) / 1e3
        if self.memory is not None:
            event.cpu_memory_usage += self.memory()
        # An exception may leave inner ranges unclosed; they end with the range around them.
        while stack and stack.pop() is not event:
            pass

    def op_enter(self, op, inputs, attrs):
        self.begin("ember::" + op.name, inputs)

    def op_exit(self, op, inputs, attrs, output):
        stack = self.open.get(threading.get_native_id())
        if not stack:  # another thread stopped the recording while this op ran
            return
        event = stack[-1]
        if self.with_flops and output is not None:
            counted = op_flops(op, inputs, attrs, output)
            if counted is not None:
                event.flops = counted[1]
        self.end(event)

    def node_enter(self, node):
        self.begin("autograd::engine::evaluate_function: " + node.name())

    def node_exit(self, node):
        stack = self.open.get(threading.get_native_id())
        if stack:
            self.end(stack[-1])


def _python_stack():
    """The caller's frames, innermost first, as ``file(line): function``; the profiler's and
    the dispatcher's own frames are left out."""
    frames = traceback.extract_stack()
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not f.filename.startswith(_HERE) and os.path.abspath(f.filename) != _CORE]


class profile:
    """Records ops, backward nodes and ``record_function`` ranges run between ``start()`` and
    ``stop()`` (or inside ``with``), following ``torch.profiler.profile``.

    Args:
        activities: iterable of :class:`ProfilerActivity`; only host (CPU) activity is
            recorded, ``CUDA`` warns.
        schedule: step -> :class:`ProfilerAction` (see :func:`schedule`); default: record
            every step.
        on_trace_ready: ``fn(prof)`` called when a scheduled cycle ends and at ``stop()``.
        record_shapes: keep each op's input shapes (``Input Shapes`` column,
            ``key_averages(group_by_input_shape=True)``).
        profile_memory: bytes of live tensor storage each op adds, net of what it frees
            (``CPU Mem`` columns; ``ember.memory_allocated``'s count).
        with_stack: keep the Python call stack of each op (``Source Location``).
        with_flops: FLOPs of matrix products, convolutions and attention
            (``Total xFLOPs`` column; the rules of ``ember.utils.flop_counter``).
        acc_events: keep the events of every finished cycle of the schedule (default: only
            the latest cycle's).
        with_modules, experimental_config, execution_trace_observer,
        custom_trace_id_callback: accepted so PyTorch calls run; they change nothing here.

    Raises ValueError for an activity that is not a ProfilerActivity.

    Example::

        >>> import ember
        >>> with profile(record_shapes=True) as prof:
        ...     _ = ember.ones(2, 3) @ ember.ones(3, 4)
        >>> prof.key_averages()[0].key
        'ember::Matmul'
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 use_cuda=None, custom_trace_id_callback=None):
        activities = set(activities) if activities is not None else supported_activities()
        unknown = [a for a in activities if not isinstance(a, ProfilerActivity)]
        if unknown:
            raise ValueError(f"profile(activities=...): expected ProfilerActivity values, got {unknown}")
        if ProfilerActivity.CUDA in activities or use_cuda:
            warnings.warn("ember.profiler records host (CPU) activity only; device kernels are not "
                          "traced", stacklevel=2)
        self.activities = activities
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.acc_events = acc_events
        self.step_num = 0
        self._scheduled = schedule is not None
        self._recorder = None
        self._step_event = None
        self._action = None
        self._events = EventList()

    # ---- recording ----------------------------------------------------------------------
    def _memory_fn(self):
        if not self.profile_memory:
            return None
        return _memory.allocated

    def _begin_recording(self):
        self._recorder = _Recorder(self.record_shapes, self._memory_fn(), self.with_flops,
                                   self.with_stack)
        core.OBSERVERS.append(self._recorder)
        _RECORDERS.append(self._recorder)

    def _end_recording(self):
        recorder, self._recorder = self._recorder, None
        core.OBSERVERS.remove(recorder)
        _RECORDERS.remove(recorder)
        for stack in list(recorder.open.values()):  # other threads may be adding theirs
            for event in reversed(list(stack)):
                recorder.end(event)
        kept = list(self._events) if self.acc_events else []
        self._events = EventList(kept + recorder.events, self.profile_memory, self.with_flops)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _enter_step(self):
        action = self.schedule(self.step_num)
        if action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            if self._recorder is None:
                self._begin_recording()
            if self._scheduled:
                self._step_event = self._recorder.begin(f"ProfilerStep#{self.step_num}")
        return action

    def start(self):
        """Starts recording (or waits, as the schedule says)."""
        self._action = self._enter_step()

    def stop(self):
        """Stops recording; the events are then in :meth:`events`."""
        if self._recorder is not None:
            self._close_step_event()
            self._end_recording()

    def step(self):
        """Marks the end of a training step: a recorded cycle that ends here is handed to
        ``on_trace_ready``, and the schedule decides about the next step."""
        self._close_step_event()
        finished = self._action
        self.step_num += 1
        if finished is ProfilerAction.RECORD_AND_SAVE and self._recorder is not None:
            self._end_recording()
        elif self._recorder is not None and self.schedule(self.step_num) in (
                ProfilerAction.NONE, ProfilerAction.WARMUP):
            self._end_recording()
        self._action = self._enter_step()

    def _close_step_event(self):
        if self._step_event is not None and self._recorder is not None:
            self._recorder.end(self._step_event)
        self._step_event = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- results ------------------------------------------------------------------------
    def events(self):
        """The recorded :class:`~ember.profiler.events.FunctionEvent` list, in start order."""
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Per-name averages (see :meth:`EventList.key_averages`); RuntimeError when shapes are
        grouped but were not recorded."""
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("key_averages(group_by_input_shape=True) needs "
                               "profile(record_shapes=True)")
        if group_by_stack_n and not self.with_stack:
            raise RuntimeError("key_averages(group_by_stack_n=...) needs profile(with_stack=True)")
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Writes the trace as Chrome trace-event JSON (see :meth:`EventList.export_chrome_trace`)."""
        self._events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Writes the stacks for a flame graph (see :meth:`EventList.export_stacks`);
        AssertionError without ``with_stack=True``, as in PyTorch."""
        assert self.with_stack, "export_stacks() requires with_stack=True"
        self._events.export_stacks(path, metric)


class record_function:
    """A named range in the profile around a block (``with record_function("name"):``) or
    every call of a function (``@record_function("name")``); ops run inside are its
    children. Costs a list check when nothing records (``torch.profiler.record_function``).
    RuntimeError on entry when ``name`` is not a str, as in PyTorch.
    ``args`` is accepted for PyTorch compatibility and not recorded."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._events = []

    def __enter__(self):
        if not isinstance(self.name, str):
            raise RuntimeError(f"record_function: expected a str name, got {type(self.name).__name__}")
        self._events = [(r, r.begin(self.name)) for r in _RECORDERS]
        return self

    def __exit__(self, *exc):
        for recorder, event in self._events:
            recorder.end(event)
        self._events = []
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped
