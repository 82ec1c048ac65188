"""2017 — Goyal et al.: data parallelism trains as one process would, and survives a lost rank.

*Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour* (Goyal, Dollár, Girshick et al.,
2017) split each minibatch over 256 GPUs, averaged the gradients with all_reduce, and showed
that this follows the single-process run when the learning rate is scaled with the total
batch. Since then a training job on many machines is the norm, and so is a machine that dies
mid-run; PyTorch 2.14 made shrinking a process group in place part of its core.

The milestone trains the LeNet-5 of the 1998 milestone on the digits with
``DistributedDataParallel`` on 4 ranks (``ember run -n 4 --fault-tolerant``, oversubscribed
here), each reading a quarter of every 32-image batch through a ``DistributedSampler``. Half
way through, rank 3 is killed with SIGKILL. The survivors see ``DistBackendError`` naming it
and call ``ember.distributed.elastic.recover``: it shrinks the group (MPI's ULFM) and gives
every survivor rank 0's state (weights, Adam moments, step, place in the epoch); the sampler
shares the rest of the epoch over 3 ranks, and they finish from memory without a restart.
Thresholds: test accuracy ≥ 0.97, and the flight-recorder dumps, read by ``ember fr-trace``,
name the dead rank. The run prints its timeline (ranks alive per step); with ``--plot DIR``
it also draws it (``ddp-timeline.png``). With ``--compile`` each rank compiles LeNet-5 with
``ember.compile`` and wraps the compiled module, ``DistributedDataParallel(torch.compile(model))``:
the gradient hooks that average over the ranks fire as the compiled backward produces each
gradient, so the all_reduce stays outside the graph (``torch.compile(DistributedDataParallel(model))``,
torch's advice, breaks ember's graph at the wrapper's bookkeeping; the whole training step
compiled breaks it at the hooks). The run prints each rank's graphs and recompiles.

Without mpi4py it says in one line how to install it (``pip install "ember[distributed]"``)
and reports the thresholds missed.
"""
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import ember as torch
import ember.distributed as dist
from ember import nn
from ember.distributed import elastic
from ember.distributed.fr_trace import analyze, load_dumps
from ember.distributed.run import environment, find_mpiexec, is_open_mpi, mpiexec_command
from ember.nn.parallel import DistributedDataParallel
from ember.utils.data import DataLoader
from ember.vision import transforms

from .lenet import DIGITS, accuracy, channel_statistics, lenet5
from .milestone import History, Milestone, Threshold, compiling
from .plotting import _save_atomically

RANKS, VICTIM = 4, 3
EPOCHS, FAST_EPOCHS = 10, 8


def train(fast=False, seed=0, quiet=False, out_dir=None):
    failed = {"test accuracy": 0.0, "fr-trace names the dead rank": 0.0}, {}
    if not dist.is_available() or find_mpiexec() is None:
        print('ddp: needs mpi4py and Open MPI: pip install "ember[distributed]"', file=sys.stderr)
        return failed
    if not is_open_mpi():
        print(f"ddp: kills a rank, so needs Open MPI's fault tolerance (ULFM); {find_mpiexec()} is "
              'another MPI (MPICH?): pip install "ember[distributed]" in a fresh venv', file=sys.stderr)
        return failed
    out = Path(out_dir or tempfile.mkdtemp(prefix="ember-ddp-"))
    (out / "fr").mkdir(parents=True, exist_ok=True)
    for old in (out / "fr").iterdir():
        old.unlink()
    command = mpiexec_command(RANKS, "-m", [__name__, str(out), str(FAST_EPOCHS if fast else EPOCHS),
                                            str(seed), "compile" if compiling() else "eager"],
                              fault_tolerant=True)
    env = environment({**os.environ, "TORCH_FR_DUMP_TEMP_FILE": str(out / "fr" / "rank_")})
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    result_file = out / "result.json"
    if not result_file.exists():
        print(f"ddp: the run did not finish; its errors:\n{err[-2000:]}", file=sys.stderr)
        return failed
    result = json.loads(result_file.read_text())
    findings = analyze(load_dumps(out / "fr"))
    named = any(f.startswith(f"rank {VICTIM} ") for f in findings)
    print(_timeline(result))
    print(f"ember fr-trace {out / 'fr'}: " + (findings[0] if findings else "nothing found"))
    if "compiled" in result:
        print("ddp (compiled): " + "; ".join(f"rank {rank}: {c['graphs']} graph{'s' * (c['graphs'] != 1)}, "
                                              f"{c['recompiles']} recompiles, {c['graph_breaks']} graph breaks"
                                              for rank, c in enumerate(result["compiled"])))
    history = RunHistory(loss=result["loss"], accuracy=result["accuracy"], alive=result["alive"],
                         killed_at=result["killed_at"])
    return ({"test accuracy": result["accuracy"][-1], "fr-trace names the dead rank": float(named)},
            {f"LeNet-5, DDP on {RANKS} ranks (rank {VICTIM} killed)": history})


@dataclass
class RunHistory(History):
    """The run's curves, and per training step the launch ranks alive (``alive``)."""

    alive: list = field(default_factory=list)
    killed_at: int = 0


