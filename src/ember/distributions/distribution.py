"""``Distribution``: the base of every distribution
(https://pytorch.org/docs/stable/distributions.html#distribution).

A distribution has a ``batch_shape`` (independent, differently parameterised copies) and an
``event_shape`` (the shape of one draw: () for a scalar, (k,) for a vector). ``sample``/
``rsample`` of ``sample_shape`` give ``sample_shape + batch_shape + event_shape``;
``log_prob(value)`` gives one log-density per event. ``rsample`` is the reparameterised draw
(a differentiable function of the parameters and parameter-free noise, Kingma & Welling 2014);
``sample`` draws without gradient. With validation on (the default, as in PyTorch), bad
parameters and values outside the support raise ValueError naming them.
"""
import warnings

from .._size import Size
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The base of every distribution: shapes, validation, ``sample`` from ``rsample``
    (https://pytorch.org/docs/stable/distributions.html#distribution; the module docstring
    says more). Subclasses give ``rsample`` or ``sample``, ``log_prob`` and the moments."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    arg_constraints = {}
    support = None

    @staticmethod
    def set_default_validate_args(value):
        """Turns argument and sample validation on or off for distributions made afterwards."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # the distribution checks it
                if isinstance(getattr(type(self), name, None), lazy_property) and name not in self.__dict__:
                    continue  # derived from the other parameterisation: not given
                value = getattr(self, name)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {name} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                        f"{constraint!r}, but found invalid values:\n{value}")
        super().__init__()

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """A reparameterised draw of shape ``sample_shape + batch_shape + event_shape``, differentiable
        in the parameters. NotImplementedError where the distribution has none (``has_rsample`` False)."""
        raise NotImplementedError

    def sample_n(self, n):
        """``sample((n,))``, with PyTorch's FutureWarning (deprecated)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log density (or log mass) of ``value``, shape ``value.shape[:-len(event_shape)]``
        broadcast with ``batch_shape``. ValueError for a value outside the support (validation on)."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value`` (shape as :meth:`log_prob`'s);
        NotImplementedError where PyTorch has none."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse of :meth:`cdf`: the value whose cdf is ``value`` (a probability in [0, 1]);
        NotImplementedError where PyTorch has none."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution's support along a new leading dim, shape
        ``(n,) + batch_shape + event_shape`` (``(n,) + (1,) * len(batch_shape) + event_shape`` with
        ``expand=False``). NotImplementedError for continuous distributions."""
        raise NotImplementedError

    def entropy(self):
        """The (differential) entropy in nats, shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy())``, shape ``batch_shape``."""
        return self.entropy().exp()

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch broadcast to ``batch_shape`` (parameters expanded, not
        copied; https://pytorch.org/docs/stable/distributions.html#torch.distributions.distribution.Distribution.expand).
        Each family lists in ``_expand_params`` the parameters it holds and how many rightmost
        dims of each are not batch dims; RuntimeError when the shapes do not broadcast."""
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(type(self), _instance)
        for name, event_dims in self._expand_params:
            if name in self.__dict__:
                value = self.__dict__[name]
                tail = tuple(value.shape[value.ndim - event_dims:]) if event_dims else ()
                setattr(new, name, value.expand(tuple(batch_shape) + tail))
        for name, value in self.__dict__.items():  # what is not a batched parameter carries over
            if name not in new.__dict__ and name not in ("_batch_shape", "_event_shape"):
                setattr(new, name, value)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    _expand_params = ()

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _get_checked_instance(self, cls, _instance=None):
        return cls.__new__(type(self)) if _instance is None else _instance

    def _validate_sample(self, value):
        """ValueError unless ``value`` is a tensor whose shape broadcasts with
        ``batch_shape + event_shape`` and whose entries lie in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim = len(self._event_shape)
        if tuple(value.shape[value.ndim - event_dim:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        valid = self.support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({self.support!r}) of the distribution {self!r}, but "
                f"found invalid values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        text = ", ".join(f"{k}: {self.__dict__[k].item() if self.__dict__[k].numel() == 1 else self.__dict__[k].size()}"
                         for k in names)
        return f"{type(self).__name__}({text})"
