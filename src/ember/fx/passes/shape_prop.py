"""``ShapeProp`` (torch.fx.passes.shape_prop): runs a GraphModule on example inputs and records
each node's result's shape, dtype and strides in ``node.meta["tensor_meta"]`` and its type in
``node.meta["type"]``."""
from typing import Any, NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor result. ``memory_format`` is None: ember's tensors
    have no memory formats (torch names the one the tensor is contiguous in); ``qparams`` is
    ``{}`` (ember has no quantized tensors)."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result):
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), None, False, {})


class ShapeProp(Interpreter):
    """An :class:`~ember.fx.Interpreter` that records, for every node whose result holds
    tensors, ``meta["tensor_meta"]`` (a :class:`TensorMetadata`, or the result's structure
    with one per tensor), and for every node ``meta["type"]``.

    Args:
        gm: the :class:`~ember.fx.GraphModule`.
        fake_mode: not supported (ember has no fake tensors); must be None.

    Raises:
        NotImplementedError: ``fake_mode`` is given.
    """

    def __init__(self, gm, fake_mode=None):
        if fake_mode is not None:
            raise NotImplementedError("ShapeProp(fake_mode=...): ember has no fake tensors; run on real inputs")
        super().__init__(gm)

    def run_node(self, n):
        result = super().run_node(n)
        found = []

        def extract(value):
            if isinstance(value, Tensor):
                found.append(value)
                return _extract_tensor_metadata(value)
            return value
        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Runs the module on ``args`` (recording the metadata); returns its result."""
        return super().run(*args)
