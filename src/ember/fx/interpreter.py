"""``Interpreter`` and ``Transformer`` (torch.fx.interpreter): run an fx graph node by node in
Python, each op a method a subclass can override, which is how graph passes are written
(source: https://pytorch.org/docs/stable/fx.html#the-interpreter-pattern).

``Interpreter.run`` evaluates the graph on values; ``Transformer.transform`` runs it on
Proxies, so the overridden methods' results are recorded into a new graph, returned as a
:class:`~ember.fx.GraphModule`.
"""
import inspect

from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import last_uses, map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs ``module``'s graph (or ``graph``) one node at a time: ``run_node`` calls the method
    named by the node's op (``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
    ``call_module``, ``output``) with its target and its arguments' values.

    Args:
        module: the module whose attributes ``get_attr``/``call_module`` nodes name (usually a
            :class:`~ember.fx.GraphModule`).
        garbage_collect_values: drop each value after its last use (keeps memory as low as
            the generated code does).
        graph: the graph to run (default ``module.graph``).

    Attributes:
        env: ``{node: value}`` of the values computed so far in the current run.
    """

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        # node -> the values whose last reader it is
        self.user_to_last_uses = last_uses(self.graph.nodes) if garbage_collect_values else {}

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """The graph's result on positional ``args``; ``initial_env`` (``{node: value}``)
        pre-sets values (those nodes are not run: partial evaluation).

        Raises:
            RuntimeError: a placeholder gets no argument and has no default, or a node names
                a missing attribute (a node's error gets ``While executing <node>`` added).
        """
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else msg
                    e.args = (f"{msg}\nOriginal traceback:\n{node.meta.get('stack_trace')}",) + e.args[1:]
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for value in self.user_to_last_uses.get(node, ()):
                    del self.env[value]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """:meth:`run` on the values in ``args_list``, one per placeholder, which is emptied (the
        caller's references to the inputs go, so they can be freed as the graph runs).

        Raises:
            RuntimeError: ``args_list`` has not one value per placeholder.
        """
        placeholders = [node for node in self.graph.nodes if node.op == "placeholder"]
        if len(args_list) != len(placeholders):
            detail = "extra arguments" if len(args_list) > len(placeholders) else "missing arguments"
            raise RuntimeError(f"Interpreter.boxed_run expected {len(placeholders)} arguments for placeholders but "
                               f"received {len(args_list)} ({detail})")
        env = dict(zip(placeholders, args_list))
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n):
        """The value of node ``n``: its op's method on its target and arguments' values."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ---- one method per op ---------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        """The next positional input (all the rest for a ``*args`` target), else the default."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed in!")

    def get_attr(self, target, args, kwargs):
        """Runs a ``get_attr`` node: the module's attribute named ``target``."""
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        """Runs a ``call_function`` node: ``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        """Runs a ``call_method`` node: ``args[0].target(*args[1:], **kwargs)``."""
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        """Runs a ``call_module`` node: the submodule named ``target`` called on the arguments."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        """Runs the ``output`` node: its value is the graph's result."""
        return args[0]

    # ---- helpers -------------------------------------------------------------------------
    def fetch_attr(self, target):
        """The attribute at the dotted path ``target`` of the module.

        Raises:
            RuntimeError: a part of the path does not exist.
        """
        atoms, value = target.split("."), self.module
        for i, atom in enumerate(atoms):
            if not hasattr(value, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            value = getattr(value, atom)
        return value

    def fetch_args_kwargs_from_env(self, n):
        """``n``'s args and kwargs with every node replaced by its value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        """``args`` with every node replaced by its value in :attr:`env`.

        Raises:
            RuntimeError: a node has no value (it comes later in the graph, or is not in it).
        """
        def load(arg):
            if arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {arg}! Run Graph.lint() to diagnose "
                                   "such issues")
            return self.env[arg]
        return map_arg(args, load)


class _TransformerTracer(Tracer):
    """Records into an existing graph, every module a leaf."""

    def __init__(self, graph, root):
        super().__init__()
        self.graph, self.root, self.tensor_attrs = graph, root, {}

    def is_leaf_module(self, m, module_qualified_name):
        return True


class Transformer(Interpreter):
    """An :class:`Interpreter` that runs the graph on Proxies: what the op methods return is
    recorded into ``new_graph``; :meth:`transform` returns it as a GraphModule over the same
    module. Override ``call_function`` etc. to rewrite nodes (return ``super()``'s call on
    other arguments or targets)."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target, args, kwargs):
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        """A Proxy recording the ``get_attr`` node into the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        """A Proxy recording the submodule call (as a leaf or traced through, as the tracer decides)."""
        submodule = self.fetch_attr(target)
        return self.tracer.call_module(submodule, submodule.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        """A Proxy recording ``target(*args, **kwargs)`` into the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        """The transformed :class:`~ember.fx.GraphModule` (the old output node's ``meta`` kept)."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            output = self.new_graph.output(map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
            output.meta.update(next(iter(reversed(self.graph.nodes))).meta)
        return GraphModule(self.module, self.new_graph)
