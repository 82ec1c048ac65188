"""The compile cache keyed by the captured graph: a warm process skips planning and C generation.

:func:`graph_key` hashes the graph itself (every node's op, attrs, shapes, dtypes and
constants, the bytes of constant arrays), the code generator's version (every file of the
ember package: its path, size and modification time), the code of its functions as loaded, the BLAS being present, the
compiler's identity and the CPU. A hit finds ``g-<key>.json`` in the compile cache: the key of the shared
library (whose own record, :mod:`.toolchain`, checks its SHA-256) and the plan's metadata the
driver needs (where each value lives, which kernels run in Python, the GEMMs), as plain JSON
(nothing in it is executed), with its own SHA-256 so that a corrupt or edited record is a miss.
A graph holding a value the key cannot describe faithfully (an arbitrary Python object) is
never looked up: it is planned and generated as before, and still found by the library's
source-keyed entry.
"""
import functools
import hashlib
import importlib.metadata
import json
import operator
import os
import platform
import shutil
from pathlib import Path

import numpy as np

from ... import _dtype
from ..graph import Node, Subgraph
from ..symbolic import Expr
from . import (attention, autotune, cgen, conv, conv_gemm, copies, direct_gemm, gather, gemm, indexing, kernels, locs, norm, plan,
               pool, python, rnn, row_reductions, rows, shared, sort, toolchain, updates, winograd)
from .plan import Kernel, Loc, Plan, Storage

__all__ = ["graph_key", "load", "record"]

_PACKAGE = Path(__file__).resolve().parents[2]


class _Uncacheable(Exception):
    """A value whose identity the key cannot capture (its repr may hide state)."""


@functools.lru_cache(maxsize=None)
def code_version():
    """The version of the code that plans and generates C: every source file of the package,
    by path, size and modification time (an edit or reinstall changes it; nothing is read)."""
    out = []
    _stat_sources(str(_PACKAGE), "/", out)
    return hashlib.sha256("\n".join(out).encode()).hexdigest()


def _stat_sources(path, rel, out):
    """Appends ``"<path under the package> <size> <mtime_ns>"`` of each .py and .h file under
    ``path`` to ``out``, in sorted order (one stat per file, through ``os.scandir``'s entries:
    3.0 against os.walk's 4.1 ms for the package's 520 files)."""
    with os.scandir(path) as found:
        entries = sorted(found, key=lambda e: e.name)
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            if e.name != "__pycache__":
                _stat_sources(e.path, f"{rel}{e.name}/", out)
        elif e.name.endswith((".py", ".h")):
            st = e.stat()
            out.append(f"{rel}{e.name} {st.st_size} {st.st_mtime_ns}")


# every module whose functions, as loaded (a course or a test may patch them), write generated
# code (toolchain: its pragmas); files on disk are keyed by code_version
_GENERATORS = (attention, autotune, cgen, conv, conv_gemm, copies, direct_gemm, gather, gemm, indexing, kernels, locs, norm, plan,
               pool, python, rnn, row_reductions, rows, shared, sort, toolchain, updates, winograd)


def _generator_code():
    """The code of the code generator's functions as loaded (toolchain.code_digest)."""
    return toolchain.code_digest(_GENERATORS)


@functools.lru_cache(maxsize=None)
def _compiler_identity(argv):
    """The compiler by its resolved file's path, size and time (no subprocess: a warm start
    must not wait for ``cc --version``); ``python -m ziglang`` by the ziglang version."""
    if argv[1:3] == ("-m", "ziglang"):
        return f"{' '.join(argv)} {importlib.metadata.version('ziglang')}"
    found = shutil.which(argv[0])
    if found is None:
        return toolchain.compiler_identity(argv)
    path = os.path.realpath(found)
    st = os.stat(path)
    return f"{' '.join(argv)} {path} {st.st_size} {st.st_mtime_ns}"


_PLAIN = {type(None), bool, int, str}


