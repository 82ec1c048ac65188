"""Failures end or heal promptly: a killed rank (with and without ULFM), a hung rank caught by
the timeout, and the flight recorder's dumps, checked against torch's own dump schema."""
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .launch import OPEN_MPI, launch, needs_ulfm

from ember.distributed.fr_trace import analyze, load_dumps
from ember.distributed.run import _name_dead_ranks


def _recovery_seconds(out):
    return [float(line.split(" recovered in ")[1].split()[0]) for line in out.splitlines()
            if " recovered in " in line]


# The jobs below take ~10 s on a quiet machine and up to ~55 s at a load of 12 on 2 cores
# (benchmarks/fault_runs.py); the limit only has to catch a hang.
FAULT_JOB_SECONDS = 120


@needs_ulfm
def test_survivors_of_a_killed_rank_shrink_and_finish_with_ulfm(tmp_path):
    result = launch("faulty_rank.py", 3, 2, 5, "kill", fault_tolerant=True, timeout=FAULT_JOB_SECONDS,
                    env={"TORCH_FR_DUMP_TEMP_FILE": f"{tmp_path}/rank_"})
    out = result.stdout
    for rank in (0, 1):
        assert f"rank {rank} caught: [rank {rank}] mpi:all_reduce failed: rank(s) [2] of process group 'default_pg' died" in out
        assert f"rank {rank} finished 12 steps with 2 ranks" in out
    recovery = _recovery_seconds(out)
    assert len(recovery) == 2 and max(recovery) < 1.0
    findings = analyze(load_dumps(tmp_path))
    assert findings[0] == "rank 2 wrote no dump: it died before it could (killed or crashed)"
    assert any("never completed on rank 0: peer failure: ranks [2]" in f for f in findings)


@needs_ulfm
def test_a_hung_rank_is_evicted_and_the_survivors_finish_with_ulfm(tmp_path):
    """Rank 1 sleeps for an hour at step 4: a survivor times out (3 s) and revokes the group,
    the roll call finds rank 1 silent, it dumps its recorder on SIGUSR1 and is killed, and
    ranks 0 and 2 (renumbered 0 and 1) finish the 12 steps as identical replicas."""
    result = launch("faulty_rank.py", 3, 1, 4, "hang", fault_tolerant=True, timeout=FAULT_JOB_SECONDS,
                    env={"TORCH_FR_DUMP_TEMP_FILE": f"{tmp_path}/rank_"})
    out = result.stdout
    caught = [line for line in out.splitlines() if " caught: " in line]
    assert len(caught) == 2 and any("timed out after 3000 ms" in line for line in caught), out
    assert out.count("finished 12 steps with 2 ranks") == 2
    assert len(_recovery_seconds(out)) == 2 and max(_recovery_seconds(out)) < 10
    dumps = load_dumps(tmp_path)
    assert sorted(dumps) == [0, 1, 2]  # the hung rank's dump, asked for before it was killed
    findings = analyze(dumps)
    assert any(f.startswith("rank 1 is missing from collective") for f in findings), findings


def test_without_ulfm_a_killed_rank_ends_the_job_naming_it():
    result = launch("faulty_rank.py", 2, 1, 3, "kill", timeout=FAULT_JOB_SECONDS, check=False)
    assert result.returncode != 0
    if OPEN_MPI:
        assert "process rank 1" in result.stderr and "signal 9" in result.stderr
    else:  # MPICH's launcher (Hydra) names the dead process by its PID: ember run names its rank
        assert "BAD TERMINATION" in result.stdout and "Killed (signal 9)" in result.stdout
        assert re.search(r"ember run: rank 1 \(PID \d+ on \S+\) died \(exit code 9: Killed \(signal 9\)\)",
                         result.stderr), result.stderr
    assert "finished" not in result.stdout


_HYDRA_REPORT = """rank 0 at step 2
===================================================================================
=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
=   PID 4242 RUNNING AT node7
=   EXIT CODE: 9
=   CLEANING UP REMAINING PROCESSES
=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES
===================================================================================
YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)
"""


