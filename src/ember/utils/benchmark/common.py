"""What a Timer measured and how to read it (``torch.utils.benchmark.utils.common``).

A :class:`Measurement` holds raw block times (seconds per block of ``number_per_run`` runs);
its statistics are per run: median, mean and the interquartile range (IQR, p75 - p25, with
linearly interpolated quantiles as ``torch.quantile``).
"""
import collections
import dataclasses
import math
import textwrap

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds: finer than this a Python timer cannot resolve
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What was timed: the statement, its setup and the labels a :class:`Compare` table uses
    (``label`` names the table, ``sub_label`` the row, ``description`` the column)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (or the one-line statement), with the sub-label after a colon."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        """The setup code as the report shows it: empty for none, in a block for several lines."""
        if self.setup in ("", "pass"):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """The title, description and setup of the task, one section a line, as the report heads."""
        sections = [s for s in (self.title, self.description or "", self.setup_str()) if s]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """Block times of one statement. ``times`` are per run (seconds); ``median``, ``mean``,
    ``iqr`` summarise them; the TaskSpec's fields (``label``, ``stmt``, ...) read through."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def _stats(self):
        # The statistics are computed once; raw_times are not expected to change afterwards.
        stats = self.__dict__.get("_cached")
        if stats is None:
            # course:begin 19/measurement-stats
            # hint: (sorted times, median, mean, 25th percentile, 75th percentile) of self.times, with
            # hint: linear interpolation between samples as numpy.quantile does (torch.utils.benchmark)
            times = np.sort(np.asarray(self.times, dtype=np.float64))
            p25, median, p75 = np.quantile(times, [0.25, 0.5, 0.75])
            stats = self.__dict__["_cached"] = (tuple(times), float(median), float(times.mean()),
                                                 float(p25), float(p75))
            # course:end 19/measurement-stats
        return stats

    @property
    def median(self):
        return self._stats[1]

    @property
    def mean(self):
        return self._stats[2]

    @property
    def iqr(self):
        return self._stats[4] - self._stats[3]

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        """True when IQR / median is below ``threshold``."""
        return self.iqr / self.median < threshold

    @property
    def significant_figures(self):
        """Digits the interquartile points support (a 90% interval of their mean, z = 1.645),
        between 1 and 4; ``Compare.trim_significant_figures`` rounds to them."""
        times = self._stats[0]
        n = len(times)
        middle = np.asarray(times[n // 4:math.ceil(3 * n / 4)])
        interval = max(1.645 * middle.std() / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(int(math.floor(math.log10(self.median / interval))), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def _warnings(self):
        if self.meets_confidence(_IQR_WARN_THRESHOLD):
            return ()
        reason = ("This suggests significant environmental influence."
                  if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD)
                  else "This could indicate system fluctuation.")
        return (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the median "
                f"measurement.\n           {reason}",)

    @property
    def has_warnings(self):
        return bool(self._warnings)

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        times, median, _, p25, p75 = self._stats
        n = len(times)
        unit, scale = select_unit(median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({p25 / scale:.2f} to {p75 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads}")
        lines += self._warnings
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One Measurement per TaskSpec, pooling the per-run times (``number_per_run`` 1)."""
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t):
    """``(unit, seconds per unit)`` that puts ``t`` seconds in [1, 1000)."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    """The English name of a time unit: ``"us"`` gives ``"microsecond"`` (KeyError for others)."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (int(math.ceil(math.log10(abs(x)))) - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements):
    """The distinct ``elements`` as a list, in the order of their first appearance."""
    return list(dict.fromkeys(elements))
