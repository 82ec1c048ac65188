"""``torch.distributions``: probability distributions with sampling, reparameterised sampling
and log-densities, and KL divergences (https://pytorch.org/docs/stable/distributions.html).

One module per family, under PyTorch's module names (``ember.distributions.normal.Normal``
as ``torch.distributions.normal.Normal``): ``Normal``, ``Laplace``, ``Uniform``,
``Exponential``, ``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``, ``Poisson``, ``Cauchy``,
``StudentT``, ``Geometric``, ``Bernoulli``, ``Categorical``, ``OneHotCategorical``,
``MultivariateNormal``, ``LowRankMultivariateNormal``, ``Wishart``, ``LKJCholesky``, ``Independent``, ``MixtureSameFamily``, ``TransformedDistribution``
with the ``transforms`` (and ``LogNormal``, ``HalfNormal``, ``LogisticNormal`` made with them),
``VonMises``, ``HalfCauchy``, ``InverseGamma``, ``FisherSnedecor``, ``ContinuousBernoulli``,
``GeneralizedPareto``, the bases
``Distribution`` and ``ExponentialFamily``, ``kl_divergence``, and the constraint registries
``biject_to``/``transform_to``. Samples equal PyTorch's
for the same seed (float32 gamma-based ones to an ulp or two); log_prob, entropy, the moments
and KL divergences are differentiable in the parameters, as PyTorch's are.
"""
from . import constraints
from .bernoulli import Bernoulli
from .binomial import Binomial
from .beta import Beta
from .cauchy import Cauchy
from .chi2 import Chi2
from .categorical import Categorical
from . import constraint_registry
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from . import transforms
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform, CumulativeDistributionTransform,
                         ReshapeTransform, CorrCholeskyTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform, PositiveDefiniteTransform, PowerTransform,
                         SigmoidTransform, SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform,
                         TanhTransform, Transform, identity_transform)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform", "Exponential", "ExponentialFamily",
           "Gamma", "Geometric", "Gumbel", "HalfNormal", "Independent", "IndependentTransform", "Kumaraswamy",
           "Laplace", "LogNormal", "LogisticNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "NegativeBinomial", "Normal", "OneHotCategorical", "Pareto", "Poisson", "PowerTransform",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "SigmoidTransform", "SoftmaxTransform",
           "StickBreakingTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
           "VonMises", "Weibull", "constraints", "kl_divergence", "register_kl", "transforms",
           "LowRankMultivariateNormal", "Wishart", "LKJCholesky", "biject_to", "transform_to", "constraint_registry",
           "CorrCholeskyTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "SoftplusTransform",
           "CatTransform", "StackTransform", "ReshapeTransform", "CumulativeDistributionTransform", "HalfCauchy",
           "InverseGamma", "identity_transform", "OneHotCategoricalStraightThrough", "FisherSnedecor",
           "ContinuousBernoulli", "GeneralizedPareto"]
