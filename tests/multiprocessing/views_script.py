"""Run by test_multiprocessing.py under ember or torch (the library's name is argv[1]): views,
and tensors that have views or aliases, put on a Queue reach a spawned child on the sender's
memory. Prints one JSON object of what it saw."""
import importlib
import json
import sys


def child(lib, inbox, outbox):
    importlib.import_module(lib)  # registers the library's tensor pickling
    items = inbox.get(timeout=60)
    outbox.put([t.tolist() for t in items])
    for t in items:
        t.add_(100)  # lands in the parent's tensors, through every view of them
    outbox.put("done")


if __name__ == "__main__":
    torch = importlib.import_module(sys.argv[1])
    ctx = torch.multiprocessing.get_context("spawn")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=child, args=(sys.argv[1], inbox, outbox))
    p.start()
    data = torch.arange(12.).reshape(3, 4)
    rows = list(data)                      # views alive before the send
    other = torch.arange(3.)
    alias, view = other.detach(), other.view(3, 1)
    inbox.put([rows[1], data.t()[::2], other])
    arrived = outbox.get(timeout=60)
    assert outbox.get(timeout=60) == "done"
    p.join(60)
    print(json.dumps({"arrived": arrived, "data": data.tolist(), "rows": [r.tolist() for r in rows],
                      "alias": alias.tolist(), "view": view.tolist(), "exitcode": p.exitcode,
                      "shared": [t.is_shared() for t in (data, rows[0], other, alias, view)]}))
