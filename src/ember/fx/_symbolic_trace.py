"""``symbolic_trace``, ``Tracer`` and ``wrap`` (torch.fx): run a module's ``forward`` (or a
function) on Proxies and record what it does as a :class:`~ember.fx.Graph`.

While a ``Tracer.trace`` runs, calling a submodule goes through ``Tracer.call_module`` (a leaf
module, by default one of ``ember.nn``'s own, becomes one ``call_module`` node; others are
traced through), reading a parameter or buffer gives a ``get_attr`` Proxy, and the functions
registered with :func:`wrap` become ``call_function`` nodes instead of being traced through.
Everything is restored when tracing ends. Source: https://pytorch.org/docs/stable/fx.html.
"""
import contextlib
import inspect
import sys
import warnings

from .._device import device
from .._dtype import dtype
from .._layout import layout
from .._memory_format import memory_format
from .._tensor import Tensor
from ..nn.modules.container import Sequential
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph, wrapped_functions
from .graph_module import GraphModule
from .proxy import TracerBase, _Intercepting, interception

__all__ = ["Tracer", "symbolic_trace", "wrap"]

# The values whose specialisation a traced graph checks with ``torch._assert(placeholder == value)``.
_CHECKED_TYPES = (str, int, float, bool, complex, dtype, device, memory_format, layout)


