"""The fx graph a callable compiler backend gets: ``my_backend(gm, example_inputs)`` is handed,
as by torch's dynamo, a :class:`~ember.fx.GraphModule` of torch-style nodes, built from the
captured graph (the compiler's IR, whose nodes are ``call_op`` of op entries).

Placeholders are named as torch names a frame's inputs (``L_a_``, node name ``l_a_``); each op
the table below knows becomes a ``call_function`` of the public callable a user writes
(``operator.add``, ``ember.abs``, ``ember.nn.functional.relu``, ``ember.sum(x, dim=...)``;
a ``permute`` feeding only an ``addmm`` becomes ``ember.nn.functional.linear``). Any other op
becomes a ``call_function`` of an :class:`OpCall`, which applies the op as the ``eager``
backend does, so the module still runs (with autograd) and a backend can still rewrite the
known nodes' targets and ``recompile()``. In-place writes into the inputs are ``copy_into``
nodes before the output. Each node's ``meta`` holds the captured ``shape``, ``dtype`` and
``requires_grad``, and, as torch's, ``example_value``: a tensor of that shape and dtype on the
``meta`` device (torch's is a FakeTensor on the real device). Ops the function ran under a
``no_grad`` or ``enable_grad`` of its own sit between ``set_grad_enabled`` calls, as torch's
sit between ``torch._C._set_grad_enabled`` calls.

A graph with size symbols (dynamic shapes) takes, as torch's, one int placeholder per symbol
(``s0``, ``s1``) before the tensors; sizes its ops read (``2*s0`` in a reshape, ``x / s0``)
are ``call_function`` nodes of ``operator.mul``, ``add``, ``floordiv``... over them, as torch's
SymInt arithmetic.
"""
import operator
import sys

from .._ops.core import apply, reads_indices, write_into
from ..autograd.grad_mode import set_grad_enabled
from ..compiler.graph import Node as _IRNode, Subgraph, _snake
from ..compiler.replay import _arrays, _tensors, dispatch
from ..compiler.symbolic import _OPERATOR as _SIZE_OPERATORS, Cond, Expr, evaluate
from .graph import Graph
from . import graph_module as _graph_module  # (the module: graph_module imports the compiler, which imports this)

__all__ = ["OpCall", "copy_into", "backend_graph_module", "handed_as_fx", "without_unused"]

_UNARY = ("Abs Acos Asin Atan Ceil Cos Cosh Erf Exp Expm1 Floor Frac Log Log10 Log1p Log2 Neg Reciprocal "
          "Rsqrt Sigmoid Sign Sin Sinh Sqrt Tan Tanh Trunc").split()
_OPERATORS = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Div": operator.truediv,
              "Pow": operator.pow}


class OpCall:
    """A ``call_function`` target applying one op entry (an op without a public counterpart in
    the table): ``OpCall(op)(*tensors, **attrs)`` is the op through the dispatcher, as the
    ``eager`` backend replays it; index tensors among the attrs are read as arrays."""

    def __init__(self, op, name):
        self.op, self.__name__ = op, name

    def __call__(self, *args, **kwargs):
        indices = _tensors(kwargs.values())
        kwargs = {k: _arrays(v) for k, v in kwargs.items()}
        if hasattr(self.op, "dispatch"):  # a control-flow node: its subgraphs bound to runners
            return self.op.dispatch(*args, **kwargs)
        return reads_indices(apply(self.op, *args, **kwargs), indices)

    def __repr__(self):
        return f"OpCall({self.op.name})"


def copy_into(target, value):
    """Writes ``value`` into the input ``target`` (an in-place write of the captured function);
    a value without history is written untracked, as the ``eager`` backend's replay does."""
    with set_grad_enabled(value.requires_grad):
        write_into(target, value)
    return target


def _public(path):
    module, _, name = path.rpartition(".")
    return getattr(sys.modules[module], name, None)


def _plain(value):
    """Whether ``value`` (an argument) is what a user would write: graph values, numbers,
    None, dtypes and tuples/lists of them (not arrays held by the graph)."""
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (_IRNode, Expr, bool, int, float, complex, str)) or \
        isinstance(value, sys.modules["ember"].dtype)


