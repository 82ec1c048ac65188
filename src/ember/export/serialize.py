"""``ember.export.save`` / ``load``: an :class:`ExportedProgram` in a file that loading cannot
run code from.

The file is a zip archive: ``ember_export/program.json`` (the graph as data: nodes name their
op entry, or control-flow operator, by name; attributes are JSON values, tuples, dtypes,
slices, size expressions (``2*batch``) and nested subgraphs, nothing else), and ``ember_export/data/<k>``, each tensor's raw
bytes in C order, with its dtype and shape in the JSON. Loading looks every name up in
ember's own tables and refuses anything else (ValueError); no pickle, no eval.
"""
import io
import json
import math
import operator
import os
import zipfile

import numpy as np

from .. import _dtype
from .._higher_order_ops import AssociativeScan, Cond, Map, Scan, Switch, WhileLoop
from .._ops import OPS
from .._tensor import Tensor
from ..compiler.structure import _INT_SLOT, _SLOT
from ..compiler.dynamic import SizedConstant
from ..compiler.graph import Graph, Node, Subgraph
from ..compiler.symbolic import Expr, symbol
from ..fx.graph_module import CapturedGraphModule
from ..nn.parameter import Parameter
from ..serialization._files import write_atomically
from .dynamic_shapes import ValueRanges
from .exported_program import ExportedProgram

__all__ = ["save", "load"]

