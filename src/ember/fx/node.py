"""``Node`` (torch.fx.Node): one operation of an fx :class:`~ember.fx.Graph`, and ``map_arg`` /
``map_aggregate`` over the nested arguments nodes take.

A node's ``op`` is one of ``placeholder`` (an input), ``get_attr`` (a parameter, buffer or
submodule of the root module), ``call_function``, ``call_method``, ``call_module`` and
``output``; its ``args``/``kwargs`` hold other nodes, possibly inside tuples, lists, dicts and
slices. Setting ``args``/``kwargs`` keeps every node's ``users`` in step (torch.fx semantics).
"""
import builtins
import operator
import re
import sys
import types
from typing import Any, Callable, Optional, Union

__all__ = ["Argument", "Node", "Target", "last_uses", "map_arg", "map_aggregate", "render", "type_repr"]

Target = Union[Callable[..., Any], str]  # what a node calls or names
Argument = Optional[Union[tuple, list, dict, slice, range, "Node", str, int, float, bool, complex]]

_SIDE_EFFECTFUL = {operator.setitem}  # call_function targets kept by dead code elimination

OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output", "root")


def map_aggregate(a, fn):
    """``a`` with ``fn`` applied to every leaf inside tuples, lists, dicts and slices."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(x, fn) for x in a)
        return mapped if type(a) is tuple or not hasattr(a, "_fields") else type(a)(*mapped)
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """``a`` with ``fn`` applied to every :class:`Node` inside it (other leaves kept)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def qualified_name(target):
    """``torch.cat``, ``operator.add``, ``builtins.getattr``: how printing names a callable."""
    name = getattr(target, "__name__", repr(target))
    if getattr(operator, name, None) is target:
        return f"operator.{name}"
    if getattr(builtins, name, None) is target:
        return f"builtins.{name}"
    module = getattr(target, "__module__", None) or ""
    # a function public in two namespaces (dropout) is named from the one it is defined under
    spaces = sorted(_public_namespaces(), key=lambda space: -len(space[1].__name__)
                    if module.startswith(space[1].__name__ + ".") else 0)
    for path, namespace in spaces:
        if getattr(namespace, name, None) == target:
            return f"{path}.{name}"
    return f"{module or '_'}.{name}"


def type_repr(t):
    """An annotation as torch.fx prints it: ``int``, ``torch.Tensor``, ``typing.List[int]``
    (ember's classes under their public torch names)."""
    if isinstance(t, type):
        return t.__qualname__ if t.__module__ == "builtins" else qualified_name(t)
    if t is ...:
        return "..."
    if isinstance(t, types.FunctionType):
        return t.__name__
    return re.sub(r"\bember(\.\w+)+", _public_path, repr(t))


def _public_path(match):
    module, _, name = match.group(0).rpartition(".")
    value = getattr(sys.modules.get(module), name, None)
    return match.group(0) if value is None else qualified_name(value)


def _public_namespaces():
    # The public namespace sits above fx: read from the loaded modules, never imported here.
    ember = sys.modules["ember"]
    spaces = [("torch", ember), ("torch.nn.functional", sys.modules.get("ember.nn.functional")),
              ("torch.special", sys.modules.get("ember.special")), ("torch.linalg", sys.modules.get("ember.linalg")),
              ("torch.fft", sys.modules.get("ember.fft"))]
    return [(path, space) for path, space in spaces if space is not None]


