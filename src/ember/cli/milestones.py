"""``ember milestones list`` and ``ember milestones run NAME [NAME ...] | all`` (``--plot DIR``,
``--fast``, ``--quiet``, ``--compile``, ``--data-dir DIR`` for lenet)."""
import argparse
import sys
import tempfile
from pathlib import Path

from .. import milestones as registry
from .table import format_table


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "milestones", help="re-run landmark results of neural-network history",
        description="Re-run landmark results of neural-network history on ember.")
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    list_parser = actions.add_parser("list", help="show the milestones")
    list_parser.set_defaults(handler=list_milestones)

    run_parser = actions.add_parser(
        "run", help="train milestones and check their thresholds",
        description="Train milestones and check their thresholds. Exit status 1 if any is missed.")
    run_parser.add_argument("names", nargs="+", metavar="NAME", type=milestone_name,
                            help=f"milestones to run: {', '.join(registry.MILESTONES)}, or all")
    run_parser.add_argument("--plot", metavar="DIR",
                            help="write loss and accuracy curves as PNG files into DIR")
    run_parser.add_argument("--fast", action="store_true",
                            help="fewer epochs (for tests); thresholds are unchanged")
    run_parser.add_argument("--quiet", action="store_true", help="hide progress bars")
    run_parser.add_argument("--compile", action="store_true",
                            help="compile each training step with ember.compile (same thresholds)")
    run_parser.add_argument(
        "--data-dir", metavar="DIR", dest="lenet_on_data", type=lenet_on_data,
        help="lenet only: train on the image files in DIR instead of the bundled digits: "
             "MNIST or Fashion-MNIST IDX files (train-images-idx3-ubyte[.gz], ...) or CIFAR-10 "
             "Python batches (cifar-10-batches-py/data_batch_1, ...), told apart by file name")
    run_parser.set_defaults(handler=run_milestones, usage_error=run_parser.error)


def milestone_name(value):
    """A milestone's name or ``all``; anything else is a usage error naming the valid ones."""
    if value != "all" and value not in registry.MILESTONES:
        raise argparse.ArgumentTypeError(
            f"unknown milestone {value!r}; valid names: {', '.join(registry.MILESTONES)}, all")
    return value


def lenet_on_data(value):
    """The lenet milestone on the files in directory ``value``; a usage error if it has none."""
    try:
        return registry.lenet.milestone(value)
    except FileNotFoundError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def list_milestones(args):
    """Prints the ladder in at most 100 columns: thresholds one per line, stories wrapped."""
    rows = [(m.name, m.year, "\n".join(f"{t.metric} {t}" for t in m.thresholds), m.story)
            for m in registry.MILESTONES.values()]
    print(format_table(["name", "year", "threshold", "story"], rows, wrap={2: 34, 3: 43}))
    return 0


def plot_dir_problem(directory):
    """Why plots cannot be written into ``directory`` (created if missing), or None; checked
    before training so that a run never ends in a failed plot."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "drawing plots needs matplotlib: pip install 'ember[plot]'"
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        return error.strerror or str(error)
    return None


def run_milestones(args):
    """Trains the chosen milestones one by one and prints the table of results. Ctrl-C prints
    the results so far and exits 130; an error prints them and one line naming it (exit 1)."""
    names = list(dict.fromkeys(  # "all" expands in ladder order; repeats run once
        name for given in args.names for name in (registry.MILESTONES if given == "all" else [given])))
    if args.lenet_on_data is not None and "lenet" not in names:
        args.usage_error("--data-dir applies to the lenet milestone, which is not being run")
    chosen = [args.lenet_on_data if name == "lenet" and args.lenet_on_data is not None
              else registry.get(name) for name in names]
    if args.plot is not None and (problem := plot_dir_problem(args.plot)) is not None:
        print(f"ember milestones run: cannot write plots to {args.plot}: {problem}", file=sys.stderr)
        return 1
    results, plots, problem = [], [], None
    try:
        for milestone in chosen:
            results.append(milestone.run(fast=args.fast, quiet=args.quiet, compile=args.compile))
            if args.plot is not None:
                plots += milestone.plot(results[-1], args.plot)
    except KeyboardInterrupt:
        problem = "interrupted (Ctrl-C); the results so far are above"
    except Exception as error:  # one clear line; the table of what finished is kept
        problem = f"{milestone.name} failed: {type(error).__name__}: {error}"
    _print_results(results, plots)
    if problem is not None:
        print(f"ember milestones run: {problem}", file=sys.stderr)
        return 130 if problem.startswith("interrupted") else 1
    missed = [(result.milestone, check) for result in results for check in result.checks
              if not check.passed]
    for name, check in missed:
        print(f"missed: {name}: {check.metric} = {check.value:.4f}, needs {check.threshold}",
              file=sys.stderr)
    return 1 if missed else 0


def _print_results(results, plots):
    rows = []
    for result in results:
        for index, check in enumerate(result.checks):
            name = f"{result.milestone} (compiled)" if result.compiled else result.milestone
            rows.append((name, check.metric, f"{check.value:.4f}", str(check.threshold),
                         "pass" if check.passed else "FAIL",
                         f"{result.seconds:.1f}" if index == 0 else ""))
    if rows:
        print(format_table(["milestone", "metric", "value", "threshold", "result", "seconds"], rows),
              flush=True)
    for note in filter(None, (result.step_note() for result in results)):
        print(note)
    for path in plots:
        print(f"wrote {path}")
