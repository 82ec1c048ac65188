"""pytorch/examples' DDP programs (``distributed/`` of a checkout at
``$EMBER_PUBLIC_PROGRAMS/examples``, tested at commit 77f55b9; without one these tests skip) run under ``ember run -n 2`` with ``torch`` bound to ember, as a new user would
start them, beside torch itself. Both programs need two GPUs: on this CPU machine torch stops
them early, and so must ember, at the same place and for the same reason."""
import os
import runpy
import sys
import traceback
from pathlib import Path

import pytest

from .launch import launch  # noqa: F401 (skips this module without mpi4py/mpiexec)
from processes import run_session

INTEGRATION = Path(__file__).parents[1] / "integration"
EXAMPLES = Path(os.environ.get("EMBER_PUBLIC_PROGRAMS", "/nonexistent")) / "examples" / "distributed"


def _example(program):
    """``program``'s path in the checkout; skips the test without it."""
    path = EXAMPLES / program
    if not path.is_file():
        pytest.skip(f"no checkout of pytorch/examples with distributed/{program} in $EMBER_PUBLIC_PROGRAMS/examples")
    return path


def _ember_run(program, args, tmp_path, timeout=60):
    """Runs ``program`` under ``ember run -n 2`` with ``torch`` bound to ember on every rank (a
    sitecustomize); kills the whole session on timeout."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import examples_harness\nexamples_harness.install('ember', {str(program.parent)!r})\n")
    path = os.pathsep.join([str(site), str(INTEGRATION), os.environ.get("PYTHONPATH", "")])
    return run_session([sys.executable, "-m", "ember", "run", "-n", "2", str(program), *args], timeout,
                       cwd=tmp_path, env={"PYTHONPATH": path}, name=program.name)


def _torch_run(program, args, monkeypatch, capsys):
    """Runs ``program`` in this process on torch as one torchrun rank; returns (the exception it
    ended with, or None; what it printed)."""
    for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_WORLD_SIZE", "1"),
                        ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29531")):
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "argv", [str(program), *args])
    monkeypatch.syspath_prepend(str(program.parent))
    try:
        runpy.run_path(str(program), run_name="__main__")
        ended = None
    except BaseException as error:  # SystemExit included: what the program ends with is compared
        ended = error
    return ended, capsys.readouterr().out


def test_ddp_example_checks_for_two_accelerators_as_torch_does(tmp_path, monkeypatch, capsys):
    """distributed/ddp/example.py asks torch.accelerator for 2 GPUs and exits cleanly without."""
    pytest.importorskip("torch")
    program = _example("ddp/example.py")
    code, out, err = _ember_run(program, [], tmp_path)
    ended, torch_out = _torch_run(program, [], monkeypatch, capsys)
    line = "Unable to locate sufficient 2 gpus to run this example. Exiting.\n"
    assert (code, out) == (0, line * 2), err
    assert isinstance(ended, SystemExit) and not ended.code and torch_out == line


def test_torchrun_tutorial_stops_at_selecting_its_gpu_on_every_rank(tmp_path, monkeypatch, capsys):
    """ddp-tutorial-series/multigpu_torchrun.py imports everything it uses, then selects GPU
    LOCAL_RANK: without CUDA torch (CPU build) fails there, and ember on each rank with torch's
    "not compiled with CUDA" error; the job ends instead of waiting."""
    pytest.importorskip("torch")
    program = _example("ddp-tutorial-series/multigpu_torchrun.py")
    code, _, err = _ember_run(program, ["1", "1"], tmp_path)
    ended, _ = _torch_run(program, ["1", "1"], monkeypatch, capsys)
    where = 'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))'
    assert ended is not None and where in "".join(traceback.format_exception(ended))
    assert code != 0 and where in err and "AssertionError: Torch not compiled with CUDA enabled" in err


def test_default_backend_for_device_is_mpi_where_torch_has_one():
    import torch

    import ember
    import ember.distributed as dist
    for device in ("cpu", "cuda", "cuda:1", "mps", "xpu", ember.device("cuda", 0)):
        torch.distributed.get_default_backend_for_device(str(device))  # torch has a default: so has ember
        assert dist.get_default_backend_for_device(device) == "mpi"
    for bad, error in (("meta", ValueError), ("hpu", ValueError), (3, RuntimeError)):
        with pytest.raises(error) as ours:
            dist.get_default_backend_for_device(bad)
        try:  # torch's answer is process state: an earlier test (torch.compile) may register "meta"
            torch.distributed.get_default_backend_for_device(bad)
        except error as theirs:
            assert str(ours.value) == str(theirs)
    for fn in ("set_device_index", "current_device_index"):
        with pytest.raises(RuntimeError, match="none is available") as theirs:
            getattr(torch.accelerator, fn)(*[0][:fn.startswith("set")])
        with pytest.raises(RuntimeError, match=str(theirs.value)):
            getattr(ember.accelerator, fn)(*[0][:fn.startswith("set")])