def _public_call(node, fused):
    """``(callable, args, kwargs)`` a user would write for ``node`` (a method's name for a
    ``call_method``), or None (no entry)."""
    name, args, kwargs = getattr(node.target, "name", None), node.args, node.kwargs
    if not _plain((args, tuple(kwargs.values()))) or not any(isinstance(a, _IRNode) for a in args):
        return None
    ember = sys.modules["ember"]
    if name in _OPERATORS and len(args) == 2:
        if kwargs.get("alpha", 1) == 1 and set(kwargs) <= {"alpha"}:
            return _OPERATORS[name], args, {}
        return (getattr(ember, name.lower()), args, kwargs) if set(kwargs) == {"alpha"} else None
    if name in _UNARY and len(args) == 1 and not kwargs:
        return getattr(ember, name.lower(), None), args, {}
    if name == "Relu" and len(args) == 1 and not kwargs:
        return _public("ember.nn.functional.relu"), args, {}
    if name == "Permute" and set(kwargs) == {"dims"}:
        return ember.permute, (*args, kwargs["dims"]), {}
    if name == "ToDtype" and set(kwargs) == {"dtype"}:  # x.to(dtype): a call_method
        return "to", (*args, kwargs["dtype"]), {}
    if name in ("Sum", "Softmax", "LogSoftmax", "Matmul", "Maximum", "Minimum"):
        defaults = {"dim": None, "keepdim": False, "dtype": None} if name == "Sum" else {}
        kwargs = {k: v for k, v in kwargs.items() if defaults.get(k, ...) != v}
        return getattr(ember, _snake(name)), args, kwargs
    if name in ("View", "Squeeze", "Unsqueeze") and set(kwargs) == {"shape"}:
        return ember.reshape, (*args, kwargs["shape"]), {}
    if name == "Addmm" and not kwargs:
        if args[2] in fused:  # bias + x @ weight.T
            return _public("ember.nn.functional.linear"), (args[1], args[2].args[0], args[0]), {}
        return ember.addmm, args, {}
    return None


def _fused(graph):
    """The ``permute(weight, (1, 0))`` nodes read by one ``addmm`` only: written as ``linear``."""
    found = set()
    for n in graph.nodes:
        if getattr(n.target, "name", None) == "Addmm" and not n.kwargs and isinstance(n.args[2], _IRNode):
            p = n.args[2]
            if getattr(p.target, "name", None) == "Permute" and p.kwargs.get("dims") == (1, 0) and \
                    len(p.users) == 1 and len(p.args) == 1:
                found.add(p)
    return found


def _size(fx, expr, env, sizes):
    """The node computing the size expression ``expr`` from the symbols' placeholders
    (``env[name]``), one per expression; its ``example_value`` the int at ``sizes``."""
    if expr.op == "sym":
        return env[expr.args[0]]
    if expr not in env:
        args = tuple(_size(fx, a, env, sizes) if isinstance(a, Expr) else a for a in expr.args)
        env[expr] = fx.call_function(_SIZE_OPERATORS[expr.op], args)
        if sizes:
            env[expr].meta["example_value"] = evaluate(expr, sizes)
    return env[expr]


