"""Ops that draw random numbers from the default generator. As ops they are recorded by the
compiler like any other, and a replayed graph draws afresh each call, in eager's order.

``_standard_gamma`` is differentiable in its shape parameter by implicit reparameterisation
(Figurnov, Mohamed & Mnih, "Implicit Reparameterization Gradients", 2018): a sample ``x`` of
Gamma(a, 1) is ``F⁻¹(u; a)`` for the regularised lower incomplete gamma function
``F = P(a, ·)`` and a uniform ``u`` held fixed, so ``dx/da = -(∂P/∂a)(a, x) / p(x; a)`` with
``p`` the density. ember evaluates ``∂P/∂a`` exactly (its series below x = 1, a central
difference of SciPy's ``gammainc``/``gammaincc``, whichever is the smaller tail, above), to
about 1e-8 relative; PyTorch's ``_standard_gamma_grad`` is an approximation good to about
3e-4, so the two agree to that.

The draws are the CPU generator's (NumPy arrays, torch's numbers for a seed), and the gamma
gradient's series runs on them with SciPy: this file is NumPy's by design, as a CPU
generator is; callers put a draw on another library's device (``F.dropout``'s mask).
"""
import numpy as np
from scipy import special as _special

from .. import _distributions, _dtype
from .core import Op, apply, elementwise_rule, like_input

__all__ = ["DropoutMask", "Multinomial", "StandardUniform", "StandardNormal", "StandardGamma", "StandardGammaGrad", "standard_gamma", "standard_gamma_grad",
           "sample_dirichlet"]


class DropoutMask(Op):
    """A tensor of ``shape`` and ``dtype``: 0 with probability ``p``, else ``1 / (1 - p)``
    (Srivastava et al., 2014). No inputs; never differentiated."""
    draws = True
    promote = None
    differentiable = False
    save_inputs = False
    infer = classmethod(lambda op, shape, p, dtype: (tuple(shape), dtype))

    @staticmethod
    def forward(shape, p, dtype):
        if p == 1:
            return np.zeros(shape, dtype.np)
        return _distributions.dropout_mask(shape, p, dtype)  # torch's numbers for the same seed


class StandardUniform(Op):
    """A tensor of ``shape`` and floating ``dtype`` uniform on [0, 1) (``rand`` and ``rand_like``
    with the default generator). No inputs; never differentiated."""
    draws = True
    promote = None
    differentiable = False
    save_inputs = False
    infer = classmethod(lambda op, shape, dtype: (tuple(shape), dtype))

    @staticmethod
    def forward(shape, dtype):
        return _distributions.uniform(shape, 0.0, 1.0, dtype)


class StandardNormal(Op):
    """A tensor of ``shape`` and real floating ``dtype`` of N(0, 1) samples (``randn`` and
    ``randn_like`` with the default generator). No inputs; never differentiated."""
    draws = True
    promote = None
    differentiable = False
    save_inputs = False
    infer = classmethod(lambda op, shape, dtype: (tuple(shape), dtype))

    @staticmethod
    def forward(shape, dtype):
        return _distributions.normal(shape, 0.0, 1.0, dtype)


class Multinomial(Op):
    """``num_samples`` category indices (int64) per row of non-negative weights, shaped (C) or
    (N, C), with or without ``replacement`` (``multinomial``). The weights are checked as the
    draw runs, so a compiled graph checks them on every call. Never differentiated."""
    draws = True
    promote = None
    differentiable = False
    save_inputs = False
    infer = classmethod(lambda op, w, num_samples, replacement: (tuple(w.shape[:-1]) + (num_samples,), _dtype.int64))

    @staticmethod
    def forward(w, num_samples, replacement, generator=None):
        rows = w.reshape(-1, w.shape[-1])
        drawn = _distributions.multinomial(rows, num_samples, replacement, generator)
        return drawn.reshape(w.shape[:-1] + (num_samples,))


def _at_least_tiny(values, dtype):
    """float64 samples in ``dtype``, no smaller than its smallest normal number (PyTorch keeps
    gamma samples off 0 so that their logarithms stay finite)."""
    return np.maximum(values, np.finfo(dtype).tiny).astype(dtype)


def standard_gamma(input, generator=None):
    """``torch._standard_gamma``: one Gamma(a, 1) sample per entry ``a`` of the floating tensor
    ``input`` (same shape and dtype), PyTorch's numbers for the same seed (float32 within an
    ulp or two: PyTorch computes those in float32). Differentiable in ``input``."""
    return apply(StandardGamma, input, generator=generator)


class StandardGamma(Op):
    """Gamma(a, 1) samples; the derivative is the implicit reparameterisation gradient."""
    draws = True
    promote = None
    save_output = True
    infer = classmethod(like_input)

    @staticmethod
    def forward(a, generator=None):
        return _at_least_tiny(_distributions.standard_gamma(a, generator), a.dtype)

    @staticmethod
    def backward(ctx, grad):
        return (grad * standard_gamma_grad(ctx.input(0), ctx.output),)


def standard_gamma_grad(input, output):
    """``torch._standard_gamma_grad``: ``dx/da`` of Gamma(a, 1) samples ``output`` at shapes
    ``input`` (broadcast), holding the sample's quantile fixed. Not differentiable."""
    return apply(StandardGammaGrad, input, output)


class StandardGammaGrad(Op):
    differentiable = False
    infer = classmethod(elementwise_rule)

    @staticmethod
    def forward(a, x):
        return _gamma_sample_grad(a.astype(np.float64), x.astype(np.float64)).astype(np.result_type(a, x))


def _gamma_sample_grad(a, x):
    a, x = np.broadcast_arrays(a, x)
    out = np.empty(a.shape)
    small = x < 1
    if small.any():  # ∂P/∂a / p = Σ r_n (log x − ψ(a+n+1)), r_n = x^(n+1) / (a (a+1) ... (a+n))
        aa, xx = a[small], x[small]
        log_x, r = np.log(xx), xx / aa
        total = r * (log_x - _special.psi(aa + 1))
        for n in range(1, 60):  # r_n shrinks at least as 1/n!
            r = r * xx / (aa + n)
            total += r * (log_x - _special.psi(aa + n + 1))
        out[small] = -total
    big = ~small
    if big.any():
        aa, xx = a[big], x[big]
        h = 1e-5 * aa
        lower = xx < aa  # difference the smaller tail: P there, else Q = 1 - P
        ahead = np.where(lower, _special.gammainc(aa + h, xx), -_special.gammaincc(aa + h, xx))
        behind = np.where(lower, _special.gammainc(aa - h, xx), -_special.gammaincc(aa - h, xx))
        density = np.exp((aa - 1) * np.log(xx) - xx - _special.gammaln(aa))
        out[big] = -(ahead - behind) / (2 * h) / density
    return out


def sample_dirichlet(input, generator=None):
    """``torch._sample_dirichlet``: one Dirichlet sample per row (last dim) of the floating
    tensor of concentrations ``input``, same shape and dtype. Not differentiable (the
    distribution's ``rsample`` differentiates through standard gammas instead)."""
    return apply(SampleDirichlet, input, generator=generator)


class SampleDirichlet(Op):
    draws = True
    promote = None
    differentiable = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(a, generator=None):
        # inside the open simplex, as PyTorch keeps it: every entry in [tiny, 1) of the dtype
        below_one = np.nextafter(a.dtype.type(1), a.dtype.type(0))
        return np.minimum(_at_least_tiny(_distributions.dirichlet(a, generator), a.dtype), below_one)
