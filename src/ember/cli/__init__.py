"""The ``ember`` command (also ``python -m ember``).

Each subcommand lives in its own module with ``add_parser(subparsers)``, which registers the
subcommand and sets ``handler(args) -> exit status`` as its default.

Exit status: 0 on success, 1 when a run misses a threshold or a benchmark suite fails, 2 on
a usage error (argparse's convention: unknown subcommand, unknown milestone, bad option).
"""
import argparse

from .. import __version__

from . import bench, chat, course, fr_trace, interrupt, milestones, run


def build_parser():
    parser = argparse.ArgumentParser(
        prog="ember", description="ember: a deep-learning framework with PyTorch's API.")
    parser.add_argument("--version", action="version", version=f"ember {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    milestones.add_parser(subparsers)
    chat.add_parser(subparsers)
    bench.add_parser(subparsers)
    run.add_parser(subparsers)
    fr_trace.add_parser(subparsers)
    course.add_parser(subparsers)
    return parser


def main(argv=None):
    """Run the command line ``argv`` (default ``sys.argv[1:]``); return the exit status.

    Raises:
        SystemExit: with status 2 on a usage error, after argparse prints it to stderr;
            with status 0 after ``--help``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    interrupt.install()
    return args.handler(args)