def _mapped(value, env, fx=None, sizes=None):
    if isinstance(value, _IRNode):
        return env[value]
    if isinstance(value, Expr):
        return _size(fx, value, env, sizes)
    if isinstance(value, (tuple, list)):
        return type(value)(_mapped(v, env, fx, sizes) for v in value)
    if isinstance(value, dict):
        return {k: _mapped(v, env, fx, sizes) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(*(_mapped(v, env, fx, sizes) for v in (value.start, value.stop, value.step)))
    if isinstance(value, Subgraph):
        return dispatch(value.graph)
    return value


def _describe(node, meta, sizes):
    """``node.meta``: the captured node's ``meta`` and, where it has a shape (known at
    ``sizes``, the capturing call's, where it has symbols), ``example_value``."""
    node.meta.update(meta)
    if "shape" in meta and (sizes or not any(isinstance(d, Expr) for d in meta["shape"])):
        node.meta["example_value"] = sys.modules["ember"].empty(
            evaluate(meta["shape"], sizes or {}), dtype=meta["dtype"], device="meta",
            requires_grad=meta["requires_grad"])


def _leaves(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        yield from _leaves(list(value.values()))
    elif isinstance(value, slice):
        yield from (value.start, value.stop, value.step)
    else:
        yield value


def handed_as_fx(graph):
    """Whether :func:`backend_graph_module` builds ``graph``: a graph with size symbols whose
    control-flow nodes' subgraphs or size conditions the nodes cannot carry is handed as
    captured (:class:`~ember.fx.graph_module.SizedGraphModule`)."""
    return not graph.symbols or not any(isinstance(v, (Subgraph, Cond)) or hasattr(n.target, "dispatch")
                                        for n in graph.nodes for v in _leaves((n.args, n.kwargs)))


def _grad_mode_switch(fx, mode, wanted):
    """Adds a ``set_grad_enabled`` call where a node's grad mode (``wanted``: its
    ``meta["grad_enabled"]``, None: the call's own) is not the current one (``mode``), as torch's
    graphs hold ``torch._C._set_grad_enabled`` calls around a ``no_grad``/``enable_grad`` region
    inside the function; returns the mode after it."""
    if wanted != mode:
        fx.call_function(set_grad_enabled, (wanted if wanted is not None else not mode,))
    return wanted


def backend_graph_module(graph, targets=None, sizes=None, n_outputs=None):
    """The :class:`~ember.fx.GraphModule` a callable backend gets for the captured ``graph``:
    ``forward(*sizes, *placeholders' tensors)`` returns the outputs' tuple, one int per size
    symbol first (``graph.symbols``; ``sizes``: their values at the capturing call, shown in
    the nodes' ``example_value``). ``targets``: the placeholders' targets (torch's names,
    :mod:`ember.compiler.torch_names`; default ``L_<name>_``), each node named as torch's,
    its target in lower case. ``n_outputs``: how many of the graph's outputs it returns (all)."""
    fx, env = Graph(), {}
    for name in graph.symbols:
        env[name] = fx.create_node("placeholder", name, name=name)
        if sizes:
            env[name].meta["example_value"] = sizes[name]
    for p, target in zip(graph.placeholders, targets or [f"L_{p.name}_" for p in graph.placeholders]):
        env[p] = fx.create_node("placeholder", target, name=target.lower(), type_expr=sys.modules["ember"].Tensor)
        _describe(env[p], p.meta, sizes)
    fused, mode = _fused(graph), None  # (None: the grad mode the call was made under)
    for n in graph.nodes:
        if n.op != "call_op" or n in fused:
            continue
        mode = _grad_mode_switch(fx, mode, n.meta.get("grad_enabled"))
        call = (operator.getitem, n.args, {}) if n.target is operator.getitem else _public_call(n, fused)
        name = None  # (named after the callable, as torch's: truediv, linear)
        if call is None or call[0] is None:
            call, name = (OpCall(n.target, n.name), n.args, n.kwargs), n.name
        target, args, kwargs = call
        args, kwargs = _mapped(tuple(args), env, fx, sizes), _mapped(kwargs, env, fx, sizes)
        env[n] = fx.create_node("call_method" if isinstance(target, str) else "call_function", target,
                                args, kwargs, name=name)
        _describe(env[n], n.meta, sizes)
    _grad_mode_switch(fx, mode, None)
    for p, v in graph.mutations:
        fx.call_function(copy_into, (env[p], _mapped(v, env)))
    fx.output(tuple(_mapped(v, env) for v in graph.outputs[:n_outputs]))
    return _graph_module.GraphModule({}, fx)


def without_unused(gm, n_symbols):
    """Erases the tensor placeholders (after the ``n_symbols`` sizes') of ``gm`` that no node
    reads, as torch's dynamo prunes unused inputs; returns the kept ones' positions."""
    nodes = [n for n in gm.graph.nodes if n.op == "placeholder"][n_symbols:]
    kept = [i for i, n in enumerate(nodes) if n.users]
    if len(kept) < len(nodes):
        for n in nodes:
            if not n.users:
                gm.graph.erase_node(n)
        gm.recompile()
    return kept
