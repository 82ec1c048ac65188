"""``ember.export.export`` and ``ExportedProgram`` (torch.export): a module's forward captured
whole into a graph that runs without the Python model code."""
import inspect
import math

from .._tensor import Tensor
from ..compiler.capture import _meta, capture, flatten, input_names
from ..compiler.dynamic import ARG, SizedConstant, capture_dynamic
from ..compiler.exc import UserError
from ..compiler.guards import World
from ..compiler.symbolic import Expr, evaluate, free_symbols, symbol
from ..fx.graph_module import CapturedGraphModule, _install
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .dynamic_shapes import ValueRanges, shapes_spec
from .graph_signature import InputKind, InputSpec, OutputKind, OutputSpec, TensorArgument

__all__ = ["export", "ExportedProgram", "ExportGraphSignature"]


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=()):
    """Capture ``mod(*args, **kwargs)`` into an :class:`ExportedProgram`
    (https://pytorch.org/docs/stable/export.html).

    ``mod`` runs once on the example inputs while every op it dispatches is recorded, with
    ``fullgraph=True`` semantics: data-dependent Python control flow is an error (write it with
    ``ember.cond``/``switch``/``while_loop``, which become single nodes). Parameters and buffers
    are lifted into the program's ``state_dict``. Input shapes are static unless
    ``dynamic_shapes`` (or a ``@dynamic_spec`` on ``forward``) declares dimensions dynamic:
    then the graph's sizes are expressions of the declared symbols, ``range_constraints``
    gives each symbol's range, and ``ep.module()`` checks every call's sizes against them.
    ember captures by running, so a dynamic graph is the function recorded at a few sizes and
    fitted (:mod:`ember.compiler.dynamic`): sizes inside the declared range that it was not
    recorded at are trusted to follow the fit. ``strict`` is accepted (ember has one tracer).

    Args:
        mod: an ``nn.Module``.
        args: a tuple of example positional inputs; ``kwargs``: a dict of keyword ones.
        dynamic_shapes: torch's forms: a dict by ``forward``'s argument names, or a tuple/list
            by position, of per-tensor ``{dim: Dim}`` dicts or per-dimension sequences
            (``Dim("batch", max=64)``, ``2 * batch``, ``Dim.AUTO``, ``Dim.DYNAMIC``,
            ``Dim.STATIC``/None), nested for list/tuple/dict arguments; or a
            ``ShapesSpec``/``ParamsSpec``/dict of ``TensorSpec`` of
            ``ember.fx.experimental.dynamic_spec``.

    Raises:
        ValueError: ``mod`` is not an ``nn.Module``; both ``@dynamic_spec`` and
            ``dynamic_shapes``; a spec naming a parameter ``forward`` lacks.
        ember._dynamo.exc.UserError: ``args`` is not a tuple, ``kwargs`` not a dict, a
            ``dynamic_shapes`` that does not match the inputs, a ``Dim`` (or ``Dim.DYNAMIC``)
            dimension the program specialises to a constant (the message gives the reason).
        RuntimeError: an example size outside its ``Dim``'s range or breaking an assumption.
        ember._dynamo.exc.Unsupported: the forward needs a tensor's value in Python (the
            message names the line).
    """
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise UserError(f"Expecting `kwargs` to be a dict of example keyword inputs, got {type(kwargs)}")
    kwargs = kwargs or {}
    spec, auto = shapes_spec(mod, args, kwargs, dynamic_shapes)
    if spec is None:
        world = World(mod.__call__, args, kwargs)
        _, cap = capture(mod.__call__, args, kwargs, world, fullgraph=True, joint=False)
        gm = _lift_state(CapturedGraphModule.from_capture(cap, world), mod, flatten((args, kwargs)),
                         input_names(mod.__call__, args, kwargs, access=True))
        return ExportedProgram(_torch_names(gm, input_names(mod.__call__, args, kwargs), mod), range_constraints={})
    return declared_program(mod.__call__, mod.forward, args, kwargs, spec, auto, torch_names=True)


def _kind(gm, where):
    """What placeholder input ``where`` (of ``gm._inputs``) is: ``"user_input"`` (an int: the
    flat input's index), ``"lifted_tensor_constant"``, ``"parameter"`` or ``"buffer"``
    (qualified names), None for a constant made from the sizes at each call."""
    if isinstance(where, SizedConstant):
        return None
    if isinstance(where, int):
        return "user_input"
    if where in gm.__dict__.get("_lifted", ()) or where.rpartition(".")[2].startswith("_tensor_constant"):
        return "lifted_tensor_constant"
    return "parameter" if isinstance(gm._held(where), Parameter) else "buffer"


