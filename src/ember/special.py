"""``ember.special``: the special functions under ``torch.special``'s names
(https://pytorch.org/docs/stable/special.html). Each is the op of the same function at top
level (``special.erfc is ember.erfc``) or its SciPy name (``gammaln`` is ``lgamma``, ``gammainc``/``gammaincc`` are ``igamma``/``igammac``, ``psi``
and ``digamma`` are one, ``expit`` is ``sigmoid``, ``multigammaln`` is ``mvlgamma``); the
Bessel, Airy, zeta and normal-distribution functions live in ``_ops.bessel``, the
orthogonal polynomials in ``_ops.polynomials``."""
from ._ops.bessel import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, entr, erfcx, i0e, i1e, log_ndtr,
                          modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1, ndtr, ndtri,
                          scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0, zeta)
from ._ops.pointwise_unary import erf, expm1, log1p, round, sigmoid as expit
from ._ops.polynomials import (chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
                               chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he,
                               laguerre_polynomial_l, legendre_polynomial_p, shifted_chebyshev_polynomial_t,
                               shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
                               shifted_chebyshev_polynomial_w)
from ._ops.softmax import log_softmax, logsumexp, softmax
from ._ops.special import (digamma, erfc, erfinv, exp2, i0, i1, igamma as gammainc, igammac as gammaincc,
                           lgamma as gammaln, logit, mvlgamma as multigammaln, polygamma, sinc, xlog1py, xlogy)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

psi = digamma
