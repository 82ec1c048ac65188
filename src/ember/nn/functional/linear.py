"""Linear maps as functions: ``linear`` and ``bilinear``
(https://pytorch.org/docs/stable/nn.functional.html#linear-functions).

``linear`` runs as PyTorch decomposes it, so its graph is PyTorch's node for node: a matrix
input with a bias is ``addmm(bias, input, weight.t())``; a contiguous input of other rank with a
vector bias is folded into rows around that ``addmm`` (``view``, ``addmm``, ``view``); every other
case is ``matmul(input, weight.t())`` plus the bias.
"""
from ..._ops.args import c_type_name as _c_type, product as _prod
from ..._ops.linalg import Addmm, bmm, matmul
from ..._ops.core import INPUT_CASTS, _type_name, apply, recording

__all__ = ["linear", "bilinear"]


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (https://pytorch.org/docs/stable/generated/torch.nn.functional.linear.html).

    Shapes: input (*, in_features), weight (out_features, in_features) or (in_features),
    bias (out_features) or broadcastable to the output; output (*, out_features).
    Raises RuntimeError when either operand is 0-d, when ``in_features`` differ ("mat1 and mat2
    shapes cannot be multiplied (AxB and CxD)"), when dtypes differ, or when ``bias`` does not
    broadcast. Inside an autocast region all three are first cast as the product's operands
    (linear is on PyTorch's CPU autocast list), so a bfloat16 input meets a float32 weight.
    """
    if INPUT_CASTS:
        input, weight, bias = INPUT_CASTS[0](Addmm, (input, weight, bias))
    weight_shape, input_shape = weight._data.shape, input._data.shape
    if not input_shape or not weight_shape:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{len(input_shape)}D and {len(weight_shape)}D")
    if len(weight_shape) == 2:
        if input_shape[-1] != weight_shape[1]:
            rows = _prod(input.shape[:-1])
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
                               f"and {weight.shape[1]}x{weight.shape[0]})")
        if input.dtype is not weight.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_c_type(input.dtype)} != {_c_type(weight.dtype)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_name(bias.dtype)} and {_type_name(input.dtype)}")
    if bias is not None:
        if len(input_shape) == 2:  # PyTorch: "fused op is marginally faster"
            return _addmm(bias, input, weight)
        bias_shape = bias._data.shape
        if (len(bias_shape) == 1 or len([n for n in bias_shape if n != 1]) == 1) \
                and bias._data.flags.c_contiguous and input._data.flags.c_contiguous:
            if not recording(input, weight, bias):  # no graph to show: one product over the stack
                return _addmm(bias, input, weight)
            out = _addmm(bias, input.view(_prod(input_shape[:-1]), input_shape[-1]), weight)
            return out.view(input_shape[:-1] + out.shape[1:])
    out = matmul(input, weight.t())
    if bias is None:
        return out
    result = out + bias  # RuntimeError naming the sizes when they do not broadcast
    if result.shape != out.shape:  # PyTorch adds in place: the output cannot grow
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    return result


def _addmm(bias, rows, weight):
    """``addmm(bias, rows, weight.t())`` (``rows``: a matrix, or a stack of rows when unrecorded).
    RuntimeError for a vector weight, and expand's when
    ``bias`` does not broadcast to the product, as PyTorch's ``addmm``."""
    if weight.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {weight.ndim}-D tensor")
    shape, n, m = bias._data.shape, _prod(rows._data.shape[:-1]), weight._data.shape[0]
    if shape != (m,) and (len(shape) > 2 or any(size != 1 and size != want
                                                for size, want in zip(shape[::-1], (m, n)))):
        bias.expand(n, m)  # raises RuntimeError with the sizes
    return apply(Addmm, bias, rows, weight.t())


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
    lead, (o, i, j) = tuple(input1.shape[:-1]), weight.shape
    batch = _prod(lead)
    # torch's _trilinear: x1 W over i as a product of one batch (1, B, i) @ (1, i, o * j), then over j
    # as B products (o, j) @ (j, 1): their kernels' signs of zero (+0.0 for the size-1 sums below
    # 400 elements, or of several matrices; _backend.matmul)
    rows = bmm(input1.reshape(1, batch, i), weight.permute(1, 0, 2).reshape(1, i, o * j)).reshape(batch, o, j)
    out = bmm(rows, input2.reshape(batch, j, 1)).reshape(*lead, o)
    return out if bias is None else out + bias