def _lift_state(gm, module, flat=(), access=()):
    """``gm`` made to hold what torch.export lifts: every parameter and buffer of ``module``,
    read by the forward or not (``bn.num_batches_tracked`` in eval mode), each a placeholder;
    tensor attributes it read under their attribute's name (``k`` for ``self.k``, not
    ``_tensor_constant0``; kept in ``gm._lifted``); the flat user inputs ``flat`` it never read;
    the names of the non-persistent buffers (``gm._non_persistent``); and ``access``, the Python
    reading each flat user input (``ys[1]['a']``, named in guard messages: ``gm._access``)."""
    held = {name for name in gm._inputs if isinstance(name, str)}
    attributes = {id(v): f"{prefix}{'.' * bool(prefix)}{k}" for prefix, sub in module.named_modules()
                  for k, v in vars(sub).items() if isinstance(v, Tensor)}
    gm._lifted = set()
    for k, where in enumerate(gm._inputs):
        if isinstance(where, str) and where.startswith("_tensor_constant"):
            name = attributes.get(id(gm._held(where)))
            if name is not None and name not in held:
                tensor = gm._held(where)
                delattr(gm, where)
                _install(gm, name, tensor)
                gm._inputs[k], where = name, name
            gm._lifted.add(where)
    state = [*module.named_parameters(), *module.named_buffers()]
    for name, tensor in state:
        if name not in held:
            _install(gm, name, tensor)
            gm._inputs.append(name)
            gm.graph.placeholder(name.replace(".", "_"), _meta(tensor))
    read = {i for i in gm._inputs if isinstance(i, int)}
    for i, tensor in enumerate(flat):
        if i not in read:
            gm._inputs.append(i)
            gm.graph.placeholder(f"input_{i}", _meta(tensor))
    gm._access = list(access)
    gm._non_persistent = {f"{prefix}{'.' * bool(prefix)}{name}" for prefix, sub in module.named_modules()
                          for name in sub._non_persistent_buffers_set}
    return gm


_PREFIX = {"parameter": "p_", "buffer": "b_", "lifted_tensor_constant": "c_"}


def _torch_names(gm, names, module=None):
    """``gm`` with its placeholders ordered and named as torch.export orders and names them:
    ``module``'s parameters, then its buffers (each in the module's order), lifted constants,
    user inputs (in ``forward``'s order); a user input named after ``forward``'s argument
    (``input``, builtins' names included; ``xs_0`` inside a list),
    ``names`` giving one per flat input; a parameter ``p_`` and its qualified name with ``_``
    for ``.`` (``p_fc_weight``), a buffer ``b_``, a lifted constant ``c_``. A name another node
    already has is left as captured."""
    rank = {"parameter": 0, "buffer": 1, "lifted_tensor_constant": 2, "user_input": 3, None: 4}
    held = {name: k for k, name in enumerate(n for n, _ in module.named_parameters())} if module is not None else {}
    held.update({name: k for k, name in enumerate(n for n, _ in module.named_buffers())} if module is not None else {})
    inputs = gm._inputs
    gm.order_inputs(sorted(range(len(inputs)), key=lambda k: (
        rank[_kind(gm, inputs[k])], inputs[k] if isinstance(inputs[k], int)
        else held.get(inputs[k], k) if isinstance(inputs[k], str) else k)))
    taken = {n.name for n in gm.graph.nodes}
    for placeholder, where in zip(gm.graph.placeholders, gm._inputs):
        kind = _kind(gm, where)
        if kind is None:
            continue
        name = names[where] if kind == "user_input" else _PREFIX[kind] + where.replace(".", "_").lstrip("_")
        if name.isidentifier() and name not in taken:
            taken.discard(placeholder.name)
            placeholder.name = placeholder.target = name
            taken.add(name)
    return gm


