"""``ember milestones run ddp --compile`` compiles on every rank (MILE32).

The ddp milestone trains in its own loop on 4 MPI ranks, not through ``fit``, so ``--compile``
ran it eagerly while its table said "ddp (compiled)". Its ranks now compile LeNet-5 and wrap
the compiled module in ``DistributedDataParallel`` (the gradient hooks fire as the compiled
backward makes each gradient). A whole run takes minutes (``test_ddp_milestone.py`` runs the
eager one); these check that the mode reaches the ranks, without starting them.
"""
import subprocess

import pytest

pytest.importorskip("mpi4py", reason="the ddp milestone needs the distributed extra")

from ember.milestones import ddp  # noqa: E402
from ember.milestones.milestone import compiled_steps  # noqa: E402


@pytest.mark.parametrize("compile, mode", [(True, "compile"), (False, "eager")])
def test_the_ranks_are_told_whether_to_compile(compile, mode, tmp_path, monkeypatch):
    launched = []

    class Launch:  # the job "ends" at once without a result: train reports the thresholds missed
        def __init__(self, command, **kwargs):
            launched.append(command)

        def communicate(self, timeout=None):
            return "", "not started (test)"
    monkeypatch.setattr(ddp, "find_mpiexec", lambda: "mpiexec")
    monkeypatch.setattr(ddp, "is_open_mpi", lambda: True)
    monkeypatch.setattr(ddp.dist, "is_available", lambda: True)
    monkeypatch.setattr(subprocess, "Popen", Launch)
    with compiled_steps(compile):
        metrics, _ = ddp.train(fast=True, out_dir=tmp_path)
    assert metrics["test accuracy"] == 0.0
    [command] = launched
    assert command[command.index(str(tmp_path)):] == [str(tmp_path), str(ddp.FAST_EPOCHS), "0", mode]
