"""``make_fx(f)(*args)``: trace a function into a :class:`~ember.fx.GraphModule`
(torch.fx.experimental.proxy_tensor.make_fx), by the compiler's capture."""
import functools

from ...compiler.capture import capture
from ...compiler.guards import World
from ..graph_module import GraphModule

__all__ = ["make_fx"]

_MODES = ("real", "fake", "symbolic")


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False, *,
            pre_dispatch=False, record_module_stack=False, _allow_fake_constant=False,
            _error_on_data_dependent_ops=True):
    """Return a function that runs ``f(*args)`` once while recording every op it dispatches
    and returns the recorded :class:`~ember.fx.GraphModule` (``.graph``, ``.code``,
    ``print_readable()``, callable on new inputs of the traced shapes).

    ember traces with the real values (``"real"``); ``"fake"`` is accepted and traces the same
    way. Control-flow operators (``ember.cond``, ``while_loop``, ...) become single nodes
    holding their subgraphs; the module's parameters are held under their qualified names,
    other tensors ``f`` reads as ``_tensor_constant<k>``. ``decomposition_table`` and the
    other options are accepted for compatibility (ember's graph holds its op entries).

    Raises:
        AssertionError: an unknown ``tracing_mode``.
        NotImplementedError: ``tracing_mode="symbolic"`` (ember's captured graphs have
            static shapes).
        ember._dynamo.exc.Unsupported: ``f`` needs a tensor's value in Python (``.item()``,
            ``if tensor:``): the message names the line.

    Source: https://pytorch.org/docs/stable/fx.html (make_fx is torch's internal tracer).
    """
    if tracing_mode not in _MODES:
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
    if tracing_mode == "symbolic":
        raise NotImplementedError("make_fx(tracing_mode='symbolic'): ember's captured graphs have static "
                                  "shapes; trace with tracing_mode='real'")

    @functools.wraps(f)
    def wrapped(*args):
        world = World(f, args, {})
        _, cap = capture(f, args, {}, world, fullgraph=True, joint=False)
        name = getattr(f, "__name__", type(f).__name__)
        return GraphModule.from_capture(cap, world, name if name.isidentifier() else "GraphModule")
    return wrapped
