"""``Graph`` (torch.fx.Graph): a doubly linked list of :class:`~ember.fx.Node`, the builders
that append to it at an insertion point, its printed forms, and the Python source
(``python_code``) a :class:`~ember.fx.GraphModule` runs.

Naming and the generated code follow torch.fx (https://pytorch.org/docs/stable/fx.html): a
node is named after its target (``cat``, ``add_1``, ``layer1_0_conv1``), a name that shadows a
Python builtin gets a suffix (``max_1``), and each line of the code frees the values it was
the last to read (``add = x + y;  x = y = None``).
"""
import builtins
import collections
import contextlib
import inspect
import keyword
import math
import operator
import re
import sys
import types
import typing

from .node import Node, last_uses, map_aggregate, map_arg, qualified_name, render, type_repr

__all__ = ["Graph", "PythonCode"]

wrapped_functions = {}  # (id of a module's globals, name) -> that globals dict: what ember.fx.wrap registered

# operator functions printed as Python operators: binary with a symbol, unary with a prefix
_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.floordiv: "//",
           operator.mod: "%", operator.pow: "**", operator.matmul: "@", operator.and_: "&", operator.or_: "|",
           operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==", operator.ne: "!=",
           operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}
# typing's generics name their origin by the builtin; the code names it as typing's (typing_List[int])
_TYPING_ORIGINS = {list: typing.List, dict: typing.Dict, set: typing.Set, frozenset: typing.FrozenSet,
                   tuple: typing.Tuple}


class PythonCode:
    """``src``: the source of ``forward``; ``globals``: the names it reads besides ``self``."""

    def __init__(self, src, globals_):
        self.src, self.globals = src, globals_


# The builtins a name must not shadow. ``_`` is not one: an interactive session binds it to its
# last result, and torch.fx (which reads the builtins once, when ``import torch`` runs) names an
# annotation ``_`` whatever a session did since.
_BUILTINS = {k: v for k, v in vars(builtins).items() if k != "_"}


class _Namespace:
    """Unique, legal Python names: ``cat``, ``cat_1``, ...; never a keyword or a shadowed builtin."""

    def __init__(self):
        self._used, self._count = set(), collections.Counter()

    def create_name(self, candidate, obj=None):
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = re.fullmatch(r"(.*)_(\d+)", candidate)
        base, num = (match.group(1), int(match.group(2))) if match else (candidate, None)
        if not num:
            num = self._count[base]
        while candidate in self._used or keyword.iskeyword(candidate) or candidate in ("torch", "inf", "nan") or \
                _BUILTINS.get(candidate, obj) is not obj:
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._count[base] = num
        return candidate

    def forget(self, name):
        self._used.discard(name)


def _snake_case(name):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


class _NodeList:
    """The graph's nodes in order; iteration survives erasing the current node."""

    def __init__(self, root, reverse=False):
        self._root, self._reverse = root, reverse

    def __len__(self):
        return sum(1 for _ in self)

    def __iter__(self):
        step = "_prev" if self._reverse else "_next"
        node = getattr(self._root, step)
        while node is not self._root:
            if not node._erased:
                yield node
            node = getattr(node, step)

    def __reversed__(self):
        return _NodeList(self._root, not self._reverse)


