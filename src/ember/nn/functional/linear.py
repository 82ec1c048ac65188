"""Linear maps as functions: ``linear`` and ``bilinear``
(https://pytorch.org/docs/stable/nn.functional.html#linear-functions).

``linear`` runs as one fused op (:mod:`ember._ops.nn`) when its operands have the usual
shapes and dtypes, and as a matmul plus a broadcast bias otherwise.
"""
from ..._ops.args import c_type_name as _c_type, product as _prod
from ..._ops.linalg import einsum, matmul
from ..._ops.shape import broadcast_shapes
from ..._ops.nn import LinearForward
from ..._ops.linear_graph import as_torch_graph
from ..._ops.core import _type_name, apply

__all__ = ["linear", "bilinear"]


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (https://pytorch.org/docs/stable/generated/torch.nn.functional.linear.html).

    Shapes: input (*, in_features), weight (out_features, in_features) or (in_features),
    bias (out_features) or broadcastable to the output; output (*, out_features).
    Raises RuntimeError when ``in_features`` differ ("mat1 and mat2 shapes cannot be
    multiplied (AxB and CxD)"), when dtypes differ, or when ``bias`` does not broadcast.
    """
    weight_shape, input_shape = weight._data.shape, input._data.shape
    if len(weight_shape) == 2 and input_shape:
        if input_shape[-1] != weight_shape[1]:
            rows = _prod(input.shape[:-1])
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
                               f"and {weight.shape[1]}x{weight.shape[0]})")
        if input.dtype is not weight.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_c_type(input.dtype)} != {_c_type(weight.dtype)}")
        if bias is None:
            out = apply(LinearForward, input, weight)
        elif bias._data.shape == weight_shape[:1] and bias.dtype is input.dtype:
            out = apply(LinearForward, input, weight, bias)
        else:
            out = None
        if out is not None:  # a matrix input's node is shown as torch's addmm/mm
            return as_torch_graph(out, weight) if len(input_shape) == 2 and out._grad_fn is not None else out
    out = matmul(input, weight.t()) if weight.ndim == 2 else matmul(input, weight)
    if bias is None:
        return out
    if bias.dtype is not out.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_name(bias.dtype)} and {_type_name(out.dtype)}")
    try:
        broadcast_shapes(bias.shape, out.shape)
    except RuntimeError:
        raise RuntimeError(f"The expanded size of the tensor ({out.shape[-1]}) must match the existing "
                           f"size ({bias.shape[-1]}) at non-singleton dimension {out.ndim - 1}.  Target "
                           f"sizes: {list(out.shape)}.  Tensor sizes: {list(bias.shape)}") from None
    return out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y_o = x1^T W_o x2 + b_o`` (https://pytorch.org/docs/stable/generated/torch.nn.functional.bilinear.html).

    Shapes: input1 (*, in1_features), input2 (*, in2_features) with the same leading
    dimensions, weight (out_features, in1_features, in2_features), bias (out_features);
    output (*, out_features). RuntimeError naming the sizes when they do not fit.
    """
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    for name, x, k in (("input1", input1, 1), ("input2", input2, 2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[k]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.ndim else 1} but expected {weight.shape[0]}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias

