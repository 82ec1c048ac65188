"""The LKJ distribution over Cholesky factors of correlation matrices
(https://pytorch.org/docs/stable/distributions.html#lkjcholesky): the factor ``L`` of a
correlation matrix ``C = L L^T`` whose density is proportional to ``det(C)^(eta - 1)``
(Lewandowski, Kurowicka & Joe 2009), ``eta`` the concentration.

Sampling is the onion method (LKJ 2009, section 3.2): row i of ``L`` is ``sqrt(y_i)`` times a
uniform direction in its first i entries, with ``y_i ~ Beta(i / 2, eta + (dim - 1 - i) / 2)``,
and the diagonal entry what keeps the row of unit norm. (torch 2.13 draws ``y_i`` from
``Beta(i - 1/2, ...)``, so for dim > 2 its correlations past the second row are not the LKJ
law: with eta = 1, dim = 3, the variance of ``C[2, 0]`` is 0.30, not 1/4; ember's is 1/4.) The density of ``L`` is
``prod_{i >= 1} L_ii^(dim - i - 1 + 2 (eta - 1))`` over the normaliser
``pi^((dim-1)/2) Gamma_{dim-1}(alpha - 1/2) / Gamma(alpha)^(dim-1)``, ``alpha = eta + (dim - 1)/2``.
"""
import math

from .._creation import arange, empty
from .._dtype import finfo
from .._ops.join import cat
from .._ops.special import lgamma, mvlgamma
from .._size import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """``LKJCholesky(dim, concentration=1.0)``: dim x dim lower Cholesky factors of correlation
    matrices; ``concentration`` (eta > 0, a number or a tensor: the batch shape) 1 gives the
    uniform law over correlation matrices. ValueError for ``dim < 2``. Has no entropy or
    moments (NotImplementedError), as PyTorch's."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])
        # row i >= 1 draws y_i ~ Beta(i / 2, marginal - (i - 1) / 2) (row 0 is (1, 0, ...))
        self._beta = Beta((offset + 1) / 2, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = empty(self._extended_shape(sample_shape), dtype=y.dtype).normal_().tril(-1)
        tiny = finfo(u.dtype).tiny
        u = u / u.norm(dim=-1, keepdim=True).clamp(min=tiny)  # (row 0 is 0 / tiny = 0: the row (1, 0, ...))
        w = y.sqrt() * u
        diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
        return w + diagonal.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, dtype=value.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        return unnormalized - normalizer
