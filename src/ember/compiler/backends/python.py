"""The reference backend: a generated Python function that calls each node's kernel.

The graph becomes straight-line Python (one line per node, ``forward`` of the op entry on
NumPy arrays, no dispatcher, no autograd), compiled once with ``exec``; mutations are copied
into the placeholders' arrays at the end. The C backend's driver is written by the same
:class:`Program`, with runs of C kernels replaced by one call each.

A graph with size symbols (dynamic shapes, ``graph.symbols``) becomes ``fn(arrays, sizes)``:
its sizes and attrs are expressions of the symbols, written into the code (``(S0, 10)``), so
one function serves every size.
"""
import hashlib
import importlib.util
import marshal
import operator
import re

import numpy as np

from ..._backend import wrapped_integer
from ...profiler.profiler import record_function, recording
from ..graph import bind_subgraphs, nodes_in
from ..symbolic import Expr, evaluate, free_symbols
from . import toolchain
from .updates import update_of

__all__ = ["Program", "cached_code", "compile_python", "label", "literal", "with_ranges"]


def literal(value, name=None):
    """``repr(value)`` when it evaluates back to an equal value, else None; expressions of
    size symbols as code when ``name`` spells the symbols (``name("s0") -> "S0"``)."""
    if value is None or type(value) in (bool, int, str):
        return repr(value)
    if isinstance(value, (int, str)):  # (an IntEnum, an int or str subclass: its plain value)
        return repr(int(value) if isinstance(value, int) else str(value))
    if isinstance(value, float):
        return repr(float(value)) if np.isfinite(value) else f"float('{value}')"
    if isinstance(value, Expr):
        return None if name is None else f"({value.code(name)})"
    if isinstance(value, (tuple, list, slice)):
        parts = (value.start, value.stop, value.step) if isinstance(value, slice) else value
        items = [literal(v, name) for v in parts]
        if None in items:
            return None
        if isinstance(value, slice):
            return f"slice({', '.join(items)})"
        if isinstance(value, list):
            return "[" + ", ".join(items) + "]"
        return "(" + "".join(i + ", " for i in items) + ")"
    return None


class Program:
    """Python source with its globals: lines are added in order, constants become names.
    ``symbols``: the size symbols the code reads from its ``sizes`` argument (as ``S0``, ...)."""

    def __init__(self, symbols=()):
        self.lines, self.globals = [], {"np": np, "evaluate": evaluate}
        self.spelling = {n: f"S{i}" for i, n in enumerate(symbols)}

    def constant(self, value, hint="c"):
        """Python source that evaluates to ``value`` in the generated function: a literal when
        one exists, else a new global named from ``hint`` (a size expression is evaluated at
        each call)."""
        text = literal(value, self.spelling.__getitem__ if self.spelling else None)
        if text is not None:
            return text
        name = f"{hint}{len(self.globals)}"
        self.globals[name] = value
        # an attr holding sizes literal() cannot write: its values are found at each call
        return f"evaluate({name}, sizes)" if self.spelling and free_symbols(value) else name

    def call_line(self, node, names, kwargs=None):
        """``v = F(args, kw=...)``: the node's kernel on the values named by ``names``, with
        ``kwargs`` instead of the node's own when given."""
        args = [self.value(a, names) for a in node.args]
        if node.target is operator.getitem:
            return f"{names[node]} = {args[0]}[{args[1]}]"
        if getattr(node.target, "promote", None) is not None:
            args = self.wrapped(node, args)
        fn = self.constant(node.target.forward, "F_" + node.name + "_")
        kwargs = node.kwargs if kwargs is None else kwargs
        kwargs = [f"{k}={self.value(v, names)}" for k, v in kwargs.items()]
        return f"{names[node]} = {fn}({', '.join(args + kwargs)})"

    def wrapped(self, node, args):
        """``args`` of a promoting op with each Python int operand (a constant, or a symbol's
        expression) of an integer computation as a scalar of its dtype, wrapped modulo
        2**bits as eager's dispatcher gives it (``uint8 * -3``): NumPy raises OverflowError."""
        dtypes = [a.meta["dtype"].np for a in node.args if _is_node(a)]
        if not dtypes or dtypes[0].kind not in "iu":
            return args
        kind = dtypes[0]
        for i, a in enumerate(node.args):
            if isinstance(a, Expr) or type(a) is int:
                self.globals.setdefault("wrapped_integer", wrapped_integer)
                args[i] = f"wrapped_integer({args[i]}, {self.constant(kind, 'dtype')})"
        return args

    def value(self, value, names):
        """Source of an arg or attr: a node's name, a tuple or list holding nodes (an index of
        arrays and slices) item by item, else :meth:`constant`."""
        if _is_node(value):
            return names[value]
        if isinstance(value, (tuple, list)) and any(nodes_in(value)):
            items = [self.value(v, names) for v in value]
            return "[" + ", ".join(items) + "]" if isinstance(value, list) else "(" + "".join(i + ", " for i in items) + ")"
        return self.constant(value)

    def function(self, params, body, name="compiled_graph"):
        """Compiles ``def name(arrays): params = arrays; body`` (``name(arrays, sizes)`` with
        the symbols read from ``sizes`` when there are any) and returns (function, source)."""
        unpack = [f"{', '.join(params)}, = arrays"] if params else []
        unpack += [f"{s} = sizes[{n!r}]" for n, s in self.spelling.items()]
        signature = "arrays, sizes" if self.spelling else "arrays"
        source = f"def {name}({signature}):\n" + "".join(f"    {line}\n" for line in unpack + body)
        namespace = dict(self.globals)
        exec(cached_code(source, f"<ember.compile {name}>"), namespace)
        return namespace[name], source


