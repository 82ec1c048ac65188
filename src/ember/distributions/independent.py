"""``Independent``: batch dims reinterpreted as event dims
(https://pytorch.org/docs/stable/distributions.html#independent)."""
from .._size import Size
from . import constraints
from .distribution import Distribution

__all__ = ["Independent"]


def _sum_rightmost(value, dims):
    return value.reshape(tuple(value.shape[:value.ndim - dims]) + (-1,)).sum(-1) if dims else value


class Independent(Distribution):
    """``Independent(base_distribution, reinterpreted_batch_ndims)``: the rightmost
    ``reinterpreted_batch_ndims`` batch dims of ``base_distribution`` become event dims, so
    ``log_prob`` sums over them (a diagonal Gaussian from a batch of ``Normal``)."""
    arg_constraints = {}

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = Size(batch_shape)
        inner = self._event_shape[:self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + tuple(inner))
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        n = len(base_distribution.event_shape) + reinterpreted_batch_ndims
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - n], shape[len(shape) - n:], validate_args=validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @property
    def support(self):
        base = self.base_dist.support
        return constraints.independent(base, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else base

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
