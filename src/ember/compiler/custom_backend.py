"""Callable backends (torch's custom backend API): ``ember.compile(fn, backend=my_backend)``.

``my_backend(gm, example_inputs)`` is called once per captured graph, when it is compiled, with
the graph as a :class:`~ember.fx.graph_module.CapturedGraphModule` (its inputs: the graph's
placeholders in order, the tensors read from parameters and globals included) and example
tensors of the placeholders' shapes and dtypes; what it returns is called on each replay with
the placeholders' tensors and returns the graph's outputs (a tuple or list), autograd running
through it as in the ``"eager"`` backend. A graph with size symbols (dynamic shapes) is
replayed through the dispatcher without it.
"""
from .._creation import zeros
from ..fx import graph_module as _graph_module  # (the module: fx imports the compiler)
from .structure import _SLOT

__all__ = ["custom_runner", "is_custom"]


def is_custom(backend):
    """Whether ``backend`` is a callable backend (not a name)."""
    return callable(backend) and not isinstance(backend, str)


def custom_runner(backend, graph):
    """``run(tensors) -> outputs``: ``backend`` (a callable backend) applied to ``graph`` now."""
    gm = _graph_module.CapturedGraphModule({}, graph, range(len(graph.placeholders)), (_SLOT,) * len(graph.outputs))
    if graph.symbols:
        return lambda tensors, sizes=None: gm.run_at(tensors, sizes)
    examples = [zeros(p.meta["shape"], dtype=p.meta["dtype"], requires_grad=p.meta["requires_grad"])
                for p in graph.placeholders]
    compiled = backend(gm, examples)
    if not callable(compiled):
        raise TypeError(f"a compiler backend returns a callable; {backend!r} returned {compiled!r}")
    return lambda tensors: list(compiled(*tensors))
