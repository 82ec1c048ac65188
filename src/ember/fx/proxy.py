"""``Proxy`` (torch.fx.Proxy): a stand-in value that records what is done to it as nodes of a
graph, and the tracers that own the graph (``TracerBase``, ``GraphAppendingTracer``).

Operators and Tensor methods on a Proxy are its own methods. ember's public functions
(``ember.cat``, ``ember.nn.functional.relu``, ``ember.special...``, ``ember.linalg...``,
``ember.fft...``) are plain Python functions, with no ``__torch_function__`` seam; so while a
Proxy is alive or a trace runs, each is rebound in its namespace to an intercepting wrapper
that records a ``call_function`` node when a Proxy is among its arguments and otherwise calls
the function; when the last Proxy is gone the plain functions are back. Code that makes no
Proxy never meets a wrapper and pays nothing. A wrapper compares and hashes equal to its
function (``node.target == torch.add`` holds either way). Names bound elsewhere
(``from ember import cat``, a default argument) stay plain, so ``cat(proxies)`` there fails:
call ``ember.cat`` through the namespace, as torch.fx programs do.
"""
import bisect
import dis
import functools
import inspect
import operator
import sys
import types
import weakref

from .. import fft, linalg, special  # noqa: F401 (loaded, so that their functions are intercepted)
from .._tensor import Tensor
from .._tensor_subclass import Overridable
from ..nn import functional  # noqa: F401
from .graph import Graph
from .node import Node, _public_namespaces

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase", "GraphAppendingTracer"]


class TraceError(ValueError):
    """A traced program needs a value a Proxy cannot give (control flow, ``len``, iteration)."""


class TracerBase:
    """Turns calls on Proxies into nodes of ``self.graph``."""

    graph: Graph

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Hook: the node for one recorded operation (override to tag or redirect nodes)."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        """A :class:`Proxy` standing for ``node`` during tracing."""
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Records ``target(*args, **kwargs)`` (Proxies in them become their nodes); the result's Proxy."""
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs), name, type_expr)
        return proxy_factory_fn(node) if proxy_factory_fn is not None else self.proxy(node)

    def create_arg(self, a):
        """``a`` as a node argument: Proxies as their nodes, containers element by element.

        Raises:
            NotImplementedError: ``a`` is of a type a graph cannot hold.
        """
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, (tuple, list)):
            args = [self.create_arg(x) for x in a]
            return args if isinstance(a, list) else type(a)(*args) if hasattr(a, "_fields") else tuple(args)
        if isinstance(a, dict):
            return {k: self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        ember = sys.modules["ember"]
        if a is None or a is Ellipsis or isinstance(a, (Node, str, int, float, bool, complex, ember.dtype,
                                                        ember.device, ember.layout)):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def iter(self, obj):
        """Hook: an iterator over a Proxy used in a loop or unpacked with ``*`` (by default a
        :class:`TraceError`: its length is not known)."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the "
                         "Proxy docstring for help troubleshooting Proxy iteration errors")

    def to_bool(self, obj):
        """Raises TraceError: a traced value cannot decide control flow (``if proxy:``)."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def keys(self, obj):
        """Records ``obj.keys()`` (for ``**proxy`` unpacking) as a ``call_method`` node."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """The tracer of Proxies made by hand over an existing graph's nodes (no root module)."""

    def __init__(self, graph):
        self.graph, self.root = graph, None


class Proxy:
    """A value being traced: operations on it (operators, Tensor methods, ember's public
    functions) add nodes to ``tracer.graph`` and return new Proxies.

    Args:
        node: the :class:`~ember.fx.Node` it stands for.
        tracer: where new nodes go; by default a :class:`GraphAppendingTracer` of ``node.graph``.
    """

    def __init__(self, node, tracer=None):
        interception.__enter__()
        weakref.finalize(self, interception.__exit__)
        self.tracer = tracer if tracer is not None else GraphAppendingTracer(node.graph)
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        return Attribute(self, k)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # ``a, b = proxy`` states the length in the caller's bytecode (UNPACK_SEQUENCE n): as in
        # torch.fx, that unpacks to n getitem nodes; any other iteration goes to the tracer
        caller = inspect.currentframe().f_back
        instructions = list(dis.get_instructions(caller.f_code))
        at = bisect.bisect_left(instructions, caller.f_lasti, key=lambda i: i.offset)
        if at < len(instructions) and instructions[at].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(instructions[at].argval))
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self):
        """Records ``self.keys()`` through the tracer (for ``**proxy`` unpacking)."""
        return self.tracer.keys(self)

    def __getitem__(self, key):
        return self.tracer.create_proxy("call_function", operator.getitem, (self, key), {})


def _binary(op):
    def method(self, other):
        return self.tracer.create_proxy("call_function", op, (self, other), {})

    def reflected(self, other):
        return self.tracer.create_proxy("call_function", op, (other, self), {})
    return method, reflected