def cached_code(source, filename):
    """``compile(source, filename, "exec")``, kept in the compile cache (``py-<key>.marshal``,
    keyed by the source, the name and Python's bytecode version; read only when its SHA-256
    matches): a warm start loads the GPT step's driver in ~0.3 ms instead of compiling it
    again (5.5 ms). Compiled as before where the cache cannot be read or written."""
    text = f"{filename}\0{source}".encode() + importlib.util.MAGIC_NUMBER
    try:
        path = toolchain.cache_dir() / f"py-{hashlib.sha256(text).hexdigest()[:32]}.marshal"
    except (OSError, ValueError):  # no private cache directory
        return compile(source, filename, "exec")
    try:
        data = path.read_bytes()
        if hashlib.sha256(data[32:]).digest() == data[:32]:
            return marshal.loads(data[32:])
    except (OSError, ValueError, EOFError, TypeError):  # missing, unreadable: compiled and written
        pass
    code = compile(source, filename, "exec")
    payload = marshal.dumps(code)
    try:
        toolchain.write_atomic(path, hashlib.sha256(payload).digest() + payload)
    except OSError:
        pass
    return code


def label(node):
    """``Op(name)`` for comments, logs and profiler ranges; a picked update result reads
    ``SgdUpdate[1](getitem_3)``."""
    update = update_of(node)
    if update is not None:
        return f"{update.target.name}[{node.args[1]}]({node.name})"
    return f"{getattr(node.target, 'name', getattr(node.target, '__name__', node.target))}({node.name})"


def _is_node(a):
    return hasattr(a, "users") and hasattr(a, "meta")


_NOT_WORD = re.compile(r"\W")


def value_names(graph):
    """A Python identifier for every node."""
    return {n: "v_" + _NOT_WORD.sub("_", n.name) for n in graph.nodes}


def compile_python(graph, compile_subgraph=None):
    """The reference callable: ``fn(placeholder_arrays) -> [output arrays]`` (``fn(arrays,
    sizes)`` when the graph has size symbols); mutations are written into the placeholders'
    arrays (``np.copyto``) after every output is computed. Control-flow nodes call their
    subgraphs compiled by ``compile_subgraph`` (by default this function)."""
    program, names = Program(graph.symbols), value_names(graph)
    body, ranged = [], []
    for node in graph.nodes:
        if node.op == "call_op":
            kwargs = bind_subgraphs(node.kwargs, compile_subgraph or compile_python)
            body.append(program.call_line(node, names, kwargs))
            ranged += [f"with RF({'ember::' + label(node).split('(')[0]!r}):", "    " + body[-1]]
    calls = len(body)
    for placeholder, value in graph.mutations:
        body.append(f"np.copyto({names[placeholder]}, {names[value]}, casting='unsafe')")
    # kernels may return NumPy scalars (a full reduction); callers get arrays
    outs = [f"np.asarray({names[o]})" if _is_node(o) else program.constant(o) for o in graph.outputs]
    body.append(f"return [{', '.join(outs)}]")
    params = [names[p] for p in graph.placeholders]
    plain, source = program.function(params, body)
    fn = with_ranges(program, params, plain, ranged + body[calls:])
    fn.source = source
    return fn


def with_ranges(program, params, plain, ranged, prepare=None):
    """``run(*args)``: ``plain`` while no profiler records (one list check per call); under a
    profiler the same steps as ``ranged`` (source lines, each kernel in its range, ``RF``)
    inside one ``CompiledFunction`` range, as torch's profiles show compiled code as one region.
    That variant is compiled at the first profiled call (Python's compile is a warm start's
    largest cost) and handed to ``prepare`` first."""
    program.globals.update(RF=record_function)
    body = ["with RF('CompiledFunction'):"] + ["    " + ln for ln in ranged]
    compiled = []

    def run(*args):
        if not recording():
            return plain(*args)
        if not compiled:
            compiled.append(program.function(params, body, name="compiled_graph_profiled")[0])
            if prepare is not None:
                prepare(compiled[0])
        return compiled[0](*args)
    return run
