"""``cov`` and ``corrcoef``: the covariance and correlation matrices of variables observed
together (https://pytorch.org/docs/stable/generated/torch.cov.html,
https://pytorch.org/docs/stable/generated/torch.corrcoef.html). Written in ember ops, so
their gradients come from those; complex input gives ``E[(x - mean)(y - mean)^H]``.
"""
import warnings

from .. import _dtype
from .._tensor import Tensor
from .core import _type_name


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (1-D: one variable),
    its observations in the columns, with integer frequency weights ``fweights`` and floating
    observation weights ``aweights`` (both 1-D, one per observation). With ``w`` the product of
    the weights, the divisor is ``sum(w) - correction * sum(w * aweights) / sum(w)``
    (``N - correction`` unweighted); where it is <= 0 a UserWarning is given and the result is
    inf or nan.

    Shape: (V, N) -> (V, V); (N,) and (1, N) -> (). Integer input gives the default float
    dtype. Raises RuntimeError for bool input, input of more than 2 dims and for weights of
    the wrong shape, dtype or sign.
    """
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input "
                           f"with {input.ndim} dimensions")
    if input.dtype is _dtype.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not x.dtype.is_inexact:
        x = x.to(_dtype.get_default_dtype())
    n = x.shape[1]
    w = None
    for name, weights, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
        if weights is None:
            continue
        _check_weights(name, weights, integral, n)
        w = weights if w is None else w * weights
    if w is None:
        w_sum, divisor = n, n - correction
    else:
        w_sum = w.sum()
        divisor = w_sum if correction == 0 else w_sum - correction * (
            1 if aweights is None else (w * aweights).sum() / w_sum)
        w = w.to(x.dtype.to_real())
    mean = (x.sum(1) if w is None else (x * w).sum(1)) / w_sum
    if float(divisor) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than "
                      "the number of observations.", UserWarning, stacklevel=2)
        divisor = 0 * divisor
    centered = x - mean.unsqueeze(1)
    out = ((centered if w is None else centered * w) @ centered.mH) / divisor
    return out.squeeze()  # as torch: one variable, given as (N,) or (1, N), gives a 0-d result


def _check_weights(name, weights, integral, n):
    if not isinstance(weights, Tensor):
        raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type(weights).__name__}")
    if weights.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} "
                           f"with {weights.ndim} dimensions")
    if integral and (weights.dtype.is_inexact or weights.dtype is _dtype.bool):
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                           f"{_type_name(weights.dtype)} dtype")
    if not integral and not weights.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights "
                           f"with {_type_name(weights.dtype)} dtype")
    if weights.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations "
                           f"in the input but got {weights.numel()} != {n}")
    if weights.numel() and float(weights.min()) < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(input):
    """Pearson's correlation coefficients of the variables in the rows of ``input``:
    ``cov(input)`` divided by the outer product of the standard deviations, clipped to
    [-1, 1] (each part, for complex input). Shape: (V, N) -> (V, V); (N,) and (1, N) -> ()."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().real.sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.dtype.is_complex:
        return c.real.clip(-1, 1) + 1j * c.imag.clip(-1, 1)
    return c.clip(-1, 1)
