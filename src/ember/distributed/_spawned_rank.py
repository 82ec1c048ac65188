"""One rank of a job that ``mp.spawn`` started with ``mpiexec`` (see ``_spawn.py``).

Run as ``python -m ember.distributed.run --worker -m ember.distributed._spawned_rank PAYLOAD``:
the worker has set ``RANK``; this loads the program's ``__main__`` as ``__mp_main__`` (its
``if __name__ == "__main__"`` part does not run), unpickles ``fn`` and ``args`` from PAYLOAD
(written by the parent, in a private folder) and calls ``fn(rank, *args)``. A traceback is
left beside PAYLOAD for the parent's ``ProcessRaisedException`` before the exception goes on
to the worker, which aborts the job.
"""
import os
import pickle
import runpy
import sys
import traceback
import types


def _load_main(program):
    """Runs the parent's ``__main__`` as ``__mp_main__``, where pickled functions find it."""
    if program is None:
        return
    kind, where = program
    module = types.ModuleType("__mp_main__")
    run = runpy.run_module if kind == "module" else runpy.run_path
    module.__dict__.update(run(where, run_name="__mp_main__"))
    sys.modules["__main__"] = sys.modules["__mp_main__"] = module


def main(payload):
    with open(payload, "rb") as f:
        program, path, call = pickle.load(f)
    sys.path[:] = path
    _load_main(program)
    fn, args = pickle.loads(call)
    rank = int(os.environ["RANK"])
    try:
        fn(rank, *args)
    except Exception:
        error = os.path.join(os.path.dirname(payload), f"rank_{rank}.error")
        with open(error + ".tmp", "w") as f:
            f.write(f"{os.getpid()}\n{traceback.format_exc()}")
        os.replace(error + ".tmp", error)
        raise


if __name__ == "__main__":
    main(sys.argv[1])
