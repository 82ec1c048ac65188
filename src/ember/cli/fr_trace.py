"""``ember fr-trace DIR``: analyse the flight-recorder dumps of every rank in DIR
(see :mod:`ember.distributed.fr_trace`). Exit status 0 when nothing is wrong, 1 when it
reports a finding, 2 when DIR holds no dump."""
import sys

from ..distributed.fr_trace import analyze, load_dumps


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "fr-trace", help="say what went wrong in a distributed run, from its flight-recorder dumps",
        description="Read every rank's flight-recorder dump in DIR and report ranks missing from "
                    "collectives, collectives that never completed, and collectives that differ "
                    "across ranks. Exit status 1 if anything is found.")
    parser.add_argument("directory", metavar="DIR", help="directory of the ranks' dump files")
    parser.set_defaults(handler=fr_trace)


def fr_trace(args):
    try:
        dumps = load_dumps(args.directory)
    except FileNotFoundError as error:
        print(f"ember fr-trace: {error}", file=sys.stderr)
        return 2
    findings = analyze(dumps)
    print(f"read the dumps of ranks {sorted(dumps)}")
    for line in findings:
        print(line)
    if not findings:
        print("no problem found: every rank completed the same collectives")
    return 1 if findings else 0
