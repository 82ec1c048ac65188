"""What a milestone is, and what running one returns."""
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .plotting import plot_histories


_compiling = [False]


@contextlib.contextmanager
def compiled_steps(enabled=True):
    """Within the block, :func:`~.training.fit` compiles its training step with
    ``ember.compile`` (``ember milestones run NAME --compile``)."""
    _compiling.append(bool(enabled))
    try:
        yield
    finally:
        _compiling.pop()


def compiling():
    """Whether training steps are compiled here (see :func:`compiled_steps`)."""
    return _compiling[-1]


@dataclass(frozen=True)
class Threshold:
    """A bound a metric must meet: ``value >= bound``, or ``value <= bound`` if ``at_most``."""

    metric: str
    bound: float
    at_most: bool = False

    def met_by(self, value):
        return value <= self.bound if self.at_most else value >= self.bound

    def __str__(self):
        return f"{'<=' if self.at_most else '>='} {self.bound:.2f}"


@dataclass
class History:
    """Per-epoch curves of one training run: mean training ``loss``, evaluation ``accuracy``
    and, where the evaluation computes it, the ``test_loss`` on the same held-out data.
    ``steps`` and ``step_seconds``: the training steps and their wall-clock time; with compiled steps,
    ``compile_seconds`` is the part of it beyond ``steps`` times the median step (capture, code
    generation, the C compiler or the disk cache, the first call at each new size) and
    ``graphs`` the number of graphs compiled, else None and 0."""

    loss: list = field(default_factory=list)
    accuracy: list = field(default_factory=list)
    test_loss: list = field(default_factory=list)
    # timings: not compared (a seed gives one result, not one time)
    steps: int = field(default=0, compare=False)
    step_seconds: float = field(default=0.0, compare=False)
    compile_seconds: float = field(default=None, compare=False)
    graphs: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Check:
    """One metric of a run held against its threshold."""

    threshold: Threshold
    value: float

    @property
    def metric(self):
        return self.threshold.metric

    @property
    def passed(self):
        return self.threshold.met_by(self.value)


@dataclass
class Result:
    """The outcome of :meth:`Milestone.run`.

    Attributes:
        milestone: the milestone's name.
        checks: one :class:`Check` per threshold, in the milestone's order.
        histories: per-epoch curves, keyed by the model they belong to.
        seconds: wall-clock time of training and evaluation (plots excluded).
        plots: PNG files written (empty without ``plot_dir``).
        compiled: the training steps ran through ``ember.compile``.
    """

    milestone: str
    checks: list
    histories: dict
    seconds: float
    plots: list = field(default_factory=list)
    compiled: bool = False

    @property
    def passed(self):
        return all(check.passed for check in self.checks)

    def step_note(self):
        """One line on the training steps' time (None without timed steps). A compiled run adds
        what its first calls cost (capture, code generation, the C compiler or its cache) and
        the eager step time above which compiling pays back in a run this long: the eager
        run's line gives that step time, to compare."""
        timed = [h for h in self.histories.values() if h.steps]
        if not timed:
            return None
        steps, total = sum(h.steps for h in timed), sum(h.step_seconds for h in timed)
        line = f"{self.milestone}{' (compiled)' * self.compiled}: {steps} training steps in {total:.2f} s"
        compiled = [h for h in timed if h.compile_seconds is not None]
        if not compiled:
            return line + f", {1e3 * total / steps:.2f} ms a step"
        compiling, graphs = sum(h.compile_seconds for h in compiled), sum(h.graphs for h in compiled)
        return line + (f", {compiling:.2f} s of it first calls ({graphs} graph{'s' * (graphs != 1)} captured, "
                       f"compiled or loaded from the cache), {1e3 * (total - compiling) / steps:.2f} ms a step "
                       f"after: compiling pays where an eager step takes over {1e3 * total / steps:.2f} ms")

    @property
    def metrics(self):
        return {check.metric: check.value for check in self.checks}


@dataclass(frozen=True)
class Milestone:
    """A landmark result, re-run on ember.

    Attributes:
        name: the command-line name (``ember milestones run NAME``).
        year: year of publication.
        story: one line on what was shown, and by whom.
        thresholds: the bounds a run must meet to reproduce the result.
        train: ``train(fast, seed, quiet) -> (metrics, histories)``: trains and evaluates;
            ``metrics`` maps each threshold's metric name to its value, ``histories`` maps a
            model's label to its :class:`History`.
        accuracy_label: what the accuracy curves measure, for the plot's axis.
        extra_plots: ``extra_plots(result, plot_dir) -> [paths]`` draws figures beyond the
            curves (None: none).
    """

    name: str
    year: int
    story: str
    thresholds: tuple
    train: Callable
    accuracy_label: str = "accuracy"
    extra_plots: Callable = None

    def run(self, fast=False, plot_dir=None, quiet=False, seed=0, compile=False):
        """Train, evaluate, check every threshold and optionally plot the curves.

        Args:
            fast: smaller settings (fewer epochs) for tests; thresholds are unchanged.
            plot_dir: directory for ``<name>-loss.png`` and ``<name>-accuracy.png``; created
                if missing. None writes nothing.
            quiet: hide the progress bars (they are hidden anyway when stderr is not a TTY).
            seed: seed of initialisation, shuffling and data; a seed gives one result.
            compile: train with each training step compiled by ``ember.compile`` (the steps
                of :func:`~ember.milestones.training.fit`); thresholds are unchanged.

        Returns:
            :class:`Result`.

        Raises:
            ImportError: ``plot_dir`` is given and matplotlib is not installed.
        """
        start = time.perf_counter()
        with compiled_steps(compile):
            metrics, histories = self.train(fast=fast, seed=seed, quiet=quiet)
        seconds = time.perf_counter() - start
        checks = [Check(threshold, metrics[threshold.metric]) for threshold in self.thresholds]
        result = Result(self.name, checks, histories, seconds, compiled=bool(compile))
        if plot_dir is not None:
            result.plots = self.plot(result, plot_dir)
        return result

    def plot(self, result, plot_dir):
        """Writes ``result``'s curves into ``plot_dir`` (created if missing); returns the PNG
        paths. Raises ImportError without matplotlib, OSError if the files cannot be written."""
        paths = plot_histories(result.histories, Path(plot_dir), self.name, title=f"{self.name} ({self.year})",
                               accuracy_label=self.accuracy_label)
        return paths + (self.extra_plots(result, Path(plot_dir)) if self.extra_plots else [])
