"""``F.linear``'s node as PyTorch's graph shows it.

ember records ``linear`` on a matrix input as one fused op on (input, weight, bias). PyTorch
records ``addmm(bias, input, weight.t())`` (``mm(input, weight.t())`` without a bias): its
``AddmmBackward0`` links to the bias, the input and a ``TBackward0`` node on the weight, in that
order. Programs and tutorials follow ``grad_fn.next_functions`` (PyTorch's blitz tutorial prints
the nodes behind a loss this way), so the fused node is relinked in PyTorch's order, with the
weight reached through a real transpose node: the engine runs the graph that is shown.
"""
from ..autograd.graph import Node, OpNode, _creation, node_created
from .._dispatch_state import OBSERVERS
from .._tensor import Tensor
from .core import node_class

__all__ = ["as_torch_graph"]


class TBackward0(Node):
    """The node of ``weight.t()``: passes the transposed gradient on to the weight."""
    __slots__ = ("shapes", "dtypes")

    def __init__(self, edge, weight):  # Node.__init__, inlined: one is made per linear call
        self.next_functions = (edge,)
        self._pre_hooks = self._hooks = self._metadata = None
        self.shapes, self.dtypes = (weight._data.shape,), (weight.dtype,)
        if _creation.hooks:
            node_created(self)

    def apply(self, grads):
        return (_transposed(grads[0]),)


def _transposed(g):
    # a gradient that is itself differentiated (create_graph) or watched by an observer (a
    # compile capture, the profiler) is transposed by the dispatched op; otherwise the array
    # is, as .t() would (a view), without the dispatch's cost
    if g is None or g.requires_grad or OBSERVERS:
        return None if g is None else g.t()
    return Tensor._make(g._data.T)


def _apply_in_torch_order(self, grads):
    gx, gw, gb = OpNode.apply(self, grads)  # the fused op's backward: (input, weight, bias)
    gw = _transposed(gw)
    return (gb, gx, gw) if len(self.next_functions) == 3 else (gx, gw)


_SHOWN = {name: type(name, (OpNode,), {"__slots__": (), "apply": _apply_in_torch_order})
          for name in ("AddmmBackward0", "MmBackward0")}
_FUSED = {node_class(name): _SHOWN[name] for name in _SHOWN}


def as_torch_graph(out, weight):
    """Relinks the node of ``out = linear(input, weight[, bias])`` for a 2-d ``input`` as
    PyTorch's ``addmm``/``mm`` node: edges (bias, input, TBackward0 -> weight). Returns ``out``."""
    node = out._grad_fn
    shown = _FUSED.get(type(node))
    if shown is None:  # not recorded (no gradient wanted), or already shown
        return out
    x_edge, w_edge, *b_edge = node.next_functions
    t_edge = (None, 0) if w_edge[0] is None else (TBackward0(w_edge, weight), 0)
    x_shape, w_shape, *b_shape = node.shapes
    x_dtype, w_dtype, *b_dtype = node.dtypes
    node.next_functions = (*b_edge, x_edge, t_edge)
    node.shapes = [*b_shape, x_shape, w_shape[::-1]]
    node.dtypes = [*b_dtype, x_dtype, w_dtype]
    node.__class__ = shown
    return out
