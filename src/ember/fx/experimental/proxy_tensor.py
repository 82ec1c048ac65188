"""``make_fx(f)(*args)``: trace a function into a :class:`~ember.fx.GraphModule`
(torch.fx.experimental.proxy_tensor.make_fx), by the compiler's capture."""
import functools

from ...compiler.capture import capture, input_names
from ...compiler.dynamic import capture_dynamic
from ...compiler.guards import World
from ...compiler.symbolic import symbol
from ...export.exported_program import _ExportedModule, declared_program
from .dynamic_spec import resolve_dynamic_shapes
from ..graph_module import CapturedGraphModule

__all__ = ["make_fx"]

_MODES = ("real", "fake", "symbolic")


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False, *,
            pre_dispatch=False, record_module_stack=False, _allow_fake_constant=False,
            _error_on_data_dependent_ops=True):
    """Return a function that runs ``f(*args)`` once while recording every op it dispatches
    and returns the recorded :class:`~ember.fx.GraphModule` (``.graph``, ``.code``,
    ``print_readable()``, callable on new inputs of the traced shapes).

    ember traces with the real values (``"real"``); ``"fake"`` is accepted and traces the same
    way. ``"symbolic"``: every size >= 2 of the tensor inputs is a size symbol (``s0``, ``s1``,
    ...; equal sizes share one, as torch's duck sizing; 0 and 1 stay static), the graph's sizes
    are expressions of them (found by recording at a few sizes, :mod:`ember.compiler.dynamic`)
    and the module runs at other sizes, checking them (``AssertionError("Guard failed: ...")``);
    a size the function specialises stays static. A ``@dynamic_spec`` on ``f`` (or on a module's
    ``forward``) declares the symbols instead, in any mode: its ranges and assumptions are
    checked at each call, and the tensors an ``ObjectSpec`` declares are inputs, read from each
    call's objects. Control-flow operators (``ember.cond``, ``while_loop``, ...) become single nodes
    holding their subgraphs; the module's parameters are held under their qualified names,
    other tensors ``f`` reads as ``_tensor_constant<k>``. ``decomposition_table`` and the
    other options are accepted for compatibility (ember's graph holds its op entries).

    Raises:
        AssertionError: an unknown ``tracing_mode``.
        ValueError: a ``@dynamic_spec`` naming a parameter ``f`` lacks.
        RuntimeError: an example size breaking the ``@dynamic_spec``.
        ember._dynamo.exc.Unsupported: ``f`` needs a tensor's value in Python (``.item()``,
            ``if tensor:``): the message names the line.

    Source: https://pytorch.org/docs/stable/fx.html (make_fx is torch's internal tracer).
    """
    if tracing_mode not in _MODES:
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")

    @functools.wraps(f)
    def wrapped(*args):
        name = getattr(f, "__name__", type(f).__name__)
        name = name if name.isidentifier() else "GraphModule"
        spec = resolve_dynamic_shapes(f, None)
        if spec is not None:  # @dynamic_spec on f: its declared sizes, whatever the tracing mode
            program = declared_program(f, getattr(f, "forward", f), args, {}, spec, class_name=name)
            return program.module()
        world = World(f, args, {})
        if tracing_mode != "symbolic":
            _, cap = capture(f, args, {}, world, fullgraph=True, joint=False)
            return CapturedGraphModule.from_capture(cap, world, name)
        dims, ranges = _duck_sizes(world.inputs)
        _, cap, shape, static = capture_dynamic(f, args, {}, world, True, dims, ranges, input_names(f, args, {}),
                                                lambda text: None, joint=False)
        module = _ExportedModule.from_capture(static or cap, world, name)
        module._ranges = {} if static is not None or shape is None else shape.ranges
        if static is None and shape is not None:
            module._input_dims = dims
        return module
    return wrapped


def _duck_sizes(inputs):
    """``({(input index, dim): symbol}, {name: (2, None)})``: a symbol per distinct size >= 2
    of the tensor inputs, in order of appearance."""
    dims, named = {}, {}
    for i, t in enumerate(inputs):
        for d, size in enumerate(getattr(t, "shape", ())):
            if size >= 2:
                dims[(i, d)] = symbol(named.setdefault(size, f"s{len(named)}"))
    return dims, {name: (2, None) for name in named.values()}
