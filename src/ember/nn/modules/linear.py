"""Affine layers: ``Identity``, ``Linear``, ``Bilinear``
(https://pytorch.org/docs/stable/nn.html#linear-layers)."""
import math

from ..._creation import empty
from .. import functional as F
from .. import init
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


class Identity(Module):
    """Returns its input unchanged; any constructor arguments are ignored.

    Shape: input (*), output (*), the same tensor.
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x A^T + b``.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: if False, the layer has no additive bias (``bias`` is None).
        device, dtype: where and in which dtype the parameters are created (default float).

    Shape: input (*, H_in) with ``H_in = in_features``; output (*, H_out) with
    ``H_out = out_features``.

    Attributes: ``weight`` (out_features, in_features) and ``bias`` (out_features), both
    drawn from U(-k, k) with ``k = 1/sqrt(in_features)`` (the weight through
    ``kaiming_uniform_(a=sqrt(5))``, as in PyTorch).

    Raises RuntimeError (from the matmul) when the input's last dimension is not
    ``in_features``. Source: https://pytorch.org/docs/stable/generated/torch.nn.Linear.html

    Example::

        >>> import ember
        >>> m = ember.nn.Linear(20, 30)
        >>> m(ember.randn(128, 20)).shape
        torch.Size([128, 30])
    """
    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Re-draws the weight and bias with PyTorch's default initialisation."""
        init._default_weight_and_bias_(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y = x1^T A x2 + b``, one bilinear form per output feature.

    Args:
        in1_features, in2_features: sizes of the two inputs' samples.
        out_features: size of each output sample.
        bias: if False, no additive bias.
        device, dtype: as for :class:`Linear`.

    Shape: input1 (*, H_in1), input2 (*, H_in2) with the same leading dimensions; output
    (*, H_out).

    Attributes: ``weight`` (out_features, in1_features, in2_features) and ``bias``
    (out_features), both from U(-k, k) with ``k = 1/sqrt(in1_features)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.Bilinear.html
    """
    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draws ``weight`` and ``bias`` from U(-1/sqrt(in_features), 1/sqrt(in_features)), as
        PyTorch's ``Bilinear``."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A plain :class:`Linear` under PyTorch's class name: the output projection of
    :class:`~ember.nn.MultiheadAttention`, so that its ``repr`` reads as PyTorch's and dynamic
    quantization leaves it in floating point, as PyTorch does."""


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`Linear` whose ``in_features`` is the last dimension of its first input
    (:mod:`ember.nn.modules.lazy`); it becomes a ``Linear`` then. Args: out_features, bias,
    device, dtype. Source: https://pytorch.org/docs/stable/generated/torch.nn.LazyLinear.html"""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        """The layer's initialisation, once the parameters have a shape (a no-op before)."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Materializes weight (out_features, input.shape[-1]) and bias, then re-draws them."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
