"""``ember._dynamo.explain(fn)(*args)``: what compiling ``fn`` captures, and where it breaks."""
import traceback

from ..compiler.aot import forward_graph
from ..compiler.capture import capture
from ..compiler.guards import World
from ..compiler.split import Refused, plan
from ..compiler.structure import Where
from ..nn.modules.module import Module

__all__ = ["explain", "ExplainOutput", "BreakReason"]


class BreakReason:
    """One graph break: ``reason`` and ``user_stack``, a ``traceback.StackSummary`` of the user's
    source line (torch's: ``user_stack[-1].lineno``, ``.filename``, ``.name``, ``.line``); a
    break found only at the function's end (the optimizer's state made in the call), none."""

    def __init__(self, reason, where):
        frames = [where.summary()] if isinstance(where, Where) else []
        self.reason, self.user_stack = reason, traceback.StackSummary.from_list(frames)

    def __repr__(self):
        return f"BreakReason(reason={self.reason!r}, user_stack={self.user_stack!r})"


class ExplainOutput:
    """``graphs`` (the forward graphs between breaks), ``graph_count``, ``graph_break_count``,
    ``break_reasons`` (BreakReason list) and ``op_count``, as torch's ``ExplainOutput`` (whose
    graphs are of torch-level calls, counting the functions called, not the methods: ember's
    are of ember's ops, so ``x.sum()`` counts, ``F.linear`` counts its two ops); and
    ember's ``split``: how ``ember.compile`` splits the function at its breaks, statement by
    statement (``"pieces [lines 2-3], eager [line 4], ..."``, see ``ember.compiler.split``), or
    why it does not (``"not split: ..."``, then the function runs eagerly), None without breaks."""

    def __init__(self, graphs, breaks, split=None):
        self.split = split
        self.graphs, self.graph_count = graphs, len(graphs)
        self.break_reasons = [BreakReason(r, w) for r, w in breaks]
        self.graph_break_count = len(breaks)
        self.ops_per_graph = [[n.target for n in g.nodes if n.op == "call_op"] for g in graphs]
        self.op_count = sum(map(len, self.ops_per_graph))

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {b.reason}", "    User Stack:"]
            lines += [f"      {frame}" for frame in b.user_stack]
        if self.split is not None:
            lines.append(f"Split (ember): {self.split}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}: " + ", ".join(getattr(op, "name", "getitem") for op in ops))
        return "\n".join(lines) + "\n"


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` runs ``fn`` once (eagerly, recording) and returns an
    :class:`ExplainOutput`: the graphs it captured between graph breaks, and each break's
    reason and source line (``torch._dynamo.explain``); with ember's ``split`` of the function
    at them (breaks that only a recording of the whole function meets, a Python side effect in a
    statement that runs eagerly anyway, are then not counted)."""
    def inner(*args, **kwargs):
        world = World(f, args, kwargs)
        _, cap = capture(f, args, kwargs, world)
        if not cap.breaks:  # the forward graph, as torch's (a recording has its backward too)
            graphs = cap.pieces if cap.joint is None or not cap.pieces else \
                [forward_graph(cap.graph, cap.sources, cap.joint[0])[0]]
            return ExplainOutput(graphs, cap.breaks)
        try:
            split = plan(*((f.__call__, f.forward) if isinstance(f, Module) else (f, f)), cap)
        except Refused as e:
            return ExplainOutput(cap.pieces, cap.breaks, f"not split: {e}")
        return ExplainOutput(cap.pieces, split.breaks, split.describe())
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