def declared_program(fn, signature_fn, args, kwargs, spec, auto=(), class_name="GraphModule", torch_names=False):
    """The :class:`ExportedProgram` of ``fn(*args, **kwargs)`` whose sizes ``spec`` (a
    ShapesSpec naming ``signature_fn``'s parameters) declares dynamic: export's and make_fx's.
    ``auto``: names of the symbols that may be specialised. ``torch_names``: export's names of
    the placeholders (:func:`_torch_names`), else the capture's.

    Raises:
        ValueError: the spec names a parameter ``signature_fn`` lacks.
        RuntimeError: an example size breaking the spec.
        ember._dynamo.exc.UserError: a declared symbol the program specialises (not in ``auto``).
    """
    spec.check_signature(signature_fn)
    paths = []  # the tensors an ObjectSpec declares are inputs too, read from each call's objects
    held = spec.held(signature_fn, args, kwargs, paths)
    world = World(fn, args, kwargs, held=held)
    dims, ranges, sizes = spec.bind(signature_fn, args, kwargs, world.inputs)
    int_inputs = {e.args[0]: k for (i, k), e in dims.items() if i == ARG}  # an IntVar on an int argument
    why = []
    names = input_names(fn, args, kwargs) + [h[0] for h in held]
    _, cap, shape, static = capture_dynamic(fn, args, kwargs, world, True, dims, ranges, names, why.append,
                                            joint=False)
    if static is not None:  # the graph fitted at sizes >= 2 leaves this example's size 0 or 1 out
        cap, shape = static, None
    kept = {} if shape is None else shape.ranges
    # (a symbol Python compared otherwise than as a range, ``k == 3``: the program holds where that
    # outcome does only, which its range constraints cannot say)
    compared = set(free_symbols(getattr(kept, "conds", [])))
    kept = {n: r for n, r in kept.items() if n not in compared}
    lost = [n for n in ranges if n not in kept and n not in auto]
    if lost:
        raise UserError(f"Constraints violated ({', '.join(lost)})! "
                        + " ".join(f"You marked {n} as dynamic but your code specialized it to be a constant "
                                   f"({sizes[n]})." for n in lost)
                        + (f" ({'; '.join(why)})" if why else "")
                        + " If this is intended, use Dim.AUTO or Dim.STATIC for it.")
    parameters = list(inspect.signature(signature_fn).parameters)
    first = len(world.inputs) - len(held)
    gm = CapturedGraphModule.from_capture(cap, world, class_name)
    if torch_names:
        access = input_names(fn, args, kwargs, access=True)  # (held tensors keep their placeholder names)
        gm = _torch_names(_lift_state(gm, fn.__self__, access=access), names, fn.__self__)
    return ExportedProgram(gm,
                           range_constraints={symbol(n): ValueRanges(*ranges[n]) for n in kept},
                           int_inputs={n: k for n, k in int_inputs.items() if n in kept},
                           object_inputs=[[first + j, path[0], parameters.index(path[0]), [list(s) for s in path[1:]]]
                                          for j, path in enumerate(paths)])


class ExportGraphSignature:
    """Which placeholders of the graph are parameters, buffers, constants and user inputs,
    by placeholder name (torch.export.ExportGraphSignature's fields)."""

    def __init__(self, gm):
        kinds = {"parameters": [], "buffers": [], "lifted_tensor_constants": [], "user_inputs": []}
        self.inputs_to_parameters, self.inputs_to_buffers = {}, {}
        self.inputs_to_lifted_tensor_constants = {}
        for placeholder, where in zip(gm.graph.placeholders, gm._inputs):
            kind = _kind(gm, where)  # (None: made from the sizes at each call, not held)
            if kind == "user_input":
                kinds["user_inputs"].append(placeholder.name)
            elif kind is not None:
                kinds[kind + "s"].append(where)
                getattr(self, f"inputs_to_{kind}s")[placeholder.name] = where
        self.parameters, self.buffers = kinds["parameters"], kinds["buffers"]
        self.lifted_tensor_constants, self.user_inputs = kinds["lifted_tensor_constants"], kinds["user_inputs"]
        self.user_outputs = [getattr(o, "name", repr(o)) for o in gm.graph.outputs]
        dropped = gm.__dict__.get("_non_persistent", set())
        self.non_persistent_buffers = [b for b in self.buffers if b in dropped]

    @property
    def input_specs(self):
        """An :class:`~.graph_signature.InputSpec` per placeholder: the parameters, buffers,
        constants, then the user inputs (torch's ``input_specs``)."""
        specs = [InputSpec(InputKind.PARAMETER, TensorArgument(k), t) for k, t in self.inputs_to_parameters.items()]
        specs += [InputSpec(InputKind.BUFFER, TensorArgument(k), t, t not in self.non_persistent_buffers)
                  for k, t in self.inputs_to_buffers.items()]
        specs += [InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(k), t)
                  for k, t in self.inputs_to_lifted_tensor_constants.items()]
        return specs + [InputSpec(InputKind.USER_INPUT, TensorArgument(k)) for k in self.user_inputs]

    @property
    def output_specs(self):
        """An :class:`~.graph_signature.OutputSpec` per output (torch's ``output_specs``)."""
        return [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(k)) for k in self.user_outputs]

    def __str__(self):
        """torch's form: ``# inputs``, a line per input spec (``b_s: BUFFER target='s'
        persistent=False``), ``# outputs``, a line per output spec; each line ends with a newline."""
        lines = ["", "# inputs", *map(str, self.input_specs), "", "# outputs", *map(str, self.output_specs)]
        return "\n".join(lines) + "\n"


