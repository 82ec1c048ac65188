"""``mp.spawn(fn, nprocs=N)`` for programs that use ``ember.distributed``: the N processes are one
MPI job, so ``init_process_group(rank=i, world_size=N)`` in each of them joins one world.

Many PyTorch DDP scripts start this way (the DDP tutorial,
https://pytorch.org/tutorials/intermediate/ddp_tutorial.html): ``python train.py`` calls
``mp.spawn(main, args=(world_size,), nprocs=world_size)`` and each ``main(rank, world_size)``
sets ``MASTER_ADDR``/``MASTER_PORT`` and calls ``init_process_group``. torch's processes meet at
that address; MPI processes meet only when one launcher starts them (Open MPI cannot connect
processes started on their own). So :func:`ember.multiprocessing.spawn`, once the program has
imported ``ember.distributed`` and MPI is at hand, hands the call to :func:`spawn_as_mpi_job`:

- started by ``python train.py``: it runs ``mpiexec -n N`` (``ember run``'s command), whose
  ranks load the program as ``__mp_main__`` (its ``if __name__ == "__main__"`` part does not
  run, as with the ``spawn`` start method) and call ``fn(rank, *args)``; it waits for the job
  and raises :class:`~ember.multiprocessing.ProcessRaisedException` with the traceback of the
  first rank that raised, as torch's ``spawn`` does;
- already a rank of an N-rank job (``ember run -n N train.py``, ``mpiexec``, ``srun``): it runs
  ``fn(rank, *args)`` in place, so a script written for ``mp.spawn`` also runs under a launcher.

``fn`` and ``args`` travel pickled (by value: a tensor is copied, not shared) in a file of a
private temporary folder, which is removed when the job ends.
"""
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

from ..multiprocessing.spawn import ProcessContext, ProcessExitedException, ProcessRaisedException
from .distributed_c10d import is_available
from .run import environment, find_mpiexec, launched_world, mpiexec_command

__all__ = ["spawn_as_mpi_job", "can_spawn_mpi_job"]

_RANK_MODULE = "ember.distributed._spawned_rank"


def can_spawn_mpi_job():
    """True where MPI is: mpi4py, and a job to run in or an ``mpiexec`` to start one."""
    return is_available() and (launched_world() is not None or find_mpiexec() is not None)


def _main_program():
    """How a rank loads the program's ``__main__``: ``("module", name)`` for ``python -m``,
    ``("path", file)`` for a script, None for an interactive session."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name not in ("__main__", None):
        return "module", spec.name
    path = getattr(main, "__file__", None)
    return ("path", os.path.abspath(path)) if path else None


def spawn_as_mpi_job(fn, args=(), nprocs=1, join=True):
    """Runs ``fn(rank, *args)`` on ``nprocs`` ranks of one MPI job (see the module's docstring).

    Returns None with ``join``, else a context whose ``join()`` waits for the job.

    Raises:
        ValueError: this process is a rank of an MPI job of another size than ``nprocs``.
        ProcessRaisedException: a rank raised (its traceback is in the message).
        ProcessExitedException: the job failed without a Python traceback (a rank was killed).
    """
    world = launched_world()
    if world is not None and world[1] > 1:
        rank, size = world
        if size != nprocs:
            raise ValueError(f"spawn(nprocs={nprocs}) inside an MPI job of {size} ranks: launch "
                             f"with `ember run -n {nprocs}`, or call spawn with nprocs={size}")
        fn(rank, *args)
        return None if join else ProcessContext([], [])
    folder = tempfile.mkdtemp(prefix="ember-spawn-")
    payload = os.path.join(folder, "payload")
    with open(payload, "wb") as f:
        pickle.dump((_main_program(), list(sys.path), pickle.dumps((fn, args))), f)
    command = mpiexec_command(nprocs, "-m", [_RANK_MODULE, payload])
    context = MPIJobContext(subprocess.Popen(command, env=environment()), folder, nprocs)
    if not join:
        return context
    while not context.join():
        pass
    return None


class MPIJobContext:
    """The ``mpiexec`` job :func:`spawn_as_mpi_job` started; :meth:`join` waits for it."""

    def __init__(self, process, folder, nprocs):
        self.process, self.folder, self.nprocs = process, folder, nprocs

    def pids(self):
        return [self.process.pid]

    def join(self, timeout=None):
        """Waits ``timeout`` seconds (None: until the job ends); True when it has ended well,
        False while it runs. Raises the failure of the first rank that failed."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        try:
            if code != 0:
                raise self._failure(code)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
        return True

    def _failure(self, code):
        for rank in range(self.nprocs):
            path = os.path.join(self.folder, f"rank_{rank}.error")
            if os.path.exists(path):
                with open(path) as f:
                    pid, _, trace = f.read().partition("\n")
                return ProcessRaisedException(
                    f"\n\n-- Process {rank} terminated with the following error:\n{trace}", rank, int(pid))
        return ProcessExitedException(f"the MPI job of {self.nprocs} processes (mpiexec) exited with "
                                      f"code {code}", 0, self.process.pid, code)
