"""Run by test_multiprocessing.py in a process of its own: tensors sent to spawned processes
share memory with the sender. Prints one JSON object of what it saw."""
import json
import sys

import ember
import ember.multiprocessing as mp


def add_one_and_send(t, param, queue):
    t.add_(1)                       # the parent's tensor
    with ember.no_grad():
        param.mul_(3)               # the parent's parameter
    fresh = ember.arange(4.)
    queue.put((fresh, param.requires_grad, type(param).__name__, t.is_shared()))
    assert queue_ack.get(timeout=60) == "scaled"  # noqa: F821 (set in the child's globals)
    queue.put(fresh.tolist())       # what the parent's in-place write left here


def child(t, param, queue, ack):
    global queue_ack
    queue_ack = ack
    add_one_and_send(t, param, queue)


def fails(rank, message):
    if rank == 1:
        raise ValueError(message)


if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    t = ember.zeros(3).share_memory_()
    param = ember.nn.Parameter(ember.ones(2))
    queue, ack = mp.Queue(), mp.Queue()
    p = mp.Process(target=child, args=(t, param, queue, ack))
    p.start()
    fresh, requires_grad, kind, child_shared = queue.get(timeout=60)
    fresh.mul_(10)
    ack.put("scaled")
    seen_by_child = queue.get(timeout=60)
    p.join(60)
    result = {"t": t.tolist(), "param": param.tolist(), "param_shared": param.is_shared(),
              "fresh_shared": fresh.is_shared(), "requires_grad": requires_grad, "kind": kind,
              "child_shared": child_shared, "seen_by_child": seen_by_child, "exitcode": p.exitcode}
    try:
        mp.spawn(fails, args=("bad input",), nprocs=2)
    except mp.ProcessRaisedException as e:
        result["spawn_error"] = [e.error_index, "ValueError: bad input" in e.msg]
    try:
        mp.SimpleQueue().put(ember.ones(2, requires_grad=True) * 2)  # pickles in put
        result["nonleaf"] = "sent"
    except RuntimeError as e:
        result["nonleaf"] = str(e)[:30]
    json.dump(result, sys.stdout)
