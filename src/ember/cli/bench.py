"""``ember bench [NAME ...] [--cpu-time] [--quick]``: run the side-by-side suites of
``benchmarks/`` and print one table of their figures.

Each suite is a script ``benchmarks/bench_NAME.py`` that prints its own table and, last, one
JSON line: ``{"benchmark": ..., "timer": ..., "ember_over_torch": {case: ratio},
"ember": {case: [value, unit]}}``, with ``"ratios"`` in place of ``"ember_over_torch"`` or a
bare ``{case: ratio}`` in older suites. A ratio is ember's figure over torch's (time: lower
is better for ember) unless its name says otherwise (``{case: {"a_over_b": ratio}}``).
Without torch installed, the suites measure ember alone and give only ``"ember"``; the table
then shows ember's own figures (and the ratios of suites that compare ember with itself).

The suites ship with ember's source (next to ``src/``), not with an installed wheel.
"""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import ember

from .table import format_table

SUITE_PREFIX = "bench_"


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "bench", help="run the benchmark suites and print ember/torch ratios",
        description="Run the suites in benchmarks/ (each in its own Python process) and print "
                    "one table of ember/torch ratios, or of ember's own figures when torch is "
                    "not installed. Exit status 1 if a suite fails or no suites are found.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="suites to run (bench_NAME.py; default: all of them)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="one thread each, timed by process CPU time where a suite supports "
                             "it (others run on one thread, timed by the wall clock)")
    parser.add_argument("--quick", action="store_true",
                        help="one round per case instead of the best of several (rough figures)")
    parser.set_defaults(handler=run_benchmarks, usage_error=parser.error)


def benchmarks_dir():
    """The ``benchmarks`` folder of ember's source checkout, or None.

    It is looked for beside the package folder and one level up, which covers the ``src``
    layout (``checkout/src/ember``) and a flat one (``checkout/ember``), whether ember is
    imported from the checkout or installed from it in editable mode.
    """
    package = Path(ember.__file__).resolve().parent
    for root in package.parents[:2]:
        candidate = root / "benchmarks"
        if any(candidate.glob(f"{SUITE_PREFIX}*.py")):
            return candidate
    return None


def find_suites(directory):
    """``{name: path}`` of ``directory``'s ``bench_NAME.py`` scripts, by name."""
    return {path.stem[len(SUITE_PREFIX):]: path
            for path in sorted(Path(directory).glob(f"{SUITE_PREFIX}*.py"))}


def suite_command(path, cpu_time, quick):
    """The command line and environment that run the suite at ``path``.

    A suite's options are read from its source: ``--cpu-time`` is passed to suites that define
    it; the others get one BLAS and OpenMP thread through the environment. ``--quick`` passes
    ``--repeat 1``.
    """
    source = path.read_text(encoding="utf-8")
    command = [sys.executable, str(path)]
    env = dict(os.environ)
    if cpu_time and '"--cpu-time"' in source:
        command.append("--cpu-time")
    elif cpu_time:
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
    if quick and '"--repeat"' in source:
        command += ["--repeat", "1"]
    return command, env