FORMAT = "ember.export/1"
_HOPS = {cls.name: cls for cls in (Cond, Switch, WhileLoop, Scan, Map, AssociativeScan)}
_EXPR_OPS = ("+", "*", "//", "%", "/")


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Write ``ep`` to ``f`` (a path, written atomically, or a writable binary file).

    Raises:
        TypeError: ``ep`` is not an ExportedProgram.
        ValueError: a node attribute has no saved form (named with its node).
    """
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be of type 'ExportedProgram', got '{type(ep).__name__}' instead.")
    gm = ep.graph_module
    held = [(name, gm._held(name)) for name in gm._inputs if isinstance(name, str)]
    program = {"format": FORMAT, "graph": _graph(gm.graph), "inputs": [_value(i) for i in gm._inputs],
               "out_spec": _value(gm._out_spec),
               "range_constraints": [[str(k), _bound(v.lower), _bound(v.upper)] for k, v in ep.range_constraints.items()],
               "int_inputs": ep.int_inputs, "object_inputs": ep.object_inputs,
               "lifted": sorted(gm.__dict__.get("_lifted", ())), "access": gm.__dict__.get("_access", []),
               "non_persistent": sorted(ep.graph_signature.non_persistent_buffers),
               "tensors": [{"name": name, "dtype": t.dtype.name, "shape": list(t.shape),
                            "parameter": isinstance(t, Parameter), "requires_grad": t.requires_grad}
                           for name, t in held]}

    def write(fh):
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as archive:
            archive.writestr("ember_export/program.json", json.dumps(program))
            for k, (_, t) in enumerate(held):
                archive.writestr(f"ember_export/data/{k}", np.ascontiguousarray(t._data).tobytes())
            for name, text in (extra_files or {}).items():
                archive.writestr(f"ember_export/extra/{name}", text)
    if isinstance(f, (str, os.PathLike)):
        write_atomically(os.fspath(f), write)
    else:
        write(f)


def load(f, *, extra_files=None, expected_opset_version=None):
    """Read an :class:`ExportedProgram` written by :func:`save` from a path or binary file;
    ``extra_files`` (a dict) gets the saved extra files' text for its keys.

    Raises:
        ValueError: not an ember export file, or it names an op, value or node ember does not
            know, or a tensor's bytes do not match its dtype and shape.
    """
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        program = json.loads(archive.read("ember_export/program.json"))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as e:
        raise ValueError(f"not an ember.export file: {e}") from None
    if not isinstance(program, dict) or program.get("format") != FORMAT:
        raise ValueError(f"not an ember.export file of format {FORMAT!r}")
    try:  # a file edited by hand or cut short: missing keys, values of the wrong kind
        root = {spec["name"]: _tensor(spec, archive.read(f"ember_export/data/{k}"))
                for k, spec in enumerate(program["tensors"])}
        for name in extra_files or {}:
            extra_files[name] = archive.read(f"ember_export/extra/{name}").decode()
        graph = _load_graph(program["graph"])
        inputs = [_load_value(i, {}) for i in program["inputs"]]
        if len(inputs) != len(graph.placeholders) or not all(
                i in root if isinstance(i, str) else isinstance(i, SizedConstant) or type(i) is int and
                0 <= i < len(inputs) for i in inputs):
            raise ValueError(f"the saved inputs {program['inputs']!r} do not match the graph's placeholders")
        gm = CapturedGraphModule(root, graph, inputs, _load_value(program["out_spec"], {}))
        gm._lifted, gm._non_persistent = set(program.get("lifted", ())), set(program.get("non_persistent", ()))
        gm._access = program.get("access", [])
        if not all(isinstance(a, str) for a in gm._access):
            raise ValueError(f"the saved input names {gm._access!r} are not strings")
        if not gm._lifted | gm._non_persistent <= set(root):
            raise ValueError(f"the saved constants {sorted(gm._lifted | gm._non_persistent)} are not among its tensors")
        ranges = {symbol(str(name)): ValueRanges(_load_bound(lo), _load_bound(hi))
                  for name, lo, hi in program["range_constraints"]}
        if set(map(str, ranges)) != set(graph.symbols):
            raise ValueError(f"the saved range constraints {program['range_constraints']!r} do not match the "
                             f"graph's size symbols {list(graph.symbols)}")
        int_inputs = program.get("int_inputs", {})
        if not all(n in graph.symbols and type(k) is int and k >= 0 for n, k in int_inputs.items()):
            raise ValueError(f"the saved int inputs {int_inputs!r} do not match the graph's size symbols")
        objects = program.get("object_inputs", [])
        if not all(type(i) is int and isinstance(n, str) and type(k) is int and k >= 0 and i >= 0 and
                   all(type(a) is bool and type(key) in (str, int) for a, key in steps)
                   for i, n, k, steps in objects):
            raise ValueError(f"the saved object inputs {objects!r} do not match the graph's inputs")
        return ExportedProgram(gm, range_constraints=ranges, int_inputs=int_inputs, object_inputs=objects)
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        raise ValueError(f"not a valid ember.export file: {type(e).__name__}: {e}") from None


def _bound(v):  # JSON has no infinities
    return v if abs(v) != math.inf else "inf" if v > 0 else "-inf"


def _load_bound(v):
    if v in ("inf", "-inf"):
        return float(v)
    if type(v) is not int:
        raise ValueError(f"unexpected range bound {v!r} in the saved program")
    return v


def _tensor(spec, data):
    dtype = getattr(_dtype, str(spec["dtype"]), None)
    if not isinstance(dtype, _dtype.dtype):
        raise ValueError(f"unknown dtype {spec['dtype']!r} of tensor {spec['name']!r}")
    shape = tuple(int(s) for s in spec["shape"])
    if len(data) != int(np.prod(shape)) * dtype.itemsize:
        raise ValueError(f"tensor {spec['name']!r}: {len(data)} bytes do not hold {dtype}{list(shape)}")
    array = np.frombuffer(data, dtype.np).reshape(shape).copy()
    if spec["parameter"]:
        return Parameter(Tensor._make(array), requires_grad=bool(spec["requires_grad"]))
    return Tensor._make(array)


# ---- the graph as JSON ----------------------------------------------------------------------
def _graph(graph):
    return {"placeholders": [{"name": p.name, "meta": _value(p.meta)} for p in graph.placeholders],
            "nodes": [{"name": n.name, "target": _target(n), "args": _value(n.args), "kwargs": _value(n.kwargs),
                       "meta": _value(n.meta)} for n in graph.nodes if n.op == "call_op"],
            "outputs": _value(list(graph.outputs)), "symbols": list(graph.symbols), "any_shape": graph.any_shape,
            "mutations": [[p.name, v.name] for p, v in graph.mutations]}


def _target(node):
    t = node.target
    if t is operator.getitem:
        return "getitem"
    if _HOPS.get(t.name) is t or OPS.get(t.name) is t:
        return t.name
    raise ValueError(f"node {node.name}: its target {t!r} has no saved form")


def _value(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if v is _SLOT:
        return {"tensor": True}
    if v is _INT_SLOT:
        return {"int": True}
    if isinstance(v, Node):
        return {"node": v.name}
    if isinstance(v, Subgraph):
        return {"subgraph": v.name, "graph": _graph(v.graph)}
    if isinstance(v, Expr):
        return {"expr": [v.op, [_value(a) for a in v.args]]}
    if isinstance(v, SizedConstant):
        return {"sized_const": [v.kind, v.dtype.str, _value(v.args)]}
    if isinstance(v, _dtype.dtype):
        return {"dtype": v.name}
    if isinstance(v, type) and OPS.get(v.__name__) is v:  # an op entry inside an attr (a view chain)
        return {"op": v.__name__}
    if isinstance(v, np.generic):
        return {"scalar": v.item(), "np_dtype": v.dtype.str}
    if isinstance(v, slice):
        return {"slice": [_value(v.start), _value(v.stop), _value(v.step)]}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, tuple):
        return {"tuple": [_value(x) for x in v]}
    if isinstance(v, list):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {"dict": [[_value(k), _value(x)] for k, x in v.items()]}
    raise ValueError(f"{v!r} (a {type(v).__name__}) has no saved form")


def _load_graph(data):
    graph, env = Graph(), {}
    for p in data["placeholders"]:
        node = graph.placeholder(p["name"], _load_value(p["meta"], env))
        node.name = node.target = p["name"]
        env[p["name"]] = node
    for n in data["nodes"]:
        name = n["target"]
        target = operator.getitem if name == "getitem" else _HOPS.get(name) or OPS.get(name)
        if target is None:
            raise ValueError(f"node {n['name']!r}: unknown op {name!r}")
        args, kwargs = _load_value(n["args"], env), _load_value(n["kwargs"], env)
        named = isinstance(kwargs, dict) and all(isinstance(k, str) and k.isidentifier() for k in kwargs)
        if not (isinstance(args, (tuple, list)) and named):
            raise ValueError(f"node {n['name']!r}: its args must be a sequence and its kwargs keyed by names")
        node = graph.call_op(target, args, kwargs, _load_value(n["meta"], env))
        node.name = n["name"]
        env[node.name] = node
    graph.output(_load_value(data["outputs"], env))
    graph.symbols = tuple(str(n) for n in data.get("symbols", ()))
    graph.any_shape = data.get("any_shape") is True
    for p, v in data["mutations"]:
        graph.mutate(env[p], env[v])
    return graph


def _load_value(v, env):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, list):
        return [_load_value(x, env) for x in v]
    if not isinstance(v, dict) or len(v) not in (1, 2):
        raise ValueError(f"unexpected value {v!r} in the saved graph")
    (key, x), *rest = v.items()
    if key == "tensor":
        return _SLOT
    if key == "int":
        return _INT_SLOT
    if key == "node":
        if x not in env:
            raise ValueError(f"the saved graph reads node {x!r} before defining it")
        return env[x]
    if key == "subgraph":
        return Subgraph(x, _load_graph(v["graph"]))
    if key == "expr" and x[0] == "sym" and len(x[1]) == 1 and isinstance(x[1][0], str):
        return symbol(x[1][0])
    if key == "expr" and x[0] in _EXPR_OPS and len(x[1]) == 2:
        a, b = (_load_value(a, env) for a in x[1])
        if all(isinstance(o, (int, Expr)) and not isinstance(o, bool) for o in (a, b)):
            return Expr(x[0], (a, b))
    if key == "sized_const" and x[0] in ("full", "arange") and np.dtype(x[1]).kind in "biuf":
        return SizedConstant(x[0], np.dtype(x[1]), _load_value(x[2], env))
    if key == "dtype":
        dtype = getattr(_dtype, str(x), None)
        if isinstance(dtype, _dtype.dtype):
            return dtype
    if key == "op" and x in OPS:
        return OPS[x]
    if key == "scalar" and np.dtype(v["np_dtype"]).kind in "biufc":
        return np.dtype(v["np_dtype"]).type(x)
    if key == "slice":
        return slice(*(_load_value(s, env) for s in x))
    if key == "ellipsis":
        return Ellipsis
    if key == "tuple":
        return tuple(_load_value(i, env) for i in x)
    if key == "dict":
        return {_hashable(_load_value(k, env)): _load_value(i, env) for k, i in x}
    raise ValueError(f"unexpected value {v!r} in the saved graph")


def _hashable(key):
    if isinstance(key, list):
        raise ValueError(f"unexpected dict key {key!r} in the saved graph")
    return key
