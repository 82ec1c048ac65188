"""The one-hot categorical distribution
(https://pytorch.org/docs/stable/distributions.html#onehotcategorical)."""
from .._creation import eye
from .._ops.positions import one_hot
from .._size import Size
from . import constraints
from .categorical import CategoryProbabilities
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(CategoryProbabilities, Distribution):
    """``OneHotCategorical(probs=None, logits=None)``: a :class:`Categorical` draw as a one-hot
    vector of length K (the event shape)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape, event_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return one_hot(self.probs.argmax(-1), self.probs.size()[-1]).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._categorical._num_events
        values = eye(n, dtype=self.probs.dtype).view((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """:class:`OneHotCategorical` with the straight-through gradient estimator (Bengio, Léonard
    & Courville 2013): ``rsample`` returns the one-hot sample plus ``probs - probs.detach()``,
    equal to the sample in value, with the gradient of ``probs``."""
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
