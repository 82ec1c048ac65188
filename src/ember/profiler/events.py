"""Profiler events, their per-name averages and the summary table
(``torch.autograd.profiler_util``: ``FunctionEvent``, ``FunctionEventAvg``, ``EventList``).

Times are microseconds (float) of wall time on the host, as in PyTorch; memory is bytes of
live tensor storage. An event's *self* time is its duration less its direct children's.
"""
import gzip
import json
import math
import os

from ..serialization import write_atomically

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList"]

# The attributes an averaged row can be sorted by (``table(sort_by=...)``). The device ones
# are there so PyTorch's usual ``sort_by="cuda_time_total"`` runs: ember traces no device
# kernels, so they are 0 (PyTorch reads "cuda" in a key as "device", as here).
SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage",
             "self_cpu_memory_usage", "count", "flops", "device_time", "device_time_total",
             "self_device_time_total", "device_memory_usage", "self_device_memory_usage")


class _Summary:
    """What events and averages share: the attributes of device work (0: ember traces host
    activity only) and PyTorch's formatted times (``cpu_time_total_str``, ...)."""
    device_time = device_time_total = self_device_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)


class FunctionEvent(_Summary):
    """One op, backward node or ``record_function`` range.

    Attributes: ``id``, ``name`` (also ``key``; ``"ProfilerStep*"`` for every step range, so
    the steps average into one row as in PyTorch), ``trace_name`` (the name as recorded,
    ``"ProfilerStep#3"``, which the Chrome trace shows), ``thread``, ``start_us``/``end_us`` (from
    the profile's start), ``cpu_parent``/``cpu_children``, ``input_shapes`` (list of lists,
    empty for non-tensor inputs, when ``record_shapes``), ``stack`` (``"file(line): func"``
    lines, innermost first, when ``with_stack``), ``flops``, ``cpu_memory_usage`` (bytes).
    """

    def __init__(self, id, name, thread, start_us, input_shapes=None, stack=None, flops=0):
        self.id = id
        self.trace_name = name
        self.name = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.flops = flops
        self.cpu_memory_usage = 0
        self.cpu_parent = None
        self.cpu_children = []
        self.count = 1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def cpu_time(self):
        """The duration (us): one call's average is the call."""
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} input_shapes={self.input_shapes}>")