def _canon(value, index, out):
    """Appends a canonical text of ``value`` to ``out`` (a list of strings)."""
    kind = type(value)
    if kind is tuple:  # (the common kinds first, by exact type: the GPT step's graph text 4.0 -> 3.0 ms)
        out.append("(")
        for v in value:
            _canon(v, index, out)
        out.append(")")
    elif kind in _PLAIN:
        out.append(f"{kind.__name__}:{value!r}")
    elif kind is dict:
        out.append("{")
        for k, v in value.items():
            out.append(f"{k!r}=")
            _canon(v, index, out)
        out.append("}")
    elif kind is Node:
        out.append(f"%{index[value]}")
    elif kind is _dtype.dtype:
        out.append(f"dtype:{value.name}")
    elif isinstance(value, Node):
        out.append(f"%{index[value]}")
    elif value is None or isinstance(value, (bool, int, str)):
        out.append(f"{type(value).__name__}:{value!r}")
    elif isinstance(value, float):
        out.append(f"f:{value.hex()}")
    elif isinstance(value, (tuple, list)):
        out.append("(" if isinstance(value, tuple) else "[")
        for v in value:
            _canon(v, index, out)
        out.append(")")
    elif isinstance(value, dict):
        out.append("{")
        for k, v in value.items():
            out.append(f"{k!r}=")
            _canon(v, index, out)
        out.append("}")
    elif isinstance(value, slice):
        out.append("slice")
        _canon((value.start, value.stop, value.step), index, out)
    elif isinstance(value, _dtype.dtype):
        out.append(f"dtype:{value.name}")
    elif isinstance(value, np.dtype):
        out.append(f"np:{value.str}")
    elif isinstance(value, (np.ndarray, np.generic)):
        a = np.ascontiguousarray(value)
        out.append(f"array:{a.dtype.str}{a.shape}:{hashlib.sha256(a.view(np.uint8)).hexdigest()}")
    elif isinstance(value, Expr):
        out.append(f"expr:{value.key()!r}")
    elif isinstance(value, type) or value is operator.getitem:
        out.append(f"op:{value.__module__}.{value.__qualname__}")
    elif isinstance(value, Subgraph):
        out.append(f"subgraph:{_graph_text(value.graph)}")
    else:
        raise _Uncacheable(type(value).__name__)


def _graph_text(graph):
    index = {n: i for i, n in enumerate(graph.nodes)}
    ranges = sorted(graph.symbol_ranges.items())
    out = [f"symbols:{graph.symbols!r} ranges:{ranges!r} any_shape:{graph.any_shape}"]
    for n in graph.nodes:
        out.append(f"\n{n.op} {n.name} ")
        _canon(n.target, index, out)
        for part in (n.args, n.kwargs, n.meta):
            _canon(part, index, out)
    out.append("\noutputs")
    _canon(graph.outputs, index, out)
    out.append("\nmutations")
    _canon(graph.mutations, index, out)
    return "".join(out)


