"""``mp.spawn`` in a program that uses ember.distributed: its processes are one MPI job, so the
DDP tutorial's start (``python train.py`` → ``mp.spawn(main, nprocs=2)`` → ``init_process_group
("gloo", rank=rank, world_size=2)``) runs as it does on torch; under a launcher, in place."""
import sys

import pytest

from .launch import SCRIPTS
from processes import run_session

from ember.distributed import _spawn


def test_python_script_with_mp_spawn_runs_ddp_on_one_mpi_world_and_reports_a_failing_rank():
    code, out, err = run_session([sys.executable, str(SCRIPTS / "spawn_ddp.py")], 90, name="spawn_ddp.py")
    assert code == 0, err
    assert sorted(line for line in out.splitlines() if line.startswith("rank")) == [
        f"rank {r} of 2 (loaded as __mp_main__): matches one process: True" for r in range(2)]
    assert out.splitlines()[-1] == "spawn returned"

    code, out, err = run_session([sys.executable, str(SCRIPTS / "spawn_ddp.py"), "fail"], 90, name="spawn_ddp.py fail")
    assert code == 1 and "spawn returned" not in out
    raised = err[err.index("ember.multiprocessing.spawn.ProcessRaisedException"):]
    assert "\n-- Process 1 terminated with the following error:\nTraceback" in raised
    assert raised.rstrip().endswith("RuntimeError: rank 1 fails on purpose")


def test_under_a_launcher_spawn_runs_fn_in_place_on_each_rank(monkeypatch):
    """``ember run -n 2 train.py`` (Open MPI's variables) with ``mp.spawn(fn, nprocs=2)``."""
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    calls = []
    assert _spawn.spawn_as_mpi_job(lambda rank, *args: calls.append((rank, args)), ("a", 3), nprocs=2) is None
    assert calls == [(1, ("a", 3))]
    assert _spawn.spawn_as_mpi_job(lambda rank: calls.append(rank), nprocs=2, join=False).join()
    with pytest.raises(ValueError, match=r"spawn\(nprocs=4\) inside an MPI job of 2 ranks: launch with `ember run -n 4`"):
        _spawn.spawn_as_mpi_job(calls.append, nprocs=4)
