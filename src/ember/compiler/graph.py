"""The compiler's graph IR: what capture produces and code generation consumes.

A :class:`Graph` is a straight-line program over op entries: ``placeholder`` nodes (user inputs,
then the tensors the step reads: parameters, buffers, gradients, optimizer state), ``call_op``
nodes (``target.forward(*arrays, **kwargs)`` on the args' arrays, exactly as the dispatcher would
call it, with explicit cast nodes where it would cast), and one ``output`` node. ``mutations``
lists the in-place writes done after the graph runs: ``(placeholder, value)`` copies value's
array into the placeholder's. A control-flow node (``ember.cond``, ``while_loop``, ...) holds its
branches or body as :class:`Subgraph` kwargs, printed as nested functions. It prints like
torch.fx (``print_tabular``, ``code``); the contract with the code generators is
/work/brief/COMPILER_IR.md.
"""
import builtins
import functools
import keyword
import operator
import re

__all__ = ["Node", "Graph", "Subgraph", "bind_subgraphs", "nodes_in", "instances_in", "kwarg_nodes"]


class Node:
    """One value of the program.

    Attributes:
        op: ``"placeholder"``, ``"call_op"`` or ``"output"``.
        name: unique readable name (``"x"``, ``"weight"``, ``"matmul_1"``).
        target: the op entry class (``call_op``; ``operator.getitem`` picks one of several
            results), the input's name (``placeholder``) or ``"output"``.
        args: Nodes or Python constants, in ``apply``'s order.
        kwargs: the op's attrs (keyword arguments of ``forward``); an index array in them
            (``x[i]``, ``gather``, a gradient's scatter) is a Node (see :func:`kwarg_nodes`).
        meta: ``{"shape": tuple, "dtype": ember dtype, "requires_grad": bool}``.
        users: the nodes that read this one.
    """
    __slots__ = ("op", "name", "target", "args", "kwargs", "meta", "users")

    def __init__(self, op, name, target, args=(), kwargs=None, meta=None):
        self.op, self.name, self.target = op, name, target
        self.args, self.kwargs = tuple(args), dict(kwargs or {})
        self.meta = dict(meta or {})
        self.users = []
        for a in nodes_in((self.args, self.kwargs)):
            if self not in a.users:
                a.users.append(self)

    def __repr__(self):
        return self.name


