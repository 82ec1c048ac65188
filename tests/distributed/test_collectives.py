"""ember.distributed on 2-4 MPI ranks: collectives against NumPy, bad input, the launcher."""
import os
import re
import sys

import pytest

from .launch import OPEN_MPI, launch, two_rank_checks


def test_bad_input_raises_on_every_rank_and_every_collective_on_every_dtype_matches_numpy():
    """errors.py (every rank raises, nobody hangs), then collectives.py, in one 3-rank launch."""
    out = launch("collectives.py", 3, timeout=90).stdout
    assert out.count("errors ok") == 3
    assert sorted(line for line in out.splitlines() if line.endswith(": ok")) == [
        f"rank {r}: ok" for r in range(3)]


def test_launcher_sets_torchrun_variables_and_an_exception_on_one_rank_ends_the_job():
    result = launch("environment.py", 2, "--fail-on", "1", timeout=120, check=False)
    for rank in (0, 1):  # ember picks libnbc's reduce-scatter + allgather for Iallreduce
        assert f"rank {rank} of 2 argv ['--fail-on', '1'] iallreduce algorithm 3" in result.stdout
    assert result.returncode != 0
    assert "this rank fails on purpose" in result.stderr


def test_plain_mpiexec_works_too():
    from ember.distributed.run import environment, find_mpiexec
    command = [find_mpiexec(), "-n", "2"]
    if OPEN_MPI:  # its flags for more ranks than cores and for root; MPICH needs neither
        command.append("--oversubscribe")
        if os.geteuid() == 0:
            command.append("--allow-run-as-root")
    env = {**environment(), "OMPI_MCA_coll_libnbc_iallreduce_algorithm": "1"}  # the user's choice is kept
    result = launch("environment.py", 2, timeout=120, env=env, launcher=[*command, sys.executable])
    assert "rank 1 of 2 argv [] iallreduce algorithm 1" in result.stdout


def test_run_cli_errors_are_one_line(capsys):
    from ember.cli import main
    assert main(["run", "-n", "2", "no-such-script.py"]) == 2
    assert capsys.readouterr().err == "ember run: no such script: no-such-script.py\n"


def test_ddp_follows_one_process_on_the_whole_batch():
    """MLP (one and many buckets) and LeNet, 20 SGD-momentum steps; no_sync; unused parameters."""
    out = two_rank_checks()  # scripts/ddp_parity.py, in one launch with SyncBatchNorm's and windows' checks
    assert out.count("ddp ok") == 2


def test_a_plain_torch_ddp_script_runs_with_the_import_changed_and_matches_one_process(tmp_path):
    """scripts/torch_ddp.py is PyTorch's DDP recipe (backend="nccl" or "gloo", DistributedSampler,
    DDP, rank-0 torch.save, the tutorial's save / barrier / load with map_location); on 2 ranks
    it follows the 1-rank run, warns once per rank about the backend, every rank's reloaded
    model scores as the trained one, and the checkpoint loads in torch itself."""
    (tmp_path / "two").mkdir()
    (tmp_path / "one").mkdir()
    two = launch("torch_ddp.py", 2, tmp_path / "two", "nccl", timeout=90)
    one = launch("torch_ddp.py", 1, tmp_path / "one", "gloo", timeout=90)
    accuracy, reloaded = {}, {}
    # found anywhere, not per line: MPICH's launcher may cut one rank's line with another's
    for who, score, again in re.findall(r"(rank \d of \d): test accuracy ([\d.]+), reloaded ([\d.]+)",
                                        two.stdout + one.stdout):
        accuracy[who], reloaded[who] = float(score), float(again)
    assert sorted(accuracy) == ["rank 0 of 1", "rank 0 of 2", "rank 1 of 2"]
    assert accuracy["rank 0 of 2"] == accuracy["rank 1 of 2"] == accuracy["rank 0 of 1"] >= 0.95
    assert reloaded == accuracy
    assert two.stderr.count("UserWarning: ember.distributed serves backend 'nccl' with MPI") == 2
    assert one.stderr.count("UserWarning: ember.distributed serves backend 'gloo' with MPI") == 1
    torch = pytest.importorskip("torch")
    ddp_state = torch.load(tmp_path / "two" / "ddp_model.checkpoint", weights_only=True)
    assert sorted(ddp_state) == ["module.0.bias", "module.0.weight", "module.2.bias", "module.2.weight"]
    checkpoint = torch.load(tmp_path / "two" / "checkpoint.pt", weights_only=True)
    reference = torch.load(tmp_path / "one" / "checkpoint.pt", weights_only=True)
    assert checkpoint["epoch"] == 2 and sorted(checkpoint["model"]) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    for name, value in checkpoint["model"].items():
        torch.testing.assert_close(value, reference["model"][name], rtol=1e-4, atol=1e-5)
