"""``ember.export.export`` and ``ExportedProgram`` (torch.export): a module's forward captured
whole into a graph that runs without the Python model code."""
from .._tensor import Tensor
from ..compiler.capture import capture, flatten
from ..compiler.exc import UserError
from ..compiler.guards import World
from ..fx.graph_module import GraphModule
from ..nn.modules.module import Module
from ..nn.parameter import Parameter

__all__ = ["export", "ExportedProgram", "ExportGraphSignature"]


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=()):
    """Capture ``mod(*args, **kwargs)`` into an :class:`ExportedProgram`
    (https://pytorch.org/docs/stable/export.html).

    ``mod`` runs once on the example inputs while every op it dispatches is recorded, with
    ``fullgraph=True`` semantics: data-dependent Python control flow is an error (write it with
    ``ember.cond``/``switch``/``while_loop``, which become single nodes). Parameters and buffers
    are lifted into the program's ``state_dict``; the graph has the example inputs' static
    shapes, checked when ``ep.module()`` is called. ``strict`` is accepted (ember has one
    tracer).

    Args:
        mod: an ``nn.Module``.
        args: a tuple of example positional inputs; ``kwargs``: a dict of keyword ones.
        dynamic_shapes: not supported yet by ember's static graphs (see the raise below).

    Raises:
        ValueError: ``mod`` is not an ``nn.Module``.
        ember._dynamo.exc.UserError: ``args`` is not a tuple, ``kwargs`` not a dict.
        ember._dynamo.exc.Unsupported: the forward needs a tensor's value in Python (the
            message names the line).
        NotImplementedError: ``dynamic_shapes`` given.
    """
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise UserError(f"Expecting `kwargs` to be a dict of example keyword inputs, got {type(kwargs)}")
    kwargs = kwargs or {}
    _dynamic_spec(mod, dynamic_shapes)
    world = World(mod.__call__, args, kwargs)
    _, cap = capture(mod.__call__, args, kwargs, world, fullgraph=True, joint=False)
    gm = GraphModule.from_capture(cap, world)
    return ExportedProgram(gm, range_constraints={})


def _dynamic_spec(mod, dynamic_shapes):
    # The hook for symbolic sizes (task DYN: ember.fx.experimental.dynamic_spec): resolve the
    # spec here, mark the inputs' dynamic dims in ExportedProgram._dynamic, fill range_constraints.
    if dynamic_shapes is not None:
        raise NotImplementedError("ember.export.export(dynamic_shapes=...): ember's exported graphs have "
                                  "static shapes; export without dynamic_shapes")


class ExportGraphSignature:
    """Which placeholders of the graph are parameters, buffers, constants and user inputs,
    by placeholder name (torch.export.ExportGraphSignature's fields)."""

    def __init__(self, gm):
        kinds = {"parameters": [], "buffers": [], "lifted_tensor_constants": [], "user_inputs": []}
        self.inputs_to_parameters, self.inputs_to_buffers = {}, {}
        self.inputs_to_lifted_tensor_constants = {}
        for placeholder, where in zip(gm.graph.placeholders, gm._inputs):
            if isinstance(where, int):
                kinds["user_inputs"].append(placeholder.name)
                continue
            held = gm._held(where)
            if where.rpartition(".")[2].startswith("_tensor_constant"):
                kinds["lifted_tensor_constants"].append(where)
                self.inputs_to_lifted_tensor_constants[placeholder.name] = where
            elif isinstance(held, Parameter):
                kinds["parameters"].append(where)
                self.inputs_to_parameters[placeholder.name] = where
            else:
                kinds["buffers"].append(where)
                self.inputs_to_buffers[placeholder.name] = where
        self.parameters, self.buffers = kinds["parameters"], kinds["buffers"]
        self.lifted_tensor_constants, self.user_inputs = kinds["lifted_tensor_constants"], kinds["user_inputs"]
        self.user_outputs = [getattr(o, "name", repr(o)) for o in gm.graph.outputs]

    def __str__(self):
        lines = ["    # inputs"]
        targets = {**self.inputs_to_parameters, **self.inputs_to_buffers, **self.inputs_to_lifted_tensor_constants}
        kind = {**{k: "PARAMETER" for k in self.inputs_to_parameters}, **{k: "BUFFER" for k in self.inputs_to_buffers},
                **{k: "CONSTANT_TENSOR" for k in self.inputs_to_lifted_tensor_constants}}
        for name in list(targets) + self.user_inputs:
            lines.append(f"    {name}: {kind[name]} target={targets[name]!r}" if name in targets
                         else f"    {name}: USER_INPUT")
        lines += ["", "    # outputs"] + [f"    {name}: USER_OUTPUT" for name in self.user_outputs]
        return "\n".join(lines)


class ExportedProgram:
    """A captured forward with its state (torch.export.ExportedProgram).

    Attributes:
        graph_module: a :class:`~ember.fx.GraphModule` holding the parameters, buffers and
            constants; ``graph``: its graph; ``graph_signature``: an :class:`ExportGraphSignature`.
        state_dict: ``{qualified name: tensor}`` of the parameters and buffers.
        constants: ``{name: tensor}`` of the other tensors the forward read.
        range_constraints: ``{}`` (static shapes).
    """

    def __init__(self, graph_module, range_constraints):
        self.graph_module, self.range_constraints = graph_module, range_constraints
        self.graph_signature = ExportGraphSignature(graph_module)
        held = dict(graph_module.named_parameters())
        held.update(graph_module.named_buffers())
        sig = self.graph_signature
        self.state_dict = {k: held[k] for k in sig.parameters + sig.buffers}
        self.constants = {k: held[k] for k in sig.lifted_tensor_constants}

    @property
    def graph(self):
        return self.graph_module.graph

    def module(self):
        """An ``nn.Module`` running the graph (no Python model code), holding the same
        tensors; each call checks its inputs' shapes and dtypes against the example inputs'.

        Raises (on call): RuntimeError naming the input, the dimension and both sizes."""
        gm = self.graph_module
        return _ExportedModule({**self.state_dict, **self.constants}, gm.graph, gm._inputs, gm._out_spec)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self):
        body = self.graph_module.print_readable(print_output=False)
        body = "".join(f"    {line}\n" for line in body.splitlines())
        return (f"ExportedProgram:\n{body}\nGraph signature: \n{self.graph_signature}\n"
                f"Range constraints: {self.range_constraints}\n")


class _ExportedModule(GraphModule):
    """``ExportedProgram.module()``: the graph module, checking its inputs first."""

    def forward(self, *args, **kwargs):
        from_inputs = [(p, i) for p, i in zip(self.graph.placeholders, self._inputs) if isinstance(i, int)]
        flat = flatten((args, kwargs))
        for placeholder, i in from_inputs:
            t = flat[i] if i < len(flat) else None
            if not isinstance(t, Tensor):
                raise RuntimeError(f"Expected input at inputs[{i}] to be a tensor, got {type(t).__name__}")
            want = placeholder.meta["shape"]
            if t.dim() != len(want):
                raise RuntimeError(f"Unexpected number of dimensions in input at inputs[{i}].shape "
                                   f"(expected {list(want)}, got {list(t.shape)})")
            for d, (w, g) in enumerate(zip(want, t.shape)):
                if w != g:
                    raise RuntimeError(f"Expected input at inputs[{i}].shape[{d}] to be equal to {w}, but got {g}")
            if t.dtype is not placeholder.meta["dtype"]:
                raise RuntimeError(f"Expected input at inputs[{i}] to have dtype {placeholder.meta['dtype']}, "
                                   f"but got {t.dtype}")
        return super().forward(*args, **kwargs)

