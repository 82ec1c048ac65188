"""The issue's "10 of 10": runs the killed-rank and hung-rank scenarios N times in a row.

Each run is one pytest run of the scenario's test in tests/distributed/test_faults.py (so a
run passes exactly when the test's own assertions hold: 3 ranks under ULFM, rank 2 killed with
SIGKILL or rank 1 hung in a sleep; the survivors shrink, agree on the step and finish as
identical replicas; the flight-recorder dumps name the failed rank). The test's launcher kills
its MPI job after 60 s; this script also kills the whole pytest session after ``--timeout``
seconds, so nothing outlives a run.

Run: python benchmarks/fault_runs.py [--runs 10] [--timeout 180]. Prints one line per run,
the pass counts, and one JSON line. Slow (10-30 s a run on 2 loaded cores): not part of the
test suite.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = {"killed rank": "test_survivors_of_a_killed_rank_shrink_and_finish_with_ulfm",
             "hung rank": "test_a_hung_rank_is_evicted_and_the_survivors_finish_with_ulfm"}


def run_once(test, timeout):
    """(passed, seconds, the output's last lines) of one pytest run of ``test``."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               f"tests/distributed/test_faults.py::{test}"]
    start = time.monotonic()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out = f"killed after {timeout} s"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return proc.returncode == 0, time.monotonic() - start, out.strip().splitlines()[-3:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds before a run is killed")
    args = parser.parse_args()
    passed = {name: 0 for name in SCENARIOS}
    seconds = {name: [] for name in SCENARIOS}
    for run in range(1, args.runs + 1):
        for name, test in SCENARIOS.items():
            ok, took, tail = run_once(test, args.timeout)
            passed[name] += ok
            seconds[name].append(round(took, 1))
            print(f"run {run:>2} {name:<11} {'pass' if ok else 'FAIL'} {took:5.1f} s"
                  + ("" if ok else "\n    " + "\n    ".join(tail)), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}; "
          + "; ".join(f"{name}: {passed[name]} of {args.runs} passed" for name in SCENARIOS))
    print(json.dumps({"runs": args.runs, "passed": passed, "seconds": seconds}))
    return 0 if all(count == args.runs for count in passed.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
