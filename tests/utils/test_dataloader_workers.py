"""DataLoader with worker processes: same batches as in-process loading, worker seeding and
info, IterableDataset sharding, errors and deaths in workers, persistent workers, timeouts and
shutdown. Every loader here has a timeout, so a regression fails instead of hanging."""
import gc
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ember
import ember.utils.data as ed

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="these tests start workers with fork")

LIMIT = 20  # seconds a loader may wait for a batch before the test fails


def alive(pid):
    """Whether process ``pid`` runs (a zombie left for a reaper counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Probe(ed.Dataset):
    """Sample ``i``: ``(i, pid, worker id, marker set by worker_init_fn, worker seed)``; index
    ``bad`` raises ValueError and index ``die`` ends the process."""

    def __init__(self, n, bad=None, die=None):
        self.n, self.bad, self.die = n, bad, die

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"sample {i} is broken")
        if i == self.die:
            os._exit(1)
        info = ed.get_worker_info()
        return (i, os.getpid(), info.id if info else -1, globals().get("_init_marker", -1),
                info.seed if info else -1)


def mark(worker_id):
    globals()["_init_marker"] = 100 + worker_id


def test_two_workers_give_the_batches_of_zero_workers_in_order():
    x = ember.arange(3 * 37, dtype=ember.float32).reshape(37, 3)
    ds = ed.TensorDataset(x, ember.arange(37))
    runs = []
    for workers in (0, 2):
        loader = ed.DataLoader(ds, batch_size=5, shuffle=True, num_workers=workers,
                               generator=ember.Generator().manual_seed(4), timeout=LIMIT if workers else 0)
        runs.append(list(loader))
    assert len(runs[0]) == len(runs[1]) == 8
    for (xa, ya), (xb, yb) in zip(*runs):
        assert xa.dtype is xb.dtype and ya.dtype is yb.dtype
        np.testing.assert_array_equal(xa._data, xb._data)
        np.testing.assert_array_equal(ya._data, yb._data)


def test_worker_init_fn_worker_info_and_seeds():
    loader = ed.DataLoader(Probe(8), batch_size=2, num_workers=2, worker_init_fn=mark, timeout=LIMIT)
    batches = list(loader)
    assert [b[0].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    # round-robin: batch k comes from worker k % 2, each worker has set its marker
    assert [b[2].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]
    assert [b[3].tolist() for b in batches] == [[100, 100], [101, 101], [100, 100], [101, 101]]
    seeds = [b[4].tolist()[0] for b in batches[:2]]
    assert seeds[1] == seeds[0] + 1
    assert os.getpid() not in {p for b in batches for p in b[1].tolist()}
    assert ed.get_worker_info() is None


class Shards(ed.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = ed.get_worker_info()
        if info is None:
            return iter(range(self.n))
        assert info.num_workers == 2 and isinstance(info.dataset, Shards)
        return iter(range(info.id, self.n, info.num_workers))


def test_iterable_dataset_sharded_with_get_worker_info():
    loader = ed.DataLoader(Shards(11), batch_size=2, num_workers=2, timeout=LIMIT)
    batches = [b.tolist() for b in loader]
    # workers alternate; worker 1's shard [1, 3, 5, 7, 9] runs out first
    assert batches == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9]]


def test_worker_exception_is_raised_in_main_process_naming_the_worker():
    loader = ed.DataLoader(Probe(8, bad=3), batch_size=2, num_workers=2, timeout=LIMIT)
    it = iter(loader)
    assert next(it)[0].tolist() == [0, 1]
    with pytest.raises(ValueError) as err:
        next(it)
    message = str(err.value)
    assert message.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback")
    assert "sample 3 is broken" in message and "__getitem__" in message


def test_failed_iterator_collected_as_garbage_stops_its_workers_promptly():
    it = iter(ed.DataLoader(Probe(8, bad=2), batch_size=2, num_workers=1, timeout=LIMIT))
    pid = next(it)[1].tolist()[0]
    try:
        next(it)
    except ValueError as e:
        err = e  # the traceback keeps the iterator in a reference cycle
    del it, err
    start = time.monotonic()
    gc.collect()
    # Well before LIMIT, the wait a leaked worker would cost; the bound leaves room for the
    # loader's own shutdown timeout on a loaded machine (seen: 5.7 s at a load of 14).
    while alive(pid) and time.monotonic() - start < LIMIT / 2:
        time.sleep(0.05)
    assert not alive(pid)


def test_exception_class_unknown_to_main_process_still_reports_traceback():
    class Local(Exception):
        pass

    def init(worker_id):
        raise Local("init failed here")
    with pytest.raises(RuntimeError, match="(?s)Caught Local in DataLoader worker process 0.*init failed here"):
        list(ed.DataLoader(Probe(4), num_workers=1, worker_init_fn=init, timeout=LIMIT))


def test_dead_worker_raises_promptly():
    # promptly: before the loader's timeout, whose error says "timed out" (not a clock of the
    # test's own: a busy machine stretched it)
    loader = ed.DataLoader(Probe(8, die=5), batch_size=2, num_workers=2, timeout=LIMIT)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(loader)


def test_timeout_raises():
    class Slow(ed.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(1.0)
            return i
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.2 seconds"):
        list(ed.DataLoader(Slow(), num_workers=1, timeout=0.2))


def test_persistent_workers_survive_epochs_and_others_shut_down():
    loader = ed.DataLoader(Probe(6), batch_size=2, num_workers=2, persistent_workers=True, timeout=LIMIT)
    first = list(loader)
    it = iter(loader)
    partial = next(it)  # leave the epoch unfinished: the next one must start cleanly
    second = list(loader)
    pids = {p for b in first for p in b[1].tolist()}
    assert len(pids) == 2 and pids == {p for b in second for p in b[1].tolist()}
    assert partial[0].tolist() == [0, 1]
    assert [b[0].tolist() for b in second] == [[0, 1], [2, 3], [4, 5]]
    del it, loader
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)

    loader = ed.DataLoader(Probe(4), batch_size=2, num_workers=1, timeout=LIMIT)
    epoch_pids = [{p for b in loader for p in b[1].tolist()} for _ in range(2)]
    assert epoch_pids[0] != epoch_pids[1]  # a fresh worker per epoch
    assert not any(alive(p) for p in epoch_pids[0] | epoch_pids[1])  # exhausted epochs shut down


@pytest.mark.parametrize("end", ["return", "SIGKILL"])
def test_workers_end_with_the_main_process(end):
    script = textwrap.dedent(f"""
        import os, signal, sys
        import ember, ember.utils.data as ed
        class Pids(ed.Dataset):
            def __len__(self): return 8
            def __getitem__(self, i): return os.getpid()
        loader = ed.DataLoader(Pids(), batch_size=2, num_workers=2, persistent_workers=True, timeout=20)
        it = iter(loader)
        print(next(it).tolist()[0], next(it).tolist()[0], flush=True)
        if {end!r} == "SIGKILL":
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2, done.stderr
    assert done.returncode == (0 if end == "return" else -signal.SIGKILL), done.stderr
    assert done.stderr == ""
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
