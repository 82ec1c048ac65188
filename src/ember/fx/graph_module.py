"""``GraphModule`` (torch.fx.GraphModule): an fx :class:`~ember.fx.Graph` run as a module,
holding the submodules and tensors its ``get_attr``/``call_module`` nodes name; and
``CapturedGraphModule``, the same for a graph of the compiler's IR (``ember.export``,
``make_fx``), holding the tensors the graph reads besides its inputs."""
import itertools
import linecache
from copy import deepcopy

from ..compiler.capture import flatten, unflatten
from ..compiler.replay import dispatch
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .._tensor import Tensor

__all__ = ["GraphModule", "CapturedGraphModule", "SizedGraphModule"]

_source_keys = itertools.count()


class GraphModule(Module):
    """A module whose ``forward`` is the Python code of an fx graph (torch.fx.GraphModule).

    Each GraphModule has a class of its own (named ``class_name``), so :meth:`recompile`,
    run after the graph changed, replaces ``forward`` for this module only.

    Args:
        root: a module, from which each ``get_attr``/``call_module`` target is copied under
            its qualified name; or ``{qualified name: module or tensor}``.
        graph: the :class:`~ember.fx.Graph` (``graph.owning_module`` becomes this module).
        class_name: the name ``repr`` and ``print_readable`` show.

    Raises:
        RuntimeError: ``root`` is a dict missing a target the graph names, or of another type.
    """

    def __new__(cls, *args, **kwargs):
        base = next(t for t in cls.__mro__ if not t.__dict__.get("_one_instance"))
        return super().__new__(type(base.__name__, (base,), {"_one_instance": True, "__module__": base.__module__}))

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        type(self).__name__ = type(self).__qualname__ = class_name
        targets = [n.target for n in graph.nodes if n.op in ("get_attr", "call_module")]
        if isinstance(root, Module):
            self.training = root.training
            for target in targets:
                _install(self, target, _attribute(root, target), owner=root)
        elif isinstance(root, dict):
            for target in targets:
                if target not in root:
                    raise RuntimeError(f"Node referenced target {target} but that target was not provided in ``root``!")
                _install(self, target, root[target])
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self.graph = graph

    def __deepcopy__(self, memo):
        """A copy with copies of the graph and tensors, named ``GraphModule`` and keeping of
        the attributes the graph does not name only ``meta``, as torch.fx's copy."""
        copy = type(self).__new__(type(self))
        memo[id(self)] = copy
        state = deepcopy(self.__getstate__(), memo)
        return _restore(copy, state, [name for name in ("meta",) if name in state])

    def __reduce__(self):
        """Pickled as its state and its graph's description (no source text: loading rebuilds
        the graph node by node and generates ``forward`` from it, where torch.fx re-traces its
        stored code); it loads as a ``GraphModule`` of the class it was made from, keeping
        every attribute (as torch.fx's)."""
        base = next(t for t in type(self).__mro__ if not t.__dict__.get("_one_instance"))
        state = {k: v for k, v in self.__getstate__().items() if k != "_code"}
        return _rebuilt, (base, state)

    @property
    def graph(self):
        """The graph; setting it recompiles ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, graph):
        self._graph = graph
        graph.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of ``forward``."""
        return self._code

    def recompile(self):
        """Regenerates ``forward`` from the graph (call it after changing the graph); returns
        the :class:`~ember.fx.graph.PythonCode`."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        key = f"<eval_with_key>.{next(_source_keys)}"
        linecache.cache[key] = (len(self._code), None, self._code.splitlines(True), key)  # tracebacks show it
        namespace = dict(python_code.globals)
        exec(compile(self._code, key, "exec"), namespace)
        type(self).forward = namespace["forward"]
        return python_code

    def __str__(self):
        return "\n".join([super().__repr__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False):
        """The module as a class around its ``code``, each value whose ``meta["example_value"]``
        is a tensor annotated with its dtype and shape (``sin: "f32[4]" = ...``, as torch's);
        printed unless ``print_output=False``. ``include_stride``, ``include_device``: accepted;
        the captured graphs record neither, so neither is shown."""
        code = self._graph.python_code(root_module="self", verbose=True).src
        body = "".join(f"    {line}\n" for line in code.strip("\n ").splitlines())
        text = f"class {type(self).__name__}(torch.nn.Module):\n{body}"
        if print_output:
            print(text)
        return text


def _rebuilt(cls, state):
    return _restore(cls.__new__(cls), state, state)


def _restore(module, state, kept):
    """``module`` made a GraphModule from the state of another (the tensors and submodules its
    graph names, the graph, the training flag), with the attributes in ``kept`` too."""
    holder = Module()
    holder.__setstate__(state)
    GraphModule.__init__(module, holder, holder._graph)
    for name in kept:
        module.__dict__.setdefault(name, holder.__dict__[name])
    return module


def _attribute(root, target):
    for part in target.split("."):
        if not hasattr(root, part):
            raise RuntimeError(f"Node referenced nonexistent target {target}")
        root = getattr(root, part)
    return root


class CapturedGraphModule(GraphModule):
    """A captured :class:`ember.compiler.graph.Graph` as a callable module.

    ``forward(*args, **kwargs)`` feeds the graph's placeholders from the flattened arguments
    and the tensors the module holds, replays the graph op by op through the dispatcher (so
    results carry autograd history and in-place writes land in the inputs), and rebuilds the
    structure the traced function returned. Each placeholder keeps the shape it was traced
    with (``graph.placeholders[i].meta``); a graph with size symbols (``graph.symbols``, from
    ``ember.export.export(dynamic_shapes=...)``) runs through :meth:`run_at`.

    Args:
        root: ``{qualified name: tensor}``: parameters (kept as ``Parameter``), buffers and
            constants the module holds, under submodules for dotted names (``fc1.weight``).
        graph: the graph.
        inputs: per placeholder, an int (the index of a tensor in ``flatten((args, kwargs))``),
            a qualified name of ``root``, or a :class:`~ember.compiler.dynamic.SizedConstant`
            (a tensor made from the sizes at each call).
        out_spec: the return value's structure, its tensors as slots
            (:func:`ember.compiler.capture.skeleton`).
        class_name: the name ``print_readable`` shows.
    """

    def __new__(cls, *args, **kwargs):  # its forward replays the graph: no class of its own needed
        return Module.__new__(cls)

    __reduce__ = Module.__reduce__  # pickled as a module: its graph is the compiler's, not an fx graph

    def __deepcopy__(self, memo):
        """A copy holding copies of the module's tensors; the graph, its inputs' map and the
        returned structure are shared (a captured graph never changes, and the structure's
        slots are matched by identity when results are rebuilt)."""
        for name in ("_graph", "_inputs", "_out_spec", "_run"):
            value = self.__dict__[name]
            memo[id(value)] = value
        copied = Module.__new__(type(self))
        memo[id(self)] = copied
        copied.__setstate__(deepcopy(self.__getstate__(), memo))
        return copied

    def __init__(self, root, graph, inputs, out_spec, class_name="GraphModule"):
        Module.__init__(self)
        for name, tensor in root.items():
            _install(self, name, tensor)
        self._graph, self._inputs, self._out_spec, self._class_name = graph, list(inputs), out_spec, class_name
        self._run = dispatch(graph)

    @classmethod
    def from_capture(cls, cap, world, class_name="GraphModule"):
        """The GraphModule of a :class:`~ember.compiler.capture.Capture` made with ``world``:
        parameters and buffers under their qualified names, other tensors as
        ``_tensor_constant<k>``.

        Raises:
            RuntimeError: the function read a ``.grad`` or optimizer state, or ran backward (a
                GraphModule holds the forward only).
        """
        if cap.ran_backward or cap.grad_sets:
            raise RuntimeError("a GraphModule holds a forward computation: the traced function ran backward")
        names = dict(zip(map(id, world.params), world.param_names()))
        root, inputs = {}, []
        for source in cap.sources:
            kind = source[0]
            if kind in ("input", "sized_const"):
                inputs.append(source[1])
                continue
            if kind == "param":
                name = names[id(source[1])]
            elif kind in ("tensor", "const"):
                name = f"_tensor_constant{sum(n.startswith('_tensor_constant') for n in root)}"
            else:
                raise RuntimeError(f"a GraphModule cannot hold what the traced function read ({kind} of an "
                                   f"optimizer or a .grad)")
            root[name] = source[1] if kind != "const" else Tensor._make(source[1])
            inputs.append(name)
        return cls(root, cap.graph, inputs, cap.output, class_name)

    def order_inputs(self, order):
        """Puts the graph's placeholders, with what each reads, in ``order`` (a permutation of
        their positions): export lists parameters, buffers and constants before user inputs."""
        graph = self._graph
        placeholders = [graph.placeholders[k] for k in order]
        graph.nodes[:len(placeholders)] = placeholders
        graph.placeholders[:] = placeholders
        self._inputs = [self._inputs[k] for k in order]
        self._run = dispatch(graph)

    def forward(self, *args, **kwargs):
        return self.run_at(flatten((args, kwargs)), None)

    def run_at(self, flat, sizes):
        """The graph run on the flattened input tensors ``flat``, its size symbols at
        ``sizes`` (``{name: int}``; None for a static graph); the traced return structure."""
        needed = max((i + 1 for i in self._inputs if isinstance(i, int)), default=0)
        if len(flat) < needed:
            raise TypeError(f"{self._class_name}.forward() expects at least {needed} input tensors, got {len(flat)}")
        tensors = [flat[i] if isinstance(i, int) else self._held(i) if isinstance(i, str)
                   else Tensor._make(i.build(sizes)) for i in self._inputs]
        return unflatten(self._out_spec, iter(self._run(tensors) if sizes is None else self._run(tensors, sizes)))

    def __str__(self):
        return Module.__repr__(self)

    def _held(self, name):
        path, _, leaf = name.rpartition(".")
        return getattr(self.get_submodule(path) if path else self, leaf)

    @property
    def code(self):
        """The graph as Python source (``forward(self, ...)``)."""
        return self.graph.code.replace("def forward(", "def forward(self, " if self.graph.placeholders
                                       else "def forward(self", 1)

    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False):
        """The module as a class around its ``code``; printed unless ``print_output=False``."""
        body = "".join(f"    {line}\n" for line in self.code.splitlines())
        text = f"class {self._class_name}(torch.nn.Module):\n{body}"
        if print_output:
            print(text)
        return text


class SizedGraphModule(CapturedGraphModule):
    """A graph with size symbols as a callable compiler backend gets it (see
    :mod:`ember.compiler.custom_backend`): ``forward(*sizes, *tensors)``, one int per symbol of
    ``graph.symbols`` before the placeholders' tensors (torch's ``Sym(s0)`` placeholders come
    first too)."""

    def forward(self, *args):
        names = self.graph.symbols
        return self.run_at(list(args[len(names):]), dict(zip(names, args)))


def _install(module, name, value, owner=None):
    """Sets ``value`` at the dotted ``name`` under ``module``, making empty parent modules as
    needed; a tensor is a parameter if it is one, else a buffer (persistent unless ``owner``,
    the module it came from, holds it as a plain attribute)."""
    *path, leaf = name.split(".")
    for part in path:
        child = module._modules.get(part)
        if child is None:
            child = Module()
            module.add_module(part, child)
        module = child
        owner = getattr(owner, part, None)
    if isinstance(value, Parameter):
        module.register_parameter(leaf, value)
    elif isinstance(value, Tensor) and (owner is None or leaf in owner._buffers):
        module.register_buffer(leaf, value)
    else:
        setattr(module, leaf, value)