class FunctionEventAvg(_Summary):
    """The events sharing a key (name, and input shapes or stack when grouped by them):
    ``count``, ``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time`` (average per call),
    ``flops``, ``cpu_memory_usage``, ``self_cpu_memory_usage``, and the first event's
    ``input_shapes`` and ``stack``. ``add`` takes an event or another average."""

    def __init__(self, first):
        self.key = first.key
        self.input_shapes = first.input_shapes
        self.stack = first.stack
        self.cpu_parent = first.cpu_parent
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.flops = self.cpu_memory_usage = self.self_cpu_memory_usage = 0

    def add(self, event):
        """Adds ``event``'s count, times and memory to these totals (events of one key); returns self."""
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.flops += event.flops
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} count={self.count} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events (or of averages) with PyTorch's summaries."""

    def __init__(self, events=(), profile_memory=False, with_flops=False):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        """Sum of self times (us): the time spent in all profiled work."""
        return sum(e.self_cpu_time_total for e in self)

    def total_average(self):
        """One :class:`FunctionEventAvg` keyed ``"Total"`` summing every event (or average)."""
        total = FunctionEventAvg(FunctionEvent(-1, "Total", 0, 0.0))
        for e in self:
            total.add(e)
        return total

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One :class:`FunctionEventAvg` per event name, in order of first appearance; with
        ``group_by_input_shape`` per (name, input shapes) (the rows keep input shapes only
        then), with ``group_by_stack_n`` > 0 per
        (name, innermost n stack lines)."""
        groups = {}
        for e in self:
            key = (e.key,)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(e)
                if not group_by_input_shape:  # one row stands for calls of many shapes
                    avg.input_shapes = []
            avg.add(e)
        return EventList(groups.values(), self._profile_memory, self._with_flops)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The summary PyTorch prints: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU
        time avg, [CPU Mem, Self CPU Mem], # of Calls, [Input Shapes], [Source Location],
        [Total xFLOPs]; rows sorted by ``sort_by`` (descending), at most ``row_limit``.

        Raises AttributeError naming the valid keys when ``sort_by`` is not one of them.
        """
        return _build_table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only, time_unit,
                            self._profile_memory, self._with_flops)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Writes the events' stacks in the folded format of flame graph tools
        (``flamegraph.pl``, speedscope), weighted by ``metric`` (an attribute name from
        ``SORT_KEYS``; AttributeError otherwise). Written atomically."""
        text = _folded_stacks(self, metric).encode()
        write_atomically(os.fspath(path), lambda file: file.write(text))

    def export_chrome_trace(self, path):
        """Writes the events as Chrome trace-event JSON (complete events, ``"ph": "X"``, times in
        us), which chrome://tracing and https://ui.perfetto.dev open; gzip-compressed when
        ``path`` ends in ``.gz``, as PyTorch does. Written atomically."""
        pid = os.getpid()
        trace = [{"name": e.trace_name, "ph": "X", "cat": "cpu_op", "ts": e.start_us,
                  "dur": e.cpu_time_total, "pid": pid, "tid": e.thread,
                  "args": _trace_args(e)} for e in self]
        text = json.dumps({"traceEvents": trace, "displayTimeUnit": "ms"}).encode()
        if os.fspath(path).endswith(".gz"):
            text = gzip.compress(text)
        write_atomically(os.fspath(path), lambda file: file.write(text))


def _folded_stacks(events, metric):
    """Brendan Gregg's folded format for flame graphs: per event with a stack, its frames
    outermost first joined by ``;`` (blanks and ``;`` in a frame become ``_``), a space, and
    the integer ``metric`` (events whose value rounds to 0 are left out)."""
    attribute = metric.replace("cuda", "device")
    if attribute not in SORT_KEYS:
        raise AttributeError(f"export_stacks(metric={metric!r}): unknown metric; valid are "
                             f"{', '.join(SORT_KEYS)}")
    blanks = str.maketrans(" ;\t\n", "____")
    lines = []
    for e in events:
        value = int(getattr(e, attribute))
        if e.stack and value > 0:
            lines.append(";".join(frame.translate(blanks) for frame in reversed(e.stack)) + f" {value}\n")
    return "".join(lines)


def _trace_args(e):
    args = {}
    if e.input_shapes:
        args["Input Dims"] = e.input_shapes
    if e.flops:
        args["flops"] = e.flops
    if e.stack:
        args["Call stack"] = ";".join(e.stack)
    return args


def _build_table(events, sort_by, row_limit, max_src_column_width, max_name_column_width,
                 max_shapes_column_width, header, top_level_events_only, time_unit,
                 profile_memory, with_flops):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attribute = sort_by.replace("cuda", "device")
        if attribute not in SORT_KEYS:
            raise AttributeError(f"table(sort_by={sort_by!r}): unknown sort key; valid keys are "
                                 f"{', '.join(SORT_KEYS)} (cuda_... for device_...)")
        events = sorted(events, key=lambda e: getattr(e, attribute), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width))
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        widths.append(min(max(len(s) for st in stacks for s in st) + 4, max_src_column_width))
        aligns.append("<")
    flops = [e.flops for e in events if e.flops > 0]
    if with_flops and flops:
        scale, unit = _flops_unit(min(flops))
        headers.append(f"Total {unit}")
        widths.append(12)
        aligns.append(">")

    def row(cells):
        return "".join(f"{str(c):{a}{w}}  " for c, a, w in zip(cells, aligns, widths))
    separator = "".join("-" * w + "  " for w in widths)
    total = sum(e.self_cpu_time_total for e in events)

    def fmt(us):
        return _format_time(us, time_unit)

    lines = []
    if header is not None:
        lines += ["=" * (len(separator) - 2), header]
    if top_level_events_only:
        lines += ["=" * (len(separator) - 2), "This report only display top-level ops statistics"]
    lines += [separator, row(headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key if len(e.key) < max_name_column_width - 3 else e.key[:max_name_column_width - 3] + "..."
        cells = [name, _share(e.self_cpu_time_total, total), fmt(e.self_cpu_time_total),
                 _share(e.cpu_time_total, total), fmt(e.cpu_time_total), fmt(e.cpu_time)]
        if profile_memory:
            cells += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        cells.append(e.count)
        if has_shapes:
            cells.append(str(e.input_shapes)[:widths[len(cells)]])
        if stacks:
            cells.append(_trim(e.stack[0], widths[len(cells)]) if e.stack else "")
        if with_flops and flops:
            cells.append(f"{e.flops * scale:8.3f}" if e.flops > 0 else "--")
        lines.append(row(cells))
    lines += [separator, f"Self CPU time total: {fmt(total)}"]
    return "\n".join(lines) + "\n"


def _format_time(us, unit=None):
    if unit == "s" or (unit is None and us >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and us >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _share(us, total):
    return "NaN" if total == 0 else f"{us * 100.0 / total:.2f}%"


def _format_memory(nbytes):
    for size, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _flops_unit(smallest):
    units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
    power = int(max(0.0, min(math.log10(smallest) / 3, len(units) - 1.0)))
    return 10.0 ** (-3 * power), units[power]


def _trim(path, width):
    if len(path) > width:
        path = "..." + path[len(path) - width + 3:]
    return path
