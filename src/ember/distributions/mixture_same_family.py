"""``MixtureSameFamily``: a finite mixture whose components are one batched distribution
(https://pytorch.org/docs/stable/distributions.html#mixturesamefamily)."""
from .._ops.gather import gather
from .._ops.softmax import log_softmax, logsumexp
from .._size import Size
from ..autograd.grad_mode import no_grad
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """``MixtureSameFamily(mixture_distribution, component_distribution)``: pick component
    ``k ~ mixture_distribution`` (a Categorical over the K components), then draw from
    ``component_distribution[..., k]`` (its rightmost batch dim is K). A Gaussian mixture is
    ``MixtureSameFamily(Categorical(weights), Normal(means, stds))``. ValueError when the
    mixture is not a Categorical or the batch shapes or K disagree."""
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mix_batch, comp_batch = mixture_distribution.batch_shape, component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mix_batch), reversed(comp_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mix_batch}) is not compatible with "
                                 f"`component_distribution.batch_shape`({comp_batch})")
        k_mix = mixture_distribution.logits.shape[-1]
        k_comp = component_distribution.batch_shape[-1]
        if k_mix != k_comp:
            raise ValueError(f"`mixture_distribution component` ({k_mix}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({k_comp})")
        self._num_component = k_mix
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(comp_batch, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        """The mixture's probabilities shaped to broadcast against the components' values."""
        missing = len(self.batch_shape) - len(self._mixture_distribution.batch_shape)
        x = x.reshape((1,) * missing + tuple(x.shape)) if missing > 0 else x
        return x.reshape(tuple(x.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        dim = -1 - self._event_ndims
        within = (probs * self._component_distribution.variance).sum(dim)
        between = (probs * (self._component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(dim)
        return within + between

    def cdf(self, x):
        x = self._pad(x)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix_prob = log_softmax(self._mixture_distribution.logits, -1)
        return logsumexp(log_prob_x + log_mix_prob, -1)

    def sample(self, sample_shape=Size()):
        with no_grad():
            sample_len, batch_len = len(sample_shape), len(self.batch_shape)
            gather_dim = sample_len + batch_len
            es = self.event_shape
            mix_sample = self._mixture_distribution.sample(sample_shape)
            comp_samples = self._component_distribution.sample(sample_shape)
            index = mix_sample.reshape(tuple(mix_sample.shape) + (1,) * (len(es) + 1))
            index = index.repeat((1,) * len(mix_sample.shape) + (1,) + tuple(es))
            return gather(comp_samples, gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n  {self._component_distribution!r})")