def wrap(fn_or_name):
    """Registers a module-level function (or its name, called from that module) so that
    symbolic tracing records a call to it as one ``call_function`` node instead of tracing
    through it (torch.fx.wrap). Returns its argument (usable as a decorator).

    Raises:
        NotImplementedError: called from inside a function rather than at module level.
    """
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    wrapped_functions[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name


class Tracer(TracerBase):
    """Records a module's ``forward`` (or a function) as a :class:`~ember.fx.Graph` (torch.fx.Tracer).

    Override ``is_leaf_module``, ``call_module``, ``create_node``, ``create_proxy`` or
    ``create_arg`` to change what is recorded. After :meth:`trace`, ``self.root`` is the
    module whose attributes ``get_attr``/``call_module`` nodes name.
    """

    def __init__(self, autowrap_modules=(), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self.root = None

    def trace(self, root, concrete_args=None):
        """The graph of ``root(*placeholders)``; ``concrete_args`` (``{argument name: value}``)
        fixes some arguments to values instead of placeholders.

        Raises:
            TraceError: the program needs a traced value's contents (``if``, ``len``, iteration).
        """
        if isinstance(root, Module):
            self.root, fn, skip = root, type(root).forward, 1
        else:
            self.root, fn, skip = Module(), root, 0
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        for path, module in self.root.named_modules():
            for name, value in vars(module).items():
                if isinstance(value, Tensor):
                    self.tensor_attrs.setdefault(id(value), f"{path}.{name}" if path else name)
        with interception, self._patched():
            args = self._placeholders(fn, skip, concrete_args or {})
            result = fn(self.root, *args) if skip else fn(*args)
            returns = getattr(fn, "__annotations__", {}).get("return")
            self.create_node("output", "output", (self.create_arg(result),), {}, type_expr=returns)
        return self.graph

    def _placeholders(self, fn, skip, concrete_args):
        args = []
        for parameter in list(inspect.signature(fn).parameters.values())[skip:]:
            name = parameter.name
            if name in concrete_args:
                args.append(self._concrete_placeholder(parameter, concrete_args[name]))
            elif parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise NotImplementedError(f"symbolic tracing of *args/**kwargs ({parameter}) is not supported: "
                                          "pass concrete_args or trace a function with named arguments")
            else:
                default = () if parameter.default is parameter.empty else (parameter.default,)
                annotation = None if parameter.annotation is parameter.empty else parameter.annotation
                args.append(self.create_proxy("placeholder", name, default, {}, type_expr=annotation))
        return args

    def _concrete_placeholder(self, parameter, value):
        """``value`` itself, fixed by ``concrete_args``; the graph still takes the argument (a
        placeholder ``<name>_1``, as torch.fx) and checks it: a number, string, bool, dtype or
        device by ``torch._assert(placeholder == value)``, None by ``_assert_is_none``; for
        anything else (a tensor; a list, which torch.fx flattens and checks leaf by leaf) it
        warns that it cannot."""
        name = parameter.name
        default = () if parameter.default is parameter.empty else (parameter.default,)
        placeholder = self.create_proxy("placeholder", f"{name}_1", default, {})
        if type(value) in _CHECKED_TYPES:
            sys.modules["ember"]._assert(placeholder == value,
                                         f"{name} has been specialized to have value {value} but got another value")
        elif value is None:
            self.create_proxy("call_function", _assert_is_none, (
                placeholder, f"{name} has been specialized to have value None but got another value"), {})
        else:
            warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to specialized function. "
                          "It is up to the user to make sure that your inputs match the inputs you specialized the "
                          "function with.")
        return value

    @contextlib.contextmanager
    def _patched(self):
        """Module calls, parameter reads and wrap()ed functions routed to this tracer."""
        tracer, call, module_getattr, cache = self, Module.__call__, Module.__getattr__, {}

        def traced_call(module, *args, **kwargs):
            return tracer.call_module(module, lambda *a, **k: call(module, *a, **k), args, kwargs)

        def traced_getattr(module, name):
            return tracer.getattr(name, module_getattr(module, name), cache)

        saved = [(globals_, name, globals_[name]) for (_, name), globals_ in wrapped_functions.items()
                 if name in globals_]
        Module.__call__, Module.__getattr__ = traced_call, traced_getattr
        for globals_, name, fn in saved:
            globals_[name] = _Intercepting(fn)
        try:
            yield
        finally:
            Module.__call__, Module.__getattr__ = call, module_getattr
            for globals_, name, fn in saved:
                globals_[name] = fn

    def is_leaf_module(self, m, module_qualified_name):
        """Whether ``m`` is recorded as one ``call_module`` node: ember.nn's modules but Sequential."""
        return type(m).__module__.startswith(("ember.nn", "torch.nn")) and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        """``mod``'s qualified name in ``self.root``.

        Raises:
            NameError: ``mod`` is not a submodule of the root.
        """
        for name, module in self.root.named_modules():
            if module is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """A ``call_module`` node for a leaf module; otherwise ``forward`` traced through."""
        qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualified_name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """What reading ``module.attr`` gives while tracing: a ``get_attr`` Proxy for the root's
        parameters and buffers, else the value itself."""
        if not isinstance(attr_val, Tensor):
            return attr_val
        if id(attr_val) not in parameter_proxy_cache:
            named = (*self.root.named_parameters(remove_duplicate=False),
                     *self.root.named_buffers(remove_duplicate=False))
            path = next((n for n, t in named if t is attr_val), None)
            if path is None:
                return attr_val
            parameter_proxy_cache[id(attr_val)] = self.create_proxy("get_attr", path, (), {})
        return parameter_proxy_cache[id(attr_val)]

    def create_arg(self, a):
        """Tensors become ``get_attr`` nodes: the root's parameters, buffers and tensor attributes
        by their names, other tensors as new ``_tensor_constant<k>`` attributes of the root."""
        if isinstance(a, Tensor) and self.root is not None:
            if isinstance(a, Parameter):
                named = self.root.named_parameters(remove_duplicate=False)
                path = next((n for n, p in named if p is a), None)
                if path is None:
                    raise NameError("parameter is not a member of this module")
                return self.create_node("get_attr", path, (), {})
            path = next((n for n, b in self.root.named_buffers(remove_duplicate=False) if b is a), None)
            path = path or self.tensor_attrs.get(id(a))
            if path is None:
                k = 0
                while hasattr(self.root, f"_tensor_constant{k}"):
                    k += 1
                path = f"_tensor_constant{k}"
                setattr(self.root, path, a)
                self.tensor_attrs[id(a)] = path
            return self.create_node("get_attr", path, (), {})
        if isinstance(a, Module) and self.root is not None:
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        return super().create_arg(a)


def _assert_is_none(value, msg):
    """Raises AssertionError(``msg``) unless ``value`` is None: the check a graph traced with a
    ``concrete_args`` value of None makes of that argument (torch.fx's)."""
    if value is not None:
        raise AssertionError(msg)


def symbolic_trace(root, concrete_args=None):
    """``root`` (a module or a function) traced by :class:`Tracer` into a :class:`GraphModule`
    named after its class or function (torch.fx.symbolic_trace).

    Raises:
        TraceError: ``root`` branches or loops on a traced value.
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

