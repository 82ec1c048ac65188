"""``torch.distributions``: probability distributions with sampling, reparameterised sampling
and log-densities, and KL divergences (https://pytorch.org/docs/stable/distributions.html).

``Normal``, ``Laplace``, ``Uniform``, ``Exponential``, ``Bernoulli``, ``Categorical``,
``OneHotCategorical``, ``MultivariateNormal`` and ``Independent``; ``kl_divergence`` between
pairs of the same family. Samples equal PyTorch's for the same seed; log_prob, entropy, the
moments and KL divergences are differentiable in the parameters, as PyTorch's are.
"""
from . import constraints
from .continuous import Exponential, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .multivariate_normal import Independent, MultivariateNormal
from .normal import Laplace, Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace",
           "MultivariateNormal", "Normal", "OneHotCategorical", "Uniform", "constraints",
           "kl_divergence", "register_kl"]