class Graph:
    """The program of an fx :class:`~ember.fx.GraphModule`: nodes in execution order.

    Build it with ``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
    ``call_module`` and ``output`` (each inserts at the insertion point: the end, or where
    ``inserting_before``/``inserting_after`` says) or by tracing (:func:`ember.fx.symbolic_trace`).
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._namespace = _Namespace()
        self._insert = self._root.prepend
        self.owning_module = owning_module

    @property
    def nodes(self):
        """The nodes in order (supports ``reversed``, ``len``; erasing while iterating is safe)."""
        return _NodeList(self._root)

    # ---- building -------------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """A new node at the insertion point, named ``name`` or after its target."""
        candidate = name if name is not None else self._target_to_str(target)
        node = Node(self, self._namespace.create_name(candidate), op, target, args or (), kwargs or {}, type_expr)
        self._insert(node)
        return node

    def placeholder(self, name, type_expr=None, default_value=inspect.Parameter.empty):
        """An input of the graph; ``default_value`` (if given) is its default in ``forward``."""
        args = () if default_value is inspect.Parameter.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """Appends a ``get_attr`` node reading the module attribute ``qualified_name``; returns it."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """Appends a ``call_module`` node calling the submodule ``module_name`` on ``args`` and
        ``kwargs``; returns it."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """Appends a ``call_method`` node calling ``args[0].method_name(*args[1:], **kwargs)``;
        returns it."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        """Appends a ``call_function`` node calling ``the_function(*args, **kwargs)``; returns it."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        """Appends the ``output`` node returning ``result``; returns it."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def _target_to_str(self, target):
        if callable(target):
            return _snake_case(getattr(target, "__name__", type(target).__name__))
        target = str(target)
        if target.startswith("__") and target.endswith("__"):  # a dunder method: __and__ names and_1
            target = target[2:-2]
        return _snake_case(target.replace(".", "_"))

    @contextlib.contextmanager
    def _inserting(self, insert):
        saved, self._insert = self._insert, insert
        try:
            yield
        finally:
            self._insert = saved

    def inserting_before(self, n=None):
        """Within the ``with`` block, new nodes go just before ``n`` (None: at the start)."""
        return self._inserting((n if n is not None else self._root._next).prepend)

    def inserting_after(self, n=None):
        """Within the ``with`` block, new nodes go just after ``n`` (None: at the end); as in
        torch.fx, each goes right after ``n``, so several appear in reverse order of creation."""
        return self._inserting((n if n is not None else self._root._prev).append)

    def erase_node(self, to_erase):
        """Removes a node that no other node reads.

        Raises:
            RuntimeError: the node still has users.
        """
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        to_erase._remove_from_list()
        to_erase._erased = True
        self._namespace.forget(to_erase.name)
        to_erase.args, to_erase.kwargs = (), {}

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of ``node`` (from any graph) here, its input nodes mapped by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        copy = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        copy.meta = dict(node.meta)
        return copy

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copies ``g``'s nodes (but its output) here, recording ``old node -> new`` in ``val_map``;
        returns what ``g``'s output returns, in this graph's nodes."""
        for node in g.nodes:
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo):
        copy = Graph()
        memo[id(self)] = copy
        copied = copy.graph_copy(self, {}, return_output_node=True)
        if copied is not None:
            result, output = copied
            copy.output(result, output.type)
        return copy

    def __reduce__(self):
        """Pickled as a description of its nodes (op, name, target, arguments, type), rebuilt
        through :meth:`create_node` on load (``meta`` is not kept: torch.fx keeps none either)."""
        index = {node: i for i, node in enumerate(self.nodes)}
        ref = lambda node: _NodeRef(index[node])  # noqa: E731
        return _rebuilt, ([(n.op, n.name, n.target, map_arg(n.args, ref), map_arg(n.kwargs, ref), n.type)
                           for n in self.nodes],)

    def eliminate_dead_code(self, is_impure_node=None):
        """Erases the nodes nobody reads that have no side effect (by default
        :meth:`Node.is_impure`; else ``is_impure_node(node)``); returns whether any went."""
        impure = is_impure_node or (lambda node: node.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Checks the graph is well formed: every node's inputs are nodes of this graph defined
        before it, names are unique and, with an owning module, targets have the right types and
        name attributes (submodules for ``call_module``) of that module.

        Raises:
            RuntimeError: a node reads one from elsewhere or from later, a name repeats, or a
                target names nothing. ValueError: a target of the wrong type.
        """
        seen, names = set(), set()
        for node in self.nodes:
            for arg in node.all_input_nodes:
                if arg.graph is not self or arg._erased:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was used "
                                       "as an argument! If you are copying nodes from another graph, make sure to use "
                                       f"``arg_transform`` on node_copy() to remap values\n{self}")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! Please "
                                       f"check that Nodes in the graph are topologically ordered\n{self}")
            seen.add(node)
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
        if self.owning_module is not None:
            for node in self.nodes:
                _lint_target(node, self.owning_module)

    # ---- printed forms --------------------------------------------------------------------
    def __str__(self):
        lines = ["graph():"] + [f"    {node.format_node()}" for node in self.nodes]
        return "\n".join(lines)

    def print_tabular(self):
        """Prints one row per node: opcode, name, target, args, kwargs (needs ``tabulate``,
        as torch.fx does)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on this machine. "
                  "Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, root_module, verbose=False):
        """The source of ``forward(root_module, <placeholders>)`` and the globals it reads;
        ``verbose``: each value with a tensor ``meta["example_value"]`` annotated with its
        dtype and shape as torch's ``print_readable`` shows them (``sin: "f32[4]" = ...``)."""
        globals_ = {"torch": sys.modules["ember"], "inf": math.inf, "nan": math.nan,
                    "device": sys.modules["ember"].device}
        freed_by = last_uses(self.nodes)  # freed after their last use, in its arguments' order
        names = _Namespace()  # for the globals annotations read, besides the nodes' names
        names._used.update(node.name for node in self.nodes)

        def annotate(node):
            value = node.meta.get("example_value") if verbose else None
            if isinstance(value, sys.modules["ember"].Tensor):
                return f': "{_DTYPE_ABBREVIATIONS.get(str(value.dtype), str(value.dtype))}{list(value.shape)}"'
            return "" if node.type is None else f" : {_annotation(node.type, globals_, names)}"
        inputs, body, wraps, returns = [], [], [], ""
        for node in self.nodes:
            if node.op == "placeholder":
                default = f" = {_code(node.args[0], globals_)}" if node.args else ""
                inputs.append(f"{node.target}{annotate(node)}{default}")
                if node.name != node.target:  # the name was taken (a builtin's, say): rebind it
                    body.append(f"{node.name} = {node.target}")
                continue
            if node.op == "call_function" and _is_wrapped(node.target):
                wraps.append(f'torch.fx._symbolic_trace.wrap("{_global_name(node.target, globals_)}")')
            if node.op == "output":
                returns = "" if node.type is None else f" -> {_annotation(node.type, globals_, names)}"
                body.append(f"return {_code(node.args[0], globals_)}")
                continue
            freed = freed_by.get(node, []) + ([node] if not node.users else [])
            line = f"{node.name}{annotate(node)} = {_expression(node, root_module, globals_)}"
            body.append(line + (f";  {' = '.join(n.name for n in freed)} = None" if freed else ""))
        body = body or ["pass"]
        head = "\n" + "".join(f"{w}\n" for w in dict.fromkeys(wraps)) if wraps else "\n\n"
        lines = "".join(f"    {line}\n" for line in body)
        src = f"{head}\ndef forward({', '.join([root_module] + inputs)}){returns}:\n{lines}    "
        return PythonCode(src, globals_)


