"""``ember.multiprocessing``: tensors sent to other processes share memory, as in
torch.multiprocessing, and pytorch/examples' mnist_hogwild (from a checkout, as
tests/integration's) runs unchanged with torch's results.
Every process runs in its own session under a timeout, killed with all it started."""
import json
import os
import re
import sys
from pathlib import Path

import pytest
from processes import run_session

HERE = Path(__file__).parent
INTEGRATION = HERE.parent / "integration"


def run(command, cwd, timeout=240, env=None):
    """``command``'s stdout; the test fails on a non-zero exit or a timeout."""
    returncode, out, err = run_session(command, timeout, cwd=cwd, env=env)
    assert returncode == 0, err
    return out


def test_tensors_sent_to_processes_share_memory(tmp_path):
    seen = json.loads(run([sys.executable, str(HERE / "sharing_script.py")], tmp_path))
    assert seen["t"] == [1.0, 1.0, 1.0]             # the child's add_ reached the parent
    assert seen["param"] == [3.0, 3.0] and seen["param_shared"]   # a Parameter argument too
    assert seen["kind"] == "Parameter" and seen["requires_grad"] and seen["child_shared"]
    assert seen["fresh_shared"] and seen["seen_by_child"] == [0.0, 10.0, 20.0, 30.0]  # and back
    assert seen["exitcode"] == 0
    assert seen["spawn_error"] == [1, True]          # ProcessRaisedException names rank and error
    assert seen["nonleaf"].startswith("Cowardly refusing to serial")


def test_share_memory_keeps_values_and_is_idempotent():
    import ember
    t = ember.arange(6.).view(2, 3).t().clone()  # strided, not a view
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared() and t.tolist() == [[0., 3.], [1., 4.], [2., 5.]]
    data = t._data
    assert t.share_memory_()._data is data
    model = ember.nn.Linear(3, 2)
    model.share_memory()
    assert all(p.is_shared() for p in model.parameters())


def test_mnist_hogwild_example_prints_torchs_losses(tmp_path):
    """One training process, so the run is deterministic: the parent's test loss is torch's only
    if the child's updates reached the parent's model through shared memory."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(INTEGRATION))
    try:
        from examples_harness import assert_same_output, example
    finally:
        sys.path.remove(str(INTEGRATION))
    program = example("mnist_hogwild/main.py")  # in a pytorch/examples checkout; skips without one
    outs = {}
    for lib in ("torch", "ember"):
        site = tmp_path / lib / "site"
        site.mkdir(parents=True)
        (site / "sitecustomize.py").write_text(
            f"import examples_harness\nexamples_harness.install({lib!r}, {str(program.parent)!r})\n")
        path = os.pathsep.join([str(site), str(INTEGRATION), os.environ.get("PYTHONPATH", "")])
        argv = ["--epochs", "1", "--num-processes", "1", "--batch-size", "16", "--test-batch-size", "64",
                "--log-interval", "1"]
        out = run([sys.executable, str(program), *argv], tmp_path / lib, env={"PYTHONPATH": path})
        outs[lib] = re.sub(r"(?m)^\d+\t", "", out)  # the training process's pid
    assert "Test set: Average loss" in outs["ember"] and "Train Epoch" in outs["ember"]
    assert_same_output(outs["ember"], outs["torch"], rtol=2e-5, atol=2e-6)


def test_views_and_aliases_put_on_a_queue_share_memory_as_torchs(tmp_path):
    """A row of a tensor, a strided view and a tensor with an alias and a view, sent through a
    Queue: the child's in-place writes reach the parent through every view (the send had
    raised in the queue's feeder thread, leaving the receiver waiting forever)."""
    pytest.importorskip("torch")
    script = str(HERE / "views_script.py")
    seen = {lib: json.loads(run([sys.executable, script, lib], tmp_path)) for lib in ("torch", "ember")}
    assert seen["ember"] == seen["torch"]
    assert seen["ember"]["rows"][1] == [204.0, 105.0, 206.0, 107.0]  # the row and the columns


def test_tensors_dropped_by_the_sender_still_arrive_as_torchs(tmp_path):
    """A Pool's arguments and results are dropped by the sender right after pickling; the
    receiver still gets them, as torch's, from the descriptor sent with them (the segment's
    name had been unlinked first: the worker exited silently and the map waited forever)."""
    pytest.importorskip("torch")
    script = str(HERE / "pool_script.py")
    seen = {lib: json.loads(run([sys.executable, script, lib], tmp_path, timeout=150))
            for lib in ("torch", "ember")}
    assert seen["ember"] == seen["torch"] == [[0., 1., 4.], [1., 1.], [0., 1., 4., 9.]]


MOVE_VIEWS = """
import importlib, json, sys
lib = importlib.import_module(sys.argv[1])
base = lib.arange(12.).reshape(3, 4)
rows, column, alias = list(base), base[:, 1], base.detach()
rows[2].share_memory_()  # a view: the whole storage moves
column.mul_(-1)
alias[0, 0] = 50.
print(json.dumps([[t.tolist() for t in (base, *rows, column, alias)],
                  [t.is_shared() for t in (base, rows[0], column, alias)],
                  rows[1].storage_offset(), column.stride()]))
"""


def test_share_memory_moves_every_view_and_alias_as_torch(tmp_path):
    """torch moves the storage under all of a tensor's views and aliases; ember moves every
    tensor on the memory, so in-place writes through any of them still reach the others.
    (A fresh process: after some other tests in this one an unknown holder makes ember refuse.)"""
    pytest.importorskip("torch")
    seen = {lib: json.loads(run([sys.executable, "-c", MOVE_VIEWS, lib], tmp_path))
            for lib in ("torch", "ember")}
    assert seen["ember"] == seen["torch"]
    assert seen["ember"][1] == [True] * 4


def test_share_memory_refuses_memory_held_outside_tensors():
    """An array from numpy() would keep the old memory: refused rather than left behind."""
    import ember
    t = ember.zeros(3)
    array = t.numpy()
    with pytest.raises(RuntimeError, match="held by something other than tensors"):
        t.share_memory_()
    del array
    assert t.share_memory_().is_shared()


def test_shared_bfloat16_keeps_its_dtype():
    import ember
    from ember._backend import shared
    t = ember.ones(3, dtype=ember.bfloat16).share_memory_()
    back = shared.attach(*shared.handle(t._data))
    assert back.dtype == t._data.dtype and back.tolist() == t._data.tolist()


def test_an_empty_tensor_travels_unshared_as_torchs():
    import pickle
    from multiprocessing.reduction import ForkingPickler

    import ember
    import ember.multiprocessing  # noqa: F401 (registers the reduction)
    torch = pytest.importorskip("torch")
    import torch.multiprocessing  # noqa: F401
    for lib in (torch, ember):
        for t in (lib.zeros(0, 3), lib.zeros(2, 0, dtype=lib.int64).t()):
            received = pickle.loads(ForkingPickler.dumps(t))
            assert not t.is_shared() and not received.is_shared()  # torch sends no segment for 0 bytes
            assert received.shape == t.shape and received.dtype == t.dtype
