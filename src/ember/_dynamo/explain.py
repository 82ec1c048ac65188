"""``ember._dynamo.explain(fn)(*args)``: what compiling ``fn`` captures, and where it breaks."""
import traceback

from ..compiler.aot import forward_graph
from ..compiler.breaks import unobserved
from ..compiler.capture import capture
from ..compiler.guards import World
from ..compiler.split import Refused, plan
from ..compiler.structure import Where
from ..compiler.torch_names import placeholder_names
from ..fx.backend_graph import backend_graph_module, without_unused
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
    """``graphs`` (the forward graphs between breaks, each the :class:`~ember.fx.GraphModule` a
    callable backend is handed for it, as torch's: ``.graph.print_tabular()``, ``.graph.nodes``,
    ``.code``, ``print_readable()``, called on its inputs), ``graph_count``, ``graph_break_count``,
    ``break_reasons`` (BreakReason list) and ``op_count``, as torch's ``ExplainOutput`` (whose
    graphs are of torch-level calls, counting the functions called, not the methods: ember's
    are of ember's ops, so ``x.sum()`` counts, ``F.linear`` counts its two ops); and
    ember's ``split``: how ``ember.compile`` splits the function at its breaks, statement by
    statement (``"pieces [lines 2-3], eager [line 4], ..."``, see ``ember.compiler.split``), or
    why it does not (``"not split: ..."``, then the function runs eagerly), None without breaks;
    and ember's ``captured``: the graphs of the compiler's IR those modules are built from (its
    ``call_op`` nodes, ``code`` with the mutations as ``copy_``), as its code generators take them.
    ``names``: each captured graph's placeholders' targets (torch's names, None: ``L_<name>_``)."""

    def __init__(self, captured, breaks, split=None, names=None):
        self.split, self.captured = split, [g if g.nodes[-1].op == "output" else _returning(g) for g in captured]
        self._names, self._graphs = names or [None] * len(captured), None
        self.graph_count = len(captured)
        self.break_reasons = [BreakReason(r, w) for r, w in breaks]
        self.graph_break_count = len(breaks)
        self.ops_per_graph = [[n.target for n in g.nodes if n.op == "call_op"] for g in captured]
        self.op_count = sum(map(len, self.ops_per_graph))

    @property
    def graphs(self):
        """The GraphModules, built at the first read (a step of 300 ops: 0.1 s)."""
        if self._graphs is None:
            self._graphs = [unobserved(backend_graph_module, g, t) for g, t in zip(self.captured, self._names)]
            for gm in self._graphs:  # (as a callable backend's: the inputs no op reads left out)
                without_unused(gm, 0)
        return self._graphs

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


def _returning(piece):
    """``piece``, a graph between two breaks of a recording (which has no output node: what the
    rest of the function reads of it, the recording does not say), ended by an output of its
    values that none of its ops or writes reads, as torch's returns those the code after the
    break reads."""
    written = {id(v) for _, v in piece.mutations}
    piece.output([n for n in piece.nodes if n.op == "call_op" and not n.users and id(n) not in written])
    return piece


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` runs ``fn`` once (eagerly, recording) and returns an
    :class:`ExplainOutput`: the graphs it captured between graph breaks, and each break's
    reason and source line (``torch._dynamo.explain``); with ember's ``split`` of the function
    at them (breaks that only a recording of the whole function meets, a Python side effect in a
    statement that runs eagerly anyway, are then not counted)."""
    def inner(*args, **kwargs):
        fn = f.__call__ if isinstance(f, Module) else f  # (as ember.compile records a module: its placeholders
        world = World(fn, args, kwargs)                 # named from self, L_self_modules_fc_parameters_weight_)
        _, cap = capture(fn, args, kwargs, world)
        if not cap.breaks:  # the forward graph, as torch's (a recording has its backward too)
            graph, sources = (cap.graph, cap.sources) if cap.joint is None else \
                forward_graph(cap.graph, cap.sources, cap.joint[0])[:2]
            if not cap.pieces:
                return ExplainOutput([], cap.breaks)
            return ExplainOutput([graph], cap.breaks, names=[placeholder_names(graph, sources, world)])
        try:
            split = plan(*((f.__call__, f.forward) if isinstance(f, Module) else (f, f)), cap)
        except Refused as e:
            return ExplainOutput(cap.pieces, cap.breaks, f"not split: {e}")
        return ExplainOutput(cap.pieces, split.breaks, split.describe())
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
