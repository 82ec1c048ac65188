"""``ember._dynamo.explain(fn)(*args)``: what compiling ``fn`` captures, and where it breaks."""
from ..compiler.capture import capture
from ..compiler.guards import World

__all__ = ["explain", "ExplainOutput", "BreakReason"]


class BreakReason:
    """One graph break: ``reason`` and ``user_stack`` (the user's source line)."""

    def __init__(self, reason, where):
        self.reason, self.user_stack = reason, [where]

    def __repr__(self):
        return f"BreakReason(reason={self.reason!r}, user_stack={self.user_stack!r})"


class ExplainOutput:
    """``graphs`` (the captured pieces), ``graph_count``, ``graph_break_count``,
    ``break_reasons`` (BreakReason list) and ``op_count``, as torch's ``ExplainOutput``."""

    def __init__(self, graphs, breaks):
        self.graphs, self.graph_count = graphs, len(graphs)
        self.break_reasons = [BreakReason(r, w) for r, w in breaks]
        self.graph_break_count = len(breaks)
        self.ops_per_graph = [[n.target for n in g.nodes if n.op == "call_op"] for g in graphs]
        self.op_count = sum(map(len, self.ops_per_graph))

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {b.reason}", f"    User Stack: {b.user_stack[0]}"]
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}: " + ", ".join(getattr(op, "name", "getitem") for op in ops))
        return "\n".join(lines) + "\n"


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` runs ``fn`` once (eagerly, recording) and returns an
    :class:`ExplainOutput`: the graphs it captured between graph breaks, and each break's
    reason and source line (``torch._dynamo.explain``)."""
    def inner(*args, **kwargs):
        world = World(f, args, kwargs)
        _, cap = capture(f, args, kwargs, world)
        return ExplainOutput(cap.pieces, cap.breaks)
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
