"""``torch.distributions``: probability distributions with sampling, reparameterised sampling
and log-densities, and KL divergences (https://pytorch.org/docs/stable/distributions.html).

One module per family, under PyTorch's module names (``ember.distributions.normal.Normal``
as ``torch.distributions.normal.Normal``): ``Normal``, ``Laplace``, ``Uniform``,
``Exponential``, ``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``, ``Poisson``, ``Bernoulli``,
``Categorical``, ``OneHotCategorical``, ``MultivariateNormal`` and ``Independent``, the bases
``Distribution`` and ``ExponentialFamily``, and ``kl_divergence``. Samples equal PyTorch's
for the same seed (float32 gamma-based ones to an ulp or two); log_prob, entropy, the moments
and KL divergences are differentiable in the parameters, as PyTorch's are.
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Chi2, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Chi2", "Dirichlet", "Distribution", "Exponential",
           "ExponentialFamily", "Gamma", "Independent", "Laplace", "MultivariateNormal", "Normal",
           "OneHotCategorical", "Poisson", "Uniform", "constraints", "kl_divergence", "register_kl"]
