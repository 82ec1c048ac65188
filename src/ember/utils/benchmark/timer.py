"""``Timer``: times a Python statement the way ``torch.utils.benchmark.Timer`` does
(https://pytorch.org/docs/stable/benchmark_utils.html).

Each measurement runs the statement ``number`` times in a block and records the block's time
(``timer``, ``time.perf_counter`` by default); BLAS runs on ``num_threads`` threads meanwhile.
The statement's globals get ``torch`` and ``ember``, both bound to ember, unless given.
"""
import enum
import textwrap
import time
import timeit

import numpy as np
from threadpoolctl import threadpool_limits

from .common import Measurement, TaskSpec

__all__ = ["Timer", "Language"]


class Language(enum.Enum):
    """The language of a :class:`Timer`'s statement; ember times Python only (CPP raises
    ValueError where PyTorch would compile it)."""
    PYTHON = 0
    CPP = 1


def _clean(code, name):
    if not isinstance(code, str):
        raise ValueError(f"Currently only a `str` {name} is supported, got {type(code).__name__}.")
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times ``stmt`` after running ``setup`` once, with ``globals`` as its namespace.

    Args:
        stmt, setup (str): Python code; ``global_setup`` is accepted for C++ parity only.
        timer: a zero-argument clock in seconds.
        globals (dict): names the code sees (copied).
        label, sub_label, description, env: labels for :class:`Compare` (table, row, column,
            environment).
        num_threads (int): BLAS threads while timing.
        language: ``"python"``/``"py"``/``Language.PYTHON``; C++ is not supported
            (NotImplementedError).

    Raises ValueError for a statement or setup that is not a string, or an unknown language.
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=time.perf_counter, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if language in ("py", "python"):
            language = Language.PYTHON
        if language is Language.CPP or language in ("c++", "cpp"):
            raise NotImplementedError("ember.utils.benchmark.Timer times Python statements only")
        if language is not Language.PYTHON:
            raise ValueError(f"Invalid language `{language}`.")
        import ember
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ember)
        self._globals.setdefault("ember", ember)
        self._task_spec = TaskSpec(stmt=_clean(stmt, "stmt"), setup=_clean(setup, "setup"),
                                   global_setup=global_setup, label=label, sub_label=sub_label,
                                   description=description, env=env, num_threads=num_threads)
        self._timer = timeit.Timer(stmt=self._task_spec.stmt, setup=self._task_spec.setup or "pass",
                                   timer=timer, globals=self._globals)

    def _timeit(self, number):
        # a floor keeps ratios with the time finite when a clock does not tick over a block
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """One block of ``number`` runs after a warm-up block of ``number // 100`` (at least 2):
        a Measurement with one raw time."""
        with threadpool_limits(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        """Raises NotImplementedError, as PyTorch's: use :meth:`blocked_autorange` or :meth:`timeit`."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        """Raises NotImplementedError, as PyTorch's: use :meth:`blocked_autorange`."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time):
        """Runs per block: grown tenfold until the timer's own overhead is under 1e-4 of a block
        lasting at least min_run_time / 1000, or a block exceeds min_run_time."""
        with threadpool_limits(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

    def _measure(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, times = 0.0, []
        with threadpool_limits(self._task_spec.num_threads):
            while True:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback is not None:
                    callback(number, spent)
                done = stop(times)
                if max_run_time is not None and total > max_run_time:
                    break
                if total >= min_run_time and done:
                    break
        return Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a size found first (see above) until ``min_run_time`` seconds were timed;
        ``callback(number, seconds)`` sees every block. Returns a Measurement."""
        number = self._block_size(min_run_time)
        return self._measure(number, lambda times: True, min_run_time, callback=callback)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks until more than 3 were timed and IQR / median < ``threshold``, at least
        ``min_run_time`` and at most ``max_run_time`` seconds. Returns a Measurement."""
        number = self._block_size(min_run_time=0.05)

        def confident(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        return self._measure(number, confident, min_run_time, max_run_time, callback)