def _lint_target(node, module):
    if node.op == "call_function" and not callable(node.target):
        raise ValueError(f"Node {node} target {node.target} has type {_typename(node.target)} but a Callable is "
                         "expected")
    if node.op != "call_function" and not isinstance(node.target, str):
        raise ValueError(f"Node {node} target {node.target} has type {_typename(node.target)} but a str is expected")
    if node.op not in ("get_attr", "call_module"):
        return
    atoms = node.target.split(".")
    for i, atom in enumerate(atoms):
        module = getattr(module, atom, None)
        if module is None:
            raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute {atom} of "
                               f"{'.'.join(atoms[:i])}")
        if node.op == "call_module" and not isinstance(module, sys.modules["ember.nn"].Module):
            raise RuntimeError(f"Node {node} target {node.target} {atom} of {'.'.join(atoms[:i])} does not "
                               "reference an nn.Module")


def _typename(value):
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


class _NodeRef:
    """A node's position, standing for it in a pickled graph's arguments."""

    def __init__(self, index):
        self.index = index


# the targets a node of each op names in the generated code: identifiers, dotted for attributes
_TARGET_SYNTAX = {"placeholder": r"\*{0,2}[A-Za-z_]\w*", "call_method": r"[A-Za-z_]\w*",
                  "get_attr": r"[A-Za-z_0-9]\w*(\.\w+)*", "call_module": r"[A-Za-z_0-9]\w*(\.\w+)*"}


def _rebuilt(description):
    """The graph a pickled description gives (see ``Graph.__reduce__``).

    Raises:
        ValueError: a target the code would name is not a Python name (it could not be code
            this graph generated).
    """
    graph, nodes = Graph(), []
    resolve = lambda a: nodes[a.index] if isinstance(a, _NodeRef) else a  # noqa: E731
    for op, name, target, args, kwargs, type_expr in description:
        if op in _TARGET_SYNTAX and not (isinstance(target, str) and re.fullmatch(_TARGET_SYNTAX[op], target)):
            raise ValueError(f"a pickled fx graph names an invalid {op} target: {target!r}")
        nodes.append(graph.create_node(op, target, map_aggregate(args, resolve), map_aggregate(kwargs, resolve),
                                       name, type_expr))
    return graph