class ExportedProgram:
    """A captured forward with its state (torch.export.ExportedProgram).

    Attributes:
        graph_module: a :class:`~ember.fx.GraphModule` holding the parameters, buffers and
            constants; ``graph``: its graph; ``graph_signature``: an :class:`ExportGraphSignature`.
        state_dict: ``{qualified name: tensor}`` of the parameters and buffers.
        constants: ``{name: tensor}`` of the other tensors the forward read.
        range_constraints: ``{symbol: ValueRanges}``: the range of each size symbol of a
            dynamic graph (``{}`` for static shapes).
        int_inputs: ``{symbol name: position in (*args, *kwargs.values())}``: the symbols
            that are int arguments (an ``IntVar`` on an int), read from each call's arguments.
        object_inputs: ``[[input index, parameter name, its position, [[is_attribute, key],
            ...]], ...]``: tensors an ``ObjectSpec`` declares, inputs of the graph after the
            flattened arguments', read from each call's objects (``cache.keys``, ``cache.extra["bias"]``).
    """

    def __init__(self, graph_module, range_constraints, int_inputs=None, object_inputs=()):
        self.graph_module, self.range_constraints = graph_module, range_constraints
        self.int_inputs, self.object_inputs = dict(int_inputs or {}), [list(o) for o in object_inputs]
        self.graph_signature = ExportGraphSignature(graph_module)
        held = dict(graph_module.named_parameters())
        held.update(graph_module.named_buffers())
        sig = self.graph_signature
        # (a non-persistent buffer is one of the constants, as torch's)
        self.state_dict = {k: held[k] for k in sig.parameters + sig.buffers if k not in sig.non_persistent_buffers}
        self.constants = {k: held[k] for k in sig.lifted_tensor_constants + sig.non_persistent_buffers}

    @property
    def graph(self):
        return self.graph_module.graph

    def module(self):
        """An ``nn.Module`` running the graph (no Python model code), holding the same
        tensors; each call checks its inputs against the graph's: dtypes and ranks, static
        sizes, and the size symbols' ranges and derived sizes.

        Raises (on call): AssertionError ``Guard failed: x.size()[0] <= 64`` (torch's) for a
        size that breaks them; RuntimeError for a wrong dtype, rank or a non-tensor input."""
        gm = self.graph_module
        module = _ExportedModule({**self.state_dict, **self.constants}, gm.graph, gm._inputs, gm._out_spec,
                                 gm._class_name)
        module._ranges = {str(k): (v.lower, v.upper) for k, v in self.range_constraints.items()}
        module._int_inputs, module._object_inputs = self.int_inputs, self.object_inputs
        module._access = gm.__dict__.get("_access", [])
        return module

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """The program in core ops (torch's ``run_decompositions``): ember's graph already holds
        only its primitive op entries (``F.linear`` is recorded as ``addmm``), so a new program
        over the same graph and state."""
        gm = self.graph_module
        return ExportedProgram(gm, dict(self.range_constraints), self.int_inputs, self.object_inputs)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self):
        body = self.graph_module.print_readable(print_output=False)
        body = "".join(f"    {line}\n" for line in body.splitlines())
        signature = "".join(f"    {line}\n" for line in str(self.graph_signature).splitlines()[1:])
        return (f"ExportedProgram:\n{body}\nGraph signature: \n{signature}    \n"
                f"Range constraints: {self.range_constraints}\n")