class Node:
    """One operation in a :class:`~ember.fx.Graph` (torch.fx.Node).

    Attributes:
        graph: the graph holding it. name: its unique name (the variable in ``graph.python_code``).
        op: one of placeholder, get_attr, call_function, call_method, call_module, output.
        target: the callable (call_function), method name (call_method), qualified name
            (get_attr, call_module) or input name (placeholder).
        args, kwargs: the operands; nodes in them are this node's inputs.
        users: ``{node: None}`` of the nodes that read this one. meta: a free dict for passes.
    """

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in OPS:
            raise ValueError(f"Node op must be one of {OPS[:-1]}, got {op!r}")
        self.graph, self.name, self.op, self.target, self.type = graph, name, op, target, return_type
        self._input_nodes = {}
        self.users = {}
        self._args, self._kwargs = (), {}
        self.__update_args_kwargs(tuple(args), dict(kwargs))
        self.meta = {}
        self._prev = self._next = self
        self._erased = False

    # ---- operands and users ---------------------------------------------------------------
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, value):
        self.__update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self.__update_args_kwargs(self._args, dict(value))

    @property
    def all_input_nodes(self):
        """The distinct nodes among ``args`` and ``kwargs``, in order of appearance."""
        return list(self._input_nodes)

    def __update_args_kwargs(self, args, kwargs):
        for node in self._input_nodes:
            node.users.pop(self, None)
        self._args, self._kwargs, self._input_nodes = args, kwargs, {}
        map_arg((args, kwargs), lambda n: self._input_nodes.setdefault(n))
        for node in self._input_nodes:
            node.users.setdefault(self)

    def update_arg(self, idx, arg):
        """Replaces the positional argument at ``idx`` with ``arg`` (uses updated)."""
        args = list(self._args)
        args[idx] = arg
        self.args = args

    def update_kwarg(self, key, arg):
        """Sets the keyword argument ``key`` to ``arg`` (uses updated)."""
        self.kwargs = {**self._kwargs, key: arg}

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Makes every user read ``replace_with`` instead of this node; returns the users changed."""
        if propagate_meta:
            replace_with.meta.update(self.meta)
        changed = [user for user in list(self.users) if delete_user_cb(user)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    def replace_input_with(self, old_input, new_input):
        """Reads ``new_input`` wherever this node read ``old_input``."""
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self.__update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self, impure_random=True):
        """Whether dead code elimination must keep this node unread: an input or the output,
        ``operator.setitem``, or a call of a module whose ``_is_impure`` is true (torch.fx's
        rule: other in-place calls count as pure)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            return getattr(self.graph.owning_module.get_submodule(self.target), "_is_impure", False)
        return self.op == "call_function" and self.target in _SIDE_EFFECTFUL

    # ---- position in the graph ------------------------------------------------------------
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Moves (or inserts) node ``x`` just before this one."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x):
        """Moves (or inserts) node ``x`` just after this one."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- printing -------------------------------------------------------------------------
    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """The node's line in ``print(graph)``: ``%name : [num_users=k] = op[target=...](args = ..., kwargs = ...)``."""
        typed = "" if self.type is None else f"{type_repr(self.type)} "
        if self.op == "placeholder":
            default = f"(default={self.args[0]!r})" if self.args else ""
            return f"%{self.name} : {typed}[num_users={len(self.users)}] = placeholder[target={self.target}]{default}"
        if self.op == "output":
            return f"return {_format_arg(self.args[0], '')}"
        target = qualified_name(self.target) if self.op == "call_function" else self.target
        head = f"%{self.name} : {typed}[num_users={len(self.users)}] = {self.op}[target={target}]"
        if self.op == "get_attr":
            return head
        kwargs = "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in self.kwargs.items()) + "}"
        return f"{head}(args = {_format_arg(self.args)}, kwargs = {kwargs})"

    def __repr__(self):
        return self.name


def render(arg, leaf):
    """``arg`` as Python-like text: tuples (``(a,)`` for one), lists and dicts element by
    element, every other value as ``leaf`` gives it (how printing and the code spell values)."""
    if isinstance(arg, tuple):
        inner = ", ".join(render(a, leaf) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(render(a, leaf) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k!r}: {render(v, leaf)}" for k, v in arg.items()) + "}"
    return leaf(arg)


def _format_arg(arg, sigil="%"):
    return render(arg, lambda a: f"{sigil}{a.name}" if isinstance(a, Node) else str(a))


def last_uses(nodes):
    """``{node: [the inputs it is the last to read]}`` over ``nodes`` in order: when each
    value can be freed."""
    freed_by, seen = {}, set()
    for node in reversed(nodes):
        for arg in node.all_input_nodes:
            if arg not in seen:
                seen.add(arg)
                freed_by.setdefault(node, []).append(arg)
    return freed_by
