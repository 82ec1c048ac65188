"""``ember run -n N [--fault-tolerant] SCRIPT [ARGS]``: start a script on N ranks (the
``torchrun`` of ember; see :mod:`ember.distributed.run`)."""
import argparse
import os
import sys

from ..distributed.run import mpiexec_command, run_job


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "run", help="run a script on N ranks with MPI (ember's torchrun)",
        description="Run SCRIPT on N ranks with mpiexec, setting RANK, WORLD_SIZE, LOCAL_RANK and "
                    "LOCAL_WORLD_SIZE. Exit status: the job's.")
    parser.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=positive,
                        required=True, metavar="N", help="number of ranks")
    parser.add_argument("--fault-tolerant", action="store_true",
                        help="launch with Open MPI's ULFM so survivors of a dead rank can continue")
    parser.add_argument("script", metavar="SCRIPT", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's arguments")
    parser.set_defaults(handler=run)


def positive(value):
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"N must be a positive integer, got {value!r}")
    return number


def run(args):
    if not os.path.isfile(args.script):
        print(f"ember run: no such script: {args.script}", file=sys.stderr)
        return 2
    try:
        command = mpiexec_command(args.nproc, args.script, args.args, args.fault_tolerant)
    except (FileNotFoundError, ValueError) as error:
        print(f"ember run: {error}", file=sys.stderr)
        return 1
    try:
        return run_job(command)
    except KeyboardInterrupt:  # mpiexec got the Ctrl-C too and ends the ranks
        return 130