class _ExportedModule(CapturedGraphModule):
    """``ExportedProgram.module()``: the graph module, checking its inputs first."""
    _ranges, _int_inputs, _object_inputs, _access = {}, {}, (), ()  # (_access: see _lift_state)
    _input_dims = {}  # make_fx's symbolic sizes: {(flat input index, dim): symbol}, read from every input

    def forward(self, *args, **kwargs):
        flat = flatten((args, kwargs))
        if self._object_inputs:
            if len(flat) != self._object_inputs[0][0]:
                raise RuntimeError(f"Expected {self._object_inputs[0][0]} input tensors besides the objects' "
                                   f"(as exported), got {len(flat)}")
            flat += [_read(args, kwargs, *where) for where in self._object_inputs]
        sizes, derived = {}, []
        scalars = (*args, *kwargs.values())
        for n, k in self._int_inputs.items():
            v = scalars[k] if k < len(scalars) else None
            if type(v) is not int:
                raise RuntimeError(f"Expected input at position {k} to be an int (IntVar {n}), got {type(v).__name__}")
            sizes[n] = (v, f"argument {k}")
        for placeholder, i in zip(self.graph.placeholders, self._inputs):
            if not isinstance(i, int):
                continue
            t = flat[i] if i < len(flat) else None
            if not isinstance(t, Tensor):
                raise RuntimeError(f"Expected input at inputs[{i}] to be a tensor, got {type(t).__name__}")
            want, name = placeholder.meta["shape"], self._access[i] if i < len(self._access) else placeholder.name
            if t.dim() != len(want):
                raise RuntimeError(f"Unexpected number of dimensions in input at inputs[{i}].shape "
                                   f"(expected {list(want)}, got {list(t.shape)})")
            for d, (w, g) in enumerate(zip(want, t.shape)):
                where = f"{name}.size()[{d}]"
                if isinstance(w, Expr) and w.op == "sym":
                    first = sizes.setdefault(w.args[0], (g, where))
                    if first[0] != g:
                        raise AssertionError(f"Guard failed: {where} == {first[1]}")
                elif isinstance(w, Expr):
                    derived.append((w, g, where))
                elif w != g:
                    raise AssertionError(f"Guard failed: {where} == {w}")
            if t.dtype is not placeholder.meta["dtype"]:
                raise RuntimeError(f"Expected input at inputs[{i}] to have dtype {placeholder.meta['dtype']}, "
                                   f"but got {t.dtype}")
        for (i, d), w in self._input_dims.items():  # inputs read only for their sizes bind them too
            t = flat[i] if i < len(flat) else None
            if isinstance(t, Tensor) and d < t.dim():
                first = sizes.setdefault(w.args[0], (t.shape[d], f"inputs[{i}].size()[{d}]"))
                if first[0] != t.shape[d]:
                    raise AssertionError(f"Guard failed: inputs[{i}].size()[{d}] == {first[1]}")
        for n, (v, where) in sizes.items():
            lo, hi = self._ranges.get(n, (-math.inf, math.inf))
            hi = math.inf if hi is None else hi  # a range left open (make_fx's symbolic mode)
            if v < lo or v > hi:
                raise AssertionError(f"Guard failed: {where} {'>=' if v < lo else '<='} {lo if v < lo else hi}")
        values = {n: v for n, (v, _) in sizes.items()}
        for e, g, where in derived:
            if evaluate(e, values) != g:
                spelled = e.code(lambda n: sizes[n][1])
                raise AssertionError(f"Guard failed: {spelled} == {where}")
        return self.run_at(flat, values if self.graph.symbols else None)


def _read(args, kwargs, index, name, position, steps):
    """The tensor ``args[position]`` (or ``kwargs[name]``) holds at ``steps`` (attributes and keys)."""
    where = name
    try:
        value = args[position] if position < len(args) else kwargs[name]
        for attribute, key in steps:
            where += f".{key}" if attribute else f"[{key!r}]"
            value = getattr(value, key) if attribute else value[key]
    except (AttributeError, KeyError, IndexError, TypeError) as e:
        raise RuntimeError(f"Expected input {where} (inputs[{index}]), declared by an ObjectSpec: "
                           f"{type(e).__name__}: {e}") from None
    if not isinstance(value, Tensor):
        raise RuntimeError(f"Expected input {where} (inputs[{index}]) to be a tensor, got {type(value).__name__}")
    return value