# torch.fx's short names of dtypes in ``print_readable`` (torch/fx/graph.py's ``dtype_abbrs``)
_DTYPE_ABBREVIATIONS = {f"torch.{k}": v for k, v in dict(
    bfloat16="bf16", float64="f64", float32="f32", float16="f16", complex32="c32", complex64="c64",
    complex128="c128", int8="i8", int16="i16", int32="i32", int64="i64", bool="b8", uint8="u8",
    uint16="u16", uint32="u32", uint64="u64").items()}


def _annotation(t, globals_, names):
    """The annotation ``t`` as an expression of the generated code, spelled as torch.fx spells
    it (``torch.Tensor``, ``typing_List[int]``, ``typing_Union[torch.Tensor,NoneType]``); the
    globals it reads are added to ``globals_`` under names from ``names``."""
    if t == ():
        return "()"
    if isinstance(t, types.UnionType):
        return "|".join(_annotation(a, globals_, names) for a in typing.get_args(t))
    origin = getattr(t, "__origin__", None)
    if origin is None:
        return _annotation_global(t, globals_, names)
    if not isinstance(t, types.GenericAlias):
        origin = _TYPING_ORIGINS.get(origin, origin)
    head, args = _annotation_global(origin, globals_, names), typing.get_args(t)
    return f"{head}[{','.join(_annotation(a, globals_, names) for a in args)}]" if args else head


def _annotation_global(t, globals_, names):
    text = type_repr(t)
    ember = sys.modules["ember"]
    if (getattr(t, "__module__", None) or "").split(".")[0] == "ember" and t is not ember.device:
        return text  # torch.Tensor: read through the global ``torch``
    name = next((k for k, v in globals_.items() if v is t), None) or names.create_name(text, t)
    globals_[name] = t
    return name


def _is_wrapped(function):
    """Whether ``function`` was registered with :func:`ember.fx.wrap` in its module."""
    globals_ = getattr(function, "__globals__", None)
    return globals_ is not None and (id(globals_), function.__name__) in wrapped_functions


def _expression(node, root, globals_):
    args = [_code(a, globals_) for a in node.args]
    kwargs = [f"{k} = {_code(v, globals_)}" for k, v in node.kwargs.items()]
    if node.op == "get_attr":
        return _attribute_path(root, node.target)
    if node.op == "call_module":
        return f"{_attribute_path(root, node.target)}({', '.join(args + kwargs)})"
    if node.op == "call_method":
        return f"{args[0]}.{node.target}({', '.join(args[1:] + kwargs)})"
    target = node.target
    if target in _BINARY and len(args) == 2 and not kwargs:
        return f"{args[0]} {_BINARY[target]} {args[1]}"
    if target in _UNARY and len(args) == 1 and not kwargs:
        return f"{_UNARY[target]}{args[0]}"
    if target is operator.getitem and len(args) == 2:
        return f"{args[0]}[{args[1]}]"
    if target is getattr and len(node.args) == 2 and isinstance(node.args[1], str) and node.args[1].isidentifier():
        return f"{args[0]}.{node.args[1]}"
    return f"{_global_name(target, globals_)}({', '.join(args + kwargs)})"


def _attribute_path(root, target):
    path = root
    for part in target.split("."):
        path = f"{path}.{part}" if part.isidentifier() else f'getattr({path}, "{part}")'
    return path


def _global_name(target, globals_):
    name = qualified_name(target)
    head = name.split(".")[0]
    if head in ("operator", "builtins"):
        globals_[head] = sys.modules[head]
    if head in ("torch", "operator", "builtins"):
        return name
    name = re.sub(r"[^0-9a-zA-Z_]", "_", name)
    globals_[name] = target
    return name


def _code(arg, globals_):
    """``arg`` as a Python expression (nodes as their names; other objects by repr or as globals)."""
    return render(arg, lambda leaf: _leaf_code(leaf, globals_))


def _leaf_code(arg, globals_):
    if isinstance(arg, Node):
        return arg.name
    if isinstance(arg, slice):
        return f"slice({_code(arg.start, globals_)}, {_code(arg.stop, globals_)}, {_code(arg.step, globals_)})"
    if arg is None or arg is Ellipsis or isinstance(arg, (bool, int, float, complex, str)):
        return "Ellipsis" if arg is Ellipsis else repr(arg)
    ember = sys.modules["ember"]
    if isinstance(arg, (ember.dtype, ember.device)):
        return repr(arg)
    name = f"_{type(arg).__name__}_{sum(k.startswith(f'_{type(arg).__name__}_') for k in globals_)}"
    globals_[name] = arg
    return name
