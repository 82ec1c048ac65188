"""``torch._dynamo.utils.counters``: what ember.compile counts as torch's dynamo counts it
(``frames``, ``stats``, ``graph_break``, ``recompiles``, ``resumes``, ``complex``), kept in one
place so every part of the compiler adds to the same table."""
import collections

__all__ = ["counters", "count_frame", "count_graph"]

counters = collections.defaultdict(collections.Counter)  # torch._dynamo.utils.counters


def count_frame():
    """Counts a frame as torch's dynamo counts one it compiled (``counters["frames"]``)."""
    counters["frames"]["total"] += 1
    counters["frames"]["ok"] += 1


def count_graph(cap):
    """Counts the graph of the recording ``cap`` as torch's dynamo counts one it compiles: a
    frame (``counters["frames"]["total"]``, ``["ok"]``: a function's or a split one's piece's,
    as torch's counts each resume function's), ``counters["stats"]["unique_graphs"]``, and its
    forward's ops in ``["calls_captured"]`` (the ``call_op`` nodes, those of a backward the
    recording traced left out, as explain's ``op_count`` counts them)."""
    forward = None if cap.joint is None else cap.joint[0]
    count_frame()
    counters["stats"]["unique_graphs"] += 1
    counters["stats"]["calls_captured"] += sum(n.op == "call_op" and (forward is None or id(n) in forward)
                                               for n in cap.graph.nodes)