def last_json_line(stdout):
    """The last line of ``stdout`` that is a JSON object, parsed; None if there is none."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def figures(line):
    """``(ratios, ember_figures, timer)`` of a suite's JSON line: ``{case: ratio}`` (nested
    ratios flattened to ``case.name``), ``{case: (value, unit)}`` and the timer's name (or
    None)."""
    if any(key in line for key in ("ember_over_torch", "ratios", "ember")):
        ratios = line.get("ember_over_torch", line.get("ratios", {}))
        own = {case: tuple(pair) for case, pair in line.get("ember", {}).items()}
        timer = line.get("timer")
    else:
        ratios, own, timer = line, {}, None
    flat = {}
    for case, value in ratios.items():
        if isinstance(value, dict):
            flat.update({f"{case}.{name}": inner for name, inner in value.items()})
        elif isinstance(value, (int, float)):
            flat[case] = value
    return flat, own, timer


def format_value(value, unit):
    """``value`` in ``unit`` for a person: seconds in s/ms/us, bytes in MB."""
    if unit == "s":
        for scale, name in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
            if value >= scale or name == "us":
                return f"{value / scale:.3g} {name}"
    if unit == "B":
        return f"{value / 2**20:.3g} MB"
    return f"{value:.4g} {unit}".rstrip()


# Abbreviations in the suites' case keys, in words a reader knows.
WORDS = {"fwd": "forward", "bwd": "backward", "grad": "with gradient", "mlp": "MLP", "lstm": "LSTM",
         "gru": "GRU", "gpt": "GPT", "lenet": "LeNet", "numpy": "NumPy", "conv2d": "Conv2d", "tok": "tokens"}
BUSY_LOAD_PER_CPU = 0.75  # above this, other processes share the cores and figures swing 20-60x


def case_in_words(case):
    """``add_tiny_grad`` -> ``add tiny with gradient``; ``loop.a_over_b`` -> ``loop: a/b``."""
    case, _, ratio_name = case.partition(".")
    words = " ".join(WORDS.get(word, word) for word in case.split("_"))
    return f"{words}: {ratio_name.replace('_over_', '/')}" if ratio_name else words


def better(unit):
    """Which way is better for a figure in ``unit`` and for ember's ratio over torch of it:
    times and bytes ``lower``; rates (``tok/s``) and speed-ups (``x``) ``higher``."""
    return "higher" if unit.endswith("/s") or unit == "x" else "lower"


def machine_load():
    """``(one-minute load average, CPU count)``; load None where the OS has no load average."""
    try:
        return os.getloadavg()[0], os.cpu_count() or 1
    except (AttributeError, OSError):
        return None, os.cpu_count() or 1


def busy_warning():
    """A warning line if the machine is busy enough to distort the figures, else None."""
    load, cpus = machine_load()
    if load is None or load <= BUSY_LOAD_PER_CPU * cpus:
        return None
    return (f"warning: the machine is busy (load average {load:.1f} on {cpus} CPUs): figures swing "
            f"20-60x under load; rerun when it is idle, or with --cpu-time")


def run_benchmarks(args):
    directory = benchmarks_dir()
    if directory is None:
        print("ember bench: no benchmarks/ folder with bench_*.py scripts beside ember's source "
              f"({Path(ember.__file__).resolve().parent}); the suites come with a source "
              "checkout (pip install -e .), not with an installed wheel", file=sys.stderr)
        return 1
    suites = find_suites(directory)
    unknown = [name for name in args.names if name not in suites]
    if unknown:
        args.usage_error(f"unknown benchmark suite {unknown[0]!r}; valid names: {', '.join(suites)}")
    with_torch = importlib.util.find_spec("torch") is not None
    warnings = [busy_warning()]
    rows, failed = [], []
    for name in dict.fromkeys(args.names) or suites:
        print(f"ember bench: running {suites[name].name}", file=sys.stderr, flush=True)
        command, env = suite_command(suites[name], args.cpu_time, args.quick)
        completed = subprocess.run(command, capture_output=True, text=True, env=env)
        line = last_json_line(completed.stdout) if completed.returncode == 0 else None
        if line is None:
            failed.append(name)
            print(f"ember bench: {suites[name].name} failed (exit status {completed.returncode}, "
                  f"no JSON line):\n{completed.stderr.strip()}", file=sys.stderr)
            continue
        ratios, own, timer = figures(line)
        for case in dict.fromkeys([*own, *ratios]):
            unit = own[case][1] if case in own else ""
            rows.append((name, case_in_words(case), format_value(*own[case]) if case in own else "",
                         f"{ratios[case]:.2f}" if case in ratios else "", better(unit), timer or ""))
    warnings.append(busy_warning())
    if rows:
        headers = ["suite", "case", "ember", "ratio", "better", "timer"]
        if not any(row[3] for row in rows):
            headers, rows = headers[:3] + headers[4:], [row[:3] + row[4:] for row in rows]
        print(format_table(headers, rows))
        if with_torch:
            print("ratio: ember/torch, unless the case names its own (a/b); 'better' says which way "
                  "is better for both the figure and the ratio")
        else:
            print("torch is not installed: ember's own figures; ratios only where a suite "
                  "compares ember with itself (a_over_b: a/b)")
    for warning in dict.fromkeys(w for w in warnings if w):
        print(warning, file=sys.stderr)
    return 1 if failed else 0