def _unary(op):
    return lambda self: self.tracer.create_proxy("call_function", op, (self,), {})


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
              "rshift"):
    _op = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    setattr(Proxy, f"__{_name}__", _binary(_op)[0])
    setattr(Proxy, f"__r{_name}__", _binary(_op)[1])
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name))[0])
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
Proxy.__hash__ = object.__hash__  # __eq__ records a node, as in torch.fx; Proxies stay usable as dict keys


class Attribute(Proxy):
    """``proxy.name``: a ``getattr`` node when read as a value, a ``call_method`` node when called."""

    def __init__(self, root, attr):
        self.root, self.attr, self.tracer, self._node = root, attr, root.tracer, None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


# ---- ember's public functions, rebound on the first Proxy -----------------------------------
# torch.nn.functional's functions that are torch built-ins: recorded with the arguments as called
_BUILT_IN_FUNCTIONAL = {
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_", "channel_shuffle",
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_similarity", "elu_", "gelu", "hardshrink", "hardtanh_", "leaky_relu_", "linear", "logsigmoid",
    "native_channel_shuffle", "one_hot", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu",
    "relu_", "rrelu_", "scaled_dot_product_attention", "selu_", "softplus", "softshrink", "threshold_"}


class _Intercepting:
    """A public function that records a node when a Proxy is among its arguments.

    torch.nn.functional's Python functions hand torch.fx their required arguments by position
    and every optional one by keyword, defaults included (``relu(x, inplace = False)``);
    ``keywords`` makes the node's arguments the same."""

    def __init__(self, function, keywords=False):
        functools.update_wrapper(self, function)
        self._signature = inspect.signature(function) if keywords else None

    def __call__(self, *args, **kwargs):
        proxy = _find_proxy(args)
        if proxy is None:
            proxy = _find_proxy(kwargs.values())
        if proxy is None:
            return self.__wrapped__(*args, **kwargs)
        if self._signature is not None:
            bound = self._signature.bind(*args, **kwargs)
            bound.apply_defaults()
            required = [p.name for p in self._signature.parameters.values() if p.default is p.empty]
            args = tuple(bound.arguments[name] for name in required)
            kwargs = {k: v for k, v in bound.arguments.items() if k not in required}
        return proxy.tracer.create_proxy("call_function", self.__wrapped__, args, kwargs)

    def __eq__(self, other):
        return other is self or self.__wrapped__ == other or (isinstance(other, _Intercepting) and
                                                              other.__wrapped__ is self.__wrapped__)

    def __hash__(self):
        return hash(self.__wrapped__)

    def __repr__(self):
        return repr(self.__wrapped__)

    def __reduce__(self):  # pickled as the function it wraps
        return _same, (self.__wrapped__,)


def _same(function):
    return function


def _find_proxy(values):
    for v in values:
        if isinstance(v, Proxy):
            return v
        if isinstance(v, (list, tuple)):
            for w in v:
                if isinstance(w, Proxy):
                    return w
    return None


# A Tensor's operator given a Proxy on its right records the method torch.fx records for it
# (``buffer * x`` is ``buffer.mul(x)``), instead of reading the Proxy as a value.
_TENSOR_OPERATORS = {
    "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "__floordiv__": "__floordiv__",
    "__mod__": "remainder", "__pow__": "pow", "__matmul__": "matmul", "__eq__": "eq", "__ne__": "ne",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__and__": "__and__", "__or__": "__or__",
    "__xor__": "__xor__", "__lshift__": "__lshift__", "__rshift__": "__rshift__",
}


def _deferring(operator, method):
    def apply(self, other):
        if isinstance(other, Proxy):
            return other.tracer.create_proxy("call_method", method, (self, other), {})
        return operator(self, other)
    return apply


class _Interception:
    """Counts what needs ember's public functions intercepted (live Proxies, running traces):
    the first rebinds them to their wrappers, the last one gone puts the functions back."""

    def __init__(self):
        self.users, self.wrappers, self.bound = 0, {}, []

    def __enter__(self):
        if self.users == 0:
            for path, namespace in _public_namespaces():
                for name, value in list(vars(namespace).items()):
                    if (not name.startswith("_") or name == "_assert") and isinstance(value, (types.FunctionType,
                                                                                           Overridable)):
                        keywords = path == "torch.nn.functional" and name not in _BUILT_IN_FUNCTIONAL
                        # one wrapper per function and convention: names of one function stay one object
                        wrapper = self.wrappers.setdefault((value, keywords), _Intercepting(value, keywords))
                        setattr(namespace, name, wrapper)
                        self.bound.append((namespace, name, value))
            for name, method in _TENSOR_OPERATORS.items():
                original = Tensor.__dict__[name]
                setattr(Tensor, name, _deferring(original, method))
                self.bound.append((Tensor, name, original))
        self.users += 1

    def __exit__(self, *exc):
        self.users -= 1
        if self.users == 0:
            for namespace, name, value in self.bound:
                setattr(namespace, name, value)
            self.bound.clear()


interception = _Interception()
