"""``ember.special``: the special functions under ``torch.special``'s names
(https://pytorch.org/docs/stable/special.html). Each is the op of the same function at top
level (``special.erfc is ember.erfc``) or its SciPy name (``gammaln`` is ``lgamma``, ``gammainc``/``gammaincc`` are ``igamma``/``igammac``, ``psi``
and ``digamma`` are one, ``expit`` is ``sigmoid``)."""
from ._ops.pointwise_unary import erf, expm1, log1p, round, sigmoid as expit
from ._ops.softmax import log_softmax, logsumexp, softmax
from ._ops.special import (digamma, erfc, erfinv, exp2, i0, i1, igamma as gammainc, igammac as gammaincc,
                           lgamma as gammaln, logit, polygamma, sinc, xlog1py, xlogy)

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i1",
           "log1p", "log_softmax", "logit", "logsumexp", "polygamma", "psi", "round", "sinc",
           "softmax", "xlog1py", "xlogy"]

psi = digamma
