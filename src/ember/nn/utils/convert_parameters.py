"""Flattening parameters into one vector and back
(https://pytorch.org/docs/stable/generated/torch.nn.utils.parameters_to_vector.html)."""
from ..._ops.join import cat
from ..._tensor import Tensor
from .._typename import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Makes each parameter's data a view of the matching slice of the 1-D tensor ``vec``.
    TypeError if ``vec`` is not a tensor."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