class Graph:
    """A captured program: ``nodes`` in topological order (placeholders first, output last)."""

    def __init__(self):
        self.nodes, self.placeholders, self.outputs, self.mutations = [], [], [], []
        self.symbols = ()  # names of the size symbols its shapes and attrs use (dynamic shapes)
        self.symbol_ranges = {}  # {symbol: (lo, hi)}: the sizes it runs at, where known
        self.any_shape = False  # run at other shapes than traced (associative_scan's combine)
        self.traced_operands = {}  # node -> positions of its inputs that were traced ints (traced_ints.py)
        # Python's builtins are taken too, so that ``code`` never shadows one it uses (slice).
        self._counts, self._names = {}, set(dir(builtins))

    def placeholder(self, name, meta):
        """Adds an input; placeholders must all come before the first ``call_op``."""
        node = Node("placeholder", self._unique(name), None, meta=meta)
        node.target = node.name
        self.placeholders.append(node)
        self.nodes.insert(len(self.placeholders) - 1, node)
        return node

    def call_op(self, target, args, kwargs, meta):
        """Adds ``target.forward(*args, **kwargs)``; named after the op (``Matmul`` -> ``matmul``)."""
        base = "getitem" if target is operator.getitem else _snake(target.name)
        node = Node("call_op", self._unique(base), target, args, kwargs, meta)
        self.nodes.append(node)
        return node

    def subgraph(self, base, graph):
        """Names ``graph`` uniquely in this one (``true_graph_0``, ``true_graph_1``) as the
        :class:`Subgraph` a control-flow node holds."""
        k = 0
        while f"{base}_{k}" in self._names:
            k += 1
        self._names.add(f"{base}_{k}")
        return Subgraph(f"{base}_{k}", graph)

    def output(self, values):
        """Ends the graph: ``values`` (Nodes or constants) are what it returns."""
        node = Node("output", "output", "output", (tuple(values),))
        self.outputs = list(values)
        self.nodes.append(node)
        return node

    def mutate(self, placeholder, value):
        """After the graph runs, ``value`` is copied into ``placeholder``'s array."""
        if placeholder.op != "placeholder":
            raise ValueError(f"only placeholders can be mutated, got {placeholder.op} {placeholder}")
        self.mutations.append((placeholder, value))

    def write(self, placeholder, value):
        """Makes ``value`` the one copied into ``placeholder``'s array after the graph runs, in place
        of an earlier one (a second in-place write into it); returns whether there was one."""
        kept = [(p, v) for p, v in self.mutations if p is not placeholder]
        rewritten = len(kept) < len(self.mutations)
        self.mutations[:] = kept
        self.mutate(placeholder, value)
        return rewritten

    def _unique(self, base):
        base = _identifier(base)
        count = self._counts.get(base, 0)
        name = base if count == 0 else f"{base}_{count}"
        while name in self._names:
            count += 1
            name = f"{base}_{count}"
        self._counts[base] = count + 1
        self._names.add(name)
        return name

    def print_tabular(self):
        """Prints one row per node (opcode, name, target, args, kwargs), then the mutations."""
        rows = [("opcode", "name", "target", "args", "kwargs")]
        for n in self.nodes:
            rows.append((n.op, n.name, _target_name(n.target), _fmt(n.args), _fmt(n.kwargs)))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines += [f"mutation     {p.name} <- {_fmt(v)}" for p, v in self.mutations]
        print("\n".join(lines))

    @property
    def code(self):
        """The graph as a small Python program: each op entry called on its args' arrays
        (``Name(...)`` stands for ``Name.forward(...)``), the mutations as ``copy_``; the
        subgraphs of control-flow nodes as nested functions first."""
        return self._code("forward")

    def subgraphs(self):
        """The :class:`Subgraph` kwargs of this graph's nodes, in order."""
        return [v for n in self.nodes for v in n.kwargs.values() if isinstance(v, Subgraph)]

    def _code(self, name):
        lines = [f"def {name}({', '.join(p.name for p in self.placeholders)}):"]
        if self.symbols:
            lines.append(f"    # sizes: {', '.join(self.symbols)} (read from the inputs' shapes)")
        for sub in self.subgraphs():
            lines += ["    " + line for line in sub.graph._code(sub.name).splitlines()]
        for n in self.nodes:
            if n.op != "call_op":
                continue
            if n.target is operator.getitem:
                lines.append(f"    {n.name} = {_fmt(n.args[0])}[{_fmt(n.args[1])}]")
                continue
            call = [_fmt(a) for a in n.args] + [f"{k}={_fmt(v)}" for k, v in n.kwargs.items()]
            meta = n.meta
            note = f"  # {_fmt(meta['dtype'])}{list(meta['shape'])}" if "shape" in meta else ""
            lines.append(f"    {n.name} = {n.target.name}({', '.join(call)}){note}")
        lines += [f"    copy_({p.name}, {_fmt(v)})" for p, v in self.mutations]
        lines.append(f"    return [{', '.join(_fmt(v) for v in self.outputs)}]")
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.code


@functools.lru_cache(maxsize=4096)  # (a regex per node was 2 of the GPT step's 16 ms of recording ops)
def _snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


@functools.lru_cache(maxsize=4096)
def _identifier(base):
    """``base`` as a Python identifier: other characters as ``_``, a digit or keyword prefixed."""
    base = re.sub(r"\W", "_", base) or "_"
    return "_" + base if base[0].isdigit() or keyword.iskeyword(base) else base


def _target_name(target):
    if target is operator.getitem:
        return "getitem"
    return getattr(target, "name", target)


def _fmt(value):
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        inner = ", ".join(_fmt(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, type):  # an op entry inside an attr (CopySlices' view chain)
        return value.__name__
    return repr(value)


def kwarg_nodes(node):
    """The nodes a node reads through its kwargs: the index arrays of ``x[i]``, ``gather`` or a
    gradient's scatter, which are values of the graph, not constants."""
    return list(nodes_in(node.kwargs))


def nodes_in(value):
    """The Nodes in ``value``, a Node or a tuple, list or dict holding some."""
    return instances_in(value, Node)


def instances_in(value, cls):
    """The instances of ``cls`` in ``value``, one or a tuple, list or dict holding some (nested)."""
    if isinstance(value, cls):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from instances_in(v, cls)
    elif isinstance(value, dict):
        for v in value.values():
            yield from instances_in(v, cls)


class Subgraph:
    """A graph held by a control-flow node (a branch, a loop body), named in its parent
    (``true_graph_0``). Its placeholders are the node's tensor args in order."""

    def __init__(self, name, graph):
        self.name, self.graph = name, graph

    def __repr__(self):
        return self.name


def bind_subgraphs(kwargs, compile):
    """``kwargs`` with each :class:`Subgraph` replaced by ``compile(subgraph.graph)``: how a
    runner of the parent graph gets callables for its control-flow nodes."""
    return {k: compile(v.graph) if isinstance(v, Subgraph) else v for k, v in kwargs.items()}