def graph_key(graph, compiler, have_blas, autotuning=False):
    """The cache key of compiling ``graph`` (hex), or None when it holds a value the key
    cannot describe. ``autotuning`` (max-autotune) builds every convolution variant, so it is
    part of the key. A graph with size symbols is keyed by its symbols and their ranges too
    (the views and scatters planned depend on them) and its sizes' expressions (in each
    node's shapes and attrs)."""
    try:
        text = _graph_text(graph)
    except _Uncacheable:
        return None
    parts = [text, code_version(), _generator_code(), f"blas:{have_blas}", f"autotune:{autotuning}",
             f"conv threshold:{conv.MIN_GEMM_CHANNELS}",  # the cost model's setting (tests change it)
             f"autotune records:{autotune.records_digest()}", _compiler_identity(tuple(compiler)),
             " ".join(toolchain.FLAGS), toolchain.cpu_identity(), platform.python_implementation()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _sizes(value):
    """``value`` (an int, a size :class:`~..symbolic.Expr` or a list or tuple of them) as JSON:
    an expression as ``["$", op, *args]`` (its tree exactly: the C was generated from it)."""
    if isinstance(value, Expr):
        return ["$", value.op, *map(_sizes, value.args)]
    if isinstance(value, (list, tuple)):
        return [_sizes(v) for v in value]
    return value


def _unsizes(value):
    """The inverse of :func:`_sizes` (a list comes back a list); ValueError for a malformed one."""
    if isinstance(value, list):
        if value[:1] == ["$"]:
            op, args = value[1], value[2:]
            if op == "sym" and len(args) == 1 and type(args[0]) is str:
                return Expr(op, args)
            if op not in ("+", "*", "//", "%", "/", "min", "max") or len(args) != 2:
                raise ValueError(f"not a size expression: {value!r}")
            return Expr(op, [_unsizes(v) for v in args])
        return [_unsizes(v) for v in value]
    if value is not None and type(value) is not int:
        raise ValueError(f"not a size: {value!r}")
    return value


def _record(key):
    return toolchain.cache_dir() / f"g-{key}.json"


def record(key, lib_key, plan, regions, gemms, slots, convs):
    """The record of ``key`` as ``(path, text)``, to write once the library is built: the
    library's key and the plan's metadata the driver and the GEMM chooser read (nodes by their
    index in the graph)."""
    graph = plan.graph
    index = {n: i for i, n in enumerate(graph.nodes)}
    kernel_index = {id(k): i for i, k in enumerate(plan.kernels)}
    slot_of = {id(s): i for i, s in slots.items()}
    locs = []
    for node, loc in plan.loc.items():
        slot = slot_of.get(id(loc.storage.resolve()))
        if loc.storage.node is node and slot is not None:  # a placeholder's or buffer's own value
            locs.append([index[node], slot, _sizes(loc.shape), loc.dtype.str, _sizes(loc.strides), _sizes(loc.offset)])
    payload = {
        "library": lib_key,
        "slots": [[i, s.kind, None if s.node is None else index[s.node], _sizes(s.shape), s.dtype.str]
                  for i, s in slots.items()],  # node None: a kernel's private scratch
        "locs": locs,
        "kernels": [[k.kind, [index[n] for n in k.nodes], [index[n] for n in k.epilogue.nodes] if k.epilogue else None]
                    for k in plan.kernels],
        "regions": [[kernel_index[id(k)] for k in r] for r in regions],
        "gemms": [[fname, _sizes(shape), kernel_index[id(k)]] for fname, shape, k in gemms],
        "convs": [[fname, kernel_index[id(k)]] for fname, k in convs],
        "c_outputs": [[index[o], plan.kind[o]] for o in graph.outputs if isinstance(o, Node) and plan.kind.get(o) is not None],
        "scatter_sums": [index[n] for n in plan.scatter_sums],  # (their buffers' layout is permuted)
        "in_place": [[index[v], index[p]] for v, p in plan.in_place.items()],
    }
    text = json.dumps(payload, separators=(",", ":"))
    return _record(key), json.dumps({"sha256": hashlib.sha256(text.encode()).hexdigest(), "payload": text})


def load(key, graph):
    """``(library key, plan, regions, gemms, slots, convs)`` from the record of ``key``, or None when
    it is missing, corrupt or was edited (then the caller rebuilds and rewrites it). The plan
    holds what the driver reads: locations of placeholders and buffers (strides and offsets:
    an output owning its buffer is handed out uncopied, as in the process that built it), kernels,
    outputs in C's memory and their kinds, gradient sums laid out permuted, values written in place."""
    try:
        record = json.loads(_record(key).read_text())
        text = record["payload"]
        if hashlib.sha256(text.encode()).hexdigest() != record["sha256"]:
            return None
        payload = json.loads(text)
        nodes = graph.nodes
        plan = Plan(graph)
        slots = {}
        for i, kind, n, shape, dtype in payload["slots"]:
            slots[i] = Storage(kind, None if n is None else nodes[n], _unsizes(shape), np.dtype(dtype))
            slots[i].index = i
        for n, slot, shape, dtype, strides, offset in payload["locs"]:
            shape, strides, offset, storage = _unsizes(shape), _unsizes(strides), _unsizes(offset), slots[slot]
            if storage.node is not nodes[n]:  # this node's buffer is another's, reused
                storage = Storage("buffer", nodes[n], shape, np.dtype(dtype))
                storage.alias = slots[slot]
            plan.loc[nodes[n]] = Loc(storage, shape, strides, np.dtype(dtype), offset)
        for kind, members, epilogue in payload["kernels"]:
            kernel = Kernel(kind, [nodes[n] for n in members])
            if epilogue is not None:
                kernel.epilogue = Kernel("loop", [nodes[n] for n in epilogue])
            plan.kernels.append(kernel)
        regions = [[plan.kernels[k] for k in r] for r in payload["regions"]]
        gemms = [(fname, tuple(_unsizes(shape)), plan.kernels[k]) for fname, shape, k in payload["gemms"]]
        plan.kind = {nodes[n]: kind for n, kind in payload["c_outputs"]}
        plan.scatter_sums = {nodes[n]: None for n in payload["scatter_sums"]}
        plan.in_place = {nodes[v]: nodes[p] for v, p in payload["in_place"]}
        convs = [(fname, plan.kernels[k]) for fname, k in payload["convs"]]
        return payload["library"], plan, regions, gemms, slots, convs
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
