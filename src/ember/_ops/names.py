"""The names PyTorch gives the ``grad_fn`` of each op, where they differ from ember's
``<OpClass>Backward0``: what ``print(y.grad_fn)``, ``y.grad_fn.name()`` and
``type(y.grad_fn).__name__`` show, so that a learner comparing runs with PyTorch sees the same
graph. A value is the name, or a function of the op's inputs and attributes when PyTorch's
name depends on the call (an integer index selects, a slice slices)."""
__all__ = ["TORCH_NAMES", "torch_name", "snake_case"]


def _indexing(inputs, attrs):
    # PyTorch applies an index's parts left to right; the last one that does something names
    # the result (a full ``:`` does nothing).
    name = "AliasBackward0"
    for part in attrs["index"]:
        if type(part) is int:
            name = "SelectBackward0"
        elif part is None:
            name = "UnsqueezeBackward0"
        elif type(part) is slice and part != slice(None):
            name = "SliceBackward0"
    return name


def _matmul(inputs, attrs):
    a, b = inputs[0].ndim, inputs[1].ndim
    if a == b == 2:
        return "MmBackward0"
    if a == b == 1:
        return "DotBackward0"
    if (a, b) == (2, 1):
        return "MvBackward0"
    if (a, b) == (1, 2):
        return "SqueezeBackward4"
    # Batched products fold the batch into a matrix product and unfold it with a view (a
    # transposed copy when only the second operand is batched).
    return "CloneBackward0" if a == 2 else "UnsafeViewBackward0"


def _pool(pattern):
    # 1-D pooling runs as 2-D pooling between an unsqueeze and a squeeze in torch
    def name(inputs, attrs):
        rank = len(attrs["kernel_size"])
        return "SqueezeBackward1" if rank == 1 else pattern.format(rank)
    return name


def _is_tensor(x):
    return hasattr(x, "grad_fn")


def _pow(inputs, attrs):
    base, exponent = inputs
    if not _is_tensor(base):
        return "PowBackward2"  # number ** tensor
    return "PowBackward1" if _is_tensor(exponent) else "PowBackward0"


TORCH_NAMES = {
    "Pow": _pow,
    "Sub": lambda inputs, attrs: "SubBackward0" if _is_tensor(inputs[0]) else "RsubBackward1",
    # ``number / tensor`` never reaches Div (``__rtruediv__`` is a reciprocal times the number);
    # ``div(number, tensor)`` does, and torch names it DivBackward0 too (its number is wrapped)
    "Div": "DivBackward0",
    "DivRounded": "DivBackward2",
    "Slice": _indexing,
    "Matmul": _matmul,
    "Sum": lambda inputs, attrs: "SumBackward0" if attrs.get("dim") is None else "SumBackward1",
    "Max": "MaxBackward1",
    "Min": "MinBackward1",
    "Clamp": "ClampBackward1",
    "ToDtype": "ToCopyBackward0",
    "CrossEntropy": "NllLossBackward0",
    "Conv": "ConvolutionBackward0",
    "ConvTranspose": "ConvolutionBackward0",
    "CopySlices": "torch::autograd::CopySlices",  # torch's class without "Backward0", name() with its namespace
    "MaxPool": _pool("MaxPool{}DWithIndicesBackward0"),
    "AvgPool": _pool("AvgPool{}DBackward0"),
    "Scatter": lambda inputs, attrs: "ScatterBackward0" if _is_tensor(inputs[1]) else "ScatterBackward1",
    "ConstantPad": "ConstantPadNdBackward0",
    "VectorNorm": "LinalgVectorNormBackward0",
    "ToSparse": "ToSparseBackward1",  # to_sparse() without arguments
    "Qr": "LinalgQrBackward0",
    "Svd": "LinalgSvdBackward0",
    "Eigh": "LinalgEighBackward0",
}


def torch_name(op, inputs, attrs):
    """PyTorch's name for the node recording ``op`` on ``inputs`` with ``attrs``."""
    name = TORCH_NAMES.get(op.name)
    if name is None:
        return op.backward_name
    return name if type(name) is str else name(inputs, attrs)


def snake_case(name):
    """An op's class name as torch's function name: ``"ChebyshevPolynomialT"`` is ``"chebyshev_polynomial_t"``."""
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))