def plot_timeline(result, plot_dir):
    """Draws ``ddp-timeline.png``: ranks alive per training step, the kill marked; returns
    ``[path]``. Raises ImportError without matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("plotting needs matplotlib: pip install 'ember[plot]'") from error
    run = next(h for h in result.histories.values() if isinstance(h, RunHistory))
    figure = Figure(figsize=(6, 3), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.step(range(len(run.alive)), [len(ranks) for ranks in run.alive], where="post",
              label="ranks alive")
    axes.axvline(run.killed_at, color="C3", linestyle="--", label=f"rank {VICTIM} killed")
    axes.set_xlabel("training step")
    axes.set_ylabel("ranks")
    axes.set_ylim(0, RANKS + 0.5)
    axes.set_title("ddp (2017): ranks alive per step")
    axes.grid(alpha=0.3)
    axes.legend(loc="lower left")
    figure.tight_layout()
    path = Path(plot_dir) / "ddp-timeline.png"
    Path(plot_dir).mkdir(parents=True, exist_ok=True)
    _save_atomically(figure, path)
    return [path]


def _timeline(result):
    """'ranks alive per step' as runs of equal membership."""
    lines = ["ddp timeline (step: ranks alive):"]
    alive, start = result["alive"], 0
    for step in range(1, len(alive) + 1):
        if step == len(alive) or alive[step] != alive[start]:
            lines.append(f"  steps {start:4d}-{step - 1:4d}: {len(alive[start])} ranks {alive[start]}")
            start = step
    lines.append(f"  rank {VICTIM} killed at step {result['killed_at']}; survivors detected it, shrank "
                 f"and resumed in {result['recovery_seconds'] * 1000:.0f} ms")
    return "\n".join(lines)


def _worker(out, epochs, seed, compiled=False):
    """One rank's training (run by ``ember run``), its LeNet-5 ``compiled`` with ``ember.compile``
    or not; rank 0 writes ``result.json`` (with ``compiled``: each rank's graphs, recompiles and
    graph breaks)."""
    dist.init_process_group()
    torch.manual_seed(seed)
    train_set = DIGITS.dataset(True, None, seed)
    to_input = (transforms.ToTensor(), transforms.Normalize(*channel_statistics(train_set.data)))
    train_set.transform = transforms.Compose([*DIGITS.augment, *to_input])
    test_loader = DataLoader(DIGITS.dataset(False, transforms.Compose(to_input), seed), batch_size=1000)
    module = lenet5()
    net = torch.compile(module) if compiled else module  # (its parameters are module's)
    model = DistributedDataParallel(net)
    optimizer = torch.optim.Adam(module.parameters(), lr=2e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=max(1, 2 * epochs // 3), gamma=0.1)
    sampler = elastic.ElasticSampler(train_set, seed=seed, drop_last=True)
    kill_at = epochs * (len(train_set) // DIGITS.batch_size) // 2
    step, alive, history, recovery = 0, [], {"loss": [], "accuracy": []}, None
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        total, count, finished = 0.0, 0, False
        module.train()
        while not finished:
            try:
                for inputs, targets in DataLoader(train_set, batch_size=DIGITS.batch_size // RANKS,
                                                  sampler=sampler):
                    if step == kill_at and recovery is None and dist.get_rank() == VICTIM:
                        os.kill(os.getpid(), signal.SIGKILL)
                    optimizer.zero_grad()
                    loss = nn.functional.cross_entropy(model(inputs), targets)
                    loss.backward()
                    optimizer.step()
                    sampler.advance(len(targets))
                    alive.append(elastic.launch_ranks())
                    total += loss.item() * len(targets)
                    count += len(targets)
                    step += 1
                finished = True
            except dist.DistBackendError:
                started = time.monotonic()
                # rank 0's weights, Adam moments, step and place in the epoch, re-sharded
                step = elastic.recover(module=module, optimizer=optimizer, sampler=sampler, step=step)["step"]
                model = DistributedDataParallel(net)
                recovery = time.monotonic() - started
        scheduler.step()
        module.eval()
        with torch.no_grad():
            history["accuracy"].append(accuracy(module, test_loader)[0])
        history["loss"].append(total / max(count, 1))
    if compiled:  # (the survivors' counts, gathered on rank 0)
        counters = torch._dynamo.utils.counters
        mine = {"graphs": counters["stats"]["unique_graphs"], "recompiles": sum(counters["recompiles"].values()),
                "graph_breaks": sum(counters["graph_break"].values())}
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, mine)
        history["compiled"] = gathered
    if dist.get_rank() == 0:
        result = {**history, "alive": alive, "killed_at": kill_at, "recovery_seconds": recovery or 0.0}
        tmp = Path(out) / ".result.json"
        tmp.write_text(json.dumps(result))
        os.replace(tmp, Path(out) / "result.json")
    dist.barrier()


def milestone(out_dir=None):
    """The ``ddp`` milestone, writing its result and dumps into ``out_dir`` (default: a new
    temporary directory)."""
    return Milestone(
        name="ddp", year=2017,
        story="Goyal et al.: data-parallel SGD on 4 ranks, one killed mid-run; survivors finish",
        thresholds=(Threshold("test accuracy", 0.97), Threshold("fr-trace names the dead rank", 1.0)),
        train=functools.partial(train, out_dir=out_dir), extra_plots=plot_timeline)


MILESTONE = milestone()

if __name__ == "__main__":
    _worker(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "compile")