def test_the_launcher_names_the_rank_behind_a_pid_only_report(tmp_path):
    """MPICH's launcher reports a dead process by PID and host; each rank started by
    ``ember run`` notes its PID, so the launcher can say which rank it was."""
    (tmp_path / "4242").write_text("3")
    (tmp_path / "4243").write_text("0")
    assert _name_dead_ranks(_HYDRA_REPORT, str(tmp_path)) == [
        "ember run: rank 3 (PID 4242 on node7) died (exit code 9: Killed (signal 9)); the job was ended"]
    assert _name_dead_ranks(_HYDRA_REPORT, str(tmp_path / "elsewhere")) == []  # a rank on another host
    assert _name_dead_ranks("rank 0 at step 2\n", str(tmp_path)) == []


def _torch_dump(monkeypatch):
    """The dump torch 2.13 writes for one all_reduce on gloo (the schema oracle)."""
    torch = pytest.importorskip("torch")
    import torch.distributed as tdist
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("TORCH_FR_BUFFER_SIZE", "100")
    code = ("import json, torch, torch.distributed as d\n"
            f"d.init_process_group('gloo', init_method='tcp://127.0.0.1:{port}', rank=0, world_size=1)\n"
            "d.all_reduce(torch.ones(4, dtype=torch.float64))\n"
            "print(torch._C._distributed_c10d._dump_fr_trace_json(True, False).decode())\n"
            "d.destroy_process_group()\n")
    assert tdist.is_available()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_a_hung_rank_is_caught_by_the_timeout_and_dumps_follow_torchs_schema(tmp_path, monkeypatch):
    result = launch("hang.py", 2, timeout=FAULT_JOB_SECONDS, check=False,
                    env={"TORCH_FR_DUMP_TEMP_FILE": f"{tmp_path}/rank_"})
    assert result.returncode != 0 and "not reached" not in result.stdout
    assert "rank 0 caught: [rank 0] mpi:all_reduce (collective_seq_id 4) on process group " \
           "'default_pg' timed out after 2000 ms" in result.stdout
    dumps = load_dumps(tmp_path)
    ours = dumps[0]
    last = ours["entries"][-1]
    assert (last["profiling_name"], last["state"], last["error"]) == ("mpi:all_reduce", "started", "timeout")
    assert last["input_sizes"] == [[4]] and last["input_dtypes"] == ["Double"]
    caller = last["frames"][0]  # the script's line that called all_reduce, found when dumped
    assert caller["filename"].endswith("hang.py") and caller["name"] == "<module>"
    assert (Path(caller["filename"]).read_text().splitlines()[caller["line"] - 1].strip()
            == "dist.all_reduce(t)")
    assert dumps[1]["entries"][-1]["collective_seq_id"] == 3  # rank 1's SIGUSR1 dump as it hangs
    findings = analyze(dumps)
    assert "rank 1 is missing from collective 4 (mpi:all_reduce) of process group '0': it stopped before it" in findings
    assert any("never completed on rank 0: timeout" in f for f in findings)

    theirs = _torch_dump(monkeypatch)
    assert ours["version"] == theirs["version"] == "2.10"
    assert set(theirs) <= set(ours)
    entry = theirs["entries"][0]
    for key, value in entry.items():
        assert key in last and type(last[key]) is type(value), key
    assert entry["profiling_name"] == "gloo:all_reduce" and entry["input_dtypes"] == ["Double"]
    for section in ("pg_status", "pg_config"):
        theirs_inner, ours_inner = next(iter(theirs[section].values())), next(iter(ours[section].values()))
        assert set(theirs_inner) == set(ours_inner)
        assert all(type(ours_inner[k]) is type(v) for k, v in theirs_inner.items())


def test_fr_trace_cli_reports_and_exits_one(tmp_path, capsys):
    from ember.cli import main
    assert main(["fr-trace", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("ember fr-trace: no flight-recorder dumps in")
    entry = {"collective_seq_id": 1, "p2p_seq_id": 0, "is_p2p": False, "profiling_name": "mpi:all_reduce",
             "input_sizes": [[3]], "input_dtypes": ["Float"], "state": "completed", "process_group": ["0", "default_pg"]}
    for rank, sizes in ((0, [[3]]), (1, [[4]])):
        dump = {"version": "2.10", "rank": rank, "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"}},
                "entries": [dict(entry, input_sizes=sizes)]}
        (tmp_path / f"rank_{rank}.json").write_text(json.dumps(dump))
    assert main(["fr-trace", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "rank 2 wrote no dump: it died before it could (killed or crashed)"
    assert out[2].startswith("collective 1 of process group '0' differs across ranks: rank 0: mpi:all_reduce sizes [[3]]")
