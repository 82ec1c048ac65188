"""``torch.multiprocessing.spawn``: run ``fn(i, *args)`` in ``nprocs`` new processes
(https://pytorch.org/docs/stable/multiprocessing.html#spawning-subprocesses).

Each process reports an uncaught exception's traceback through a queue before exiting with
status 1; ``join`` waits, and on the first failure terminates the other processes and raises
``ProcessRaisedException`` (with the child's traceback) or ``ProcessExitedException`` (for a
process killed by a signal or exiting with a non-zero status).
"""
import importlib
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; ``msg`` holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero status or was killed by ``signal_name``."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is interrupting us
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes :func:`start_processes` started; :meth:`join` waits for them."""

    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        """The process ids of the started processes, by rank."""
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Waits ``timeout`` seconds (None: until something happens) for the processes; True
        when all have finished, False when some still run. Raises the first failure, after
        terminating the other processes."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if self.processes[i].exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        code = self.processes[failed].exitcode
        if not self.error_queues[failed].empty():
            raise ProcessRaisedException(
                f"\n\n-- Process {failed} terminated with the following error:\n"
                + self.error_queues[failed].get(), failed, self.processes[failed].pid)
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                         failed, self.processes[failed].pid, code, name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                     failed, self.processes[failed].pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``nprocs`` processes running ``fn(i, *args)`` (``i`` = 0 .. nprocs-1) with
    ``start_method``; with ``join`` waits for all of them and returns None, else returns the
    :class:`ProcessContext`.

    A program that has imported ``ember.distributed`` gets its ``nprocs`` processes as one MPI
    job instead, so that ``init_process_group`` in each joins one world (see
    ``ember/distributed/_spawn.py``): under ``mpiexec`` when started by ``python``, or ``fn``
    run in place on each rank when already launched on ``nprocs`` ranks (``ember run``)."""
    if "ember.distributed" in sys.modules:  # imported by the program, never by this module
        job = importlib.import_module("ember.distributed._spawn")
        if job.can_spawn_mpi_job():
            return job.spawn_as_mpi_job(fn, args, nprocs, join)
    context = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = context.SimpleQueue()
        p = context.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        p.start()
        processes.append(p)
        error_queues.append(error_queue)
    result = ProcessContext(processes, error_queues)
    if not join:
        return result
    while not result.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """:func:`start_processes` with the ``spawn`` start method (PyTorch's ``spawn``)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
