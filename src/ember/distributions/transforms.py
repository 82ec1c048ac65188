"""Transforms: invertible maps between constrained spaces with the log-determinants of their
Jacobians, the pieces of a :class:`TransformedDistribution`
(https://pytorch.org/docs/stable/distributions.html#module-torch.distributions.transforms).

``t(x)`` is the map, ``t.inv(y)`` its inverse, ``t.log_abs_det_jacobian(x, y)`` is
``log |det dy/dx|`` summed over the transform's event dims; ``domain`` and ``codomain`` are
constraints whose ``event_dim`` says how many rightmost dims one application mixes. With
``cache_size=1`` a transform remembers its last ``(x, y)`` pair, so ``t.inv(t(x))`` returns
``x`` itself (with its gradient) instead of recomputing it.
"""
import math
from numbers import Number

from .._dtype import finfo
from .._ops.shape import broadcast_shapes
from .._ops.softmax import softmax
from .._size import Size
from ..nn.functional import logsigmoid, pad, softplus
from . import constraints
from .independent import _sum_rightmost
from .joined_transforms import CatTransform, StackTransform
from .matrix_transforms import CorrCholeskyTransform, LowerCholeskyTransform, PositiveDefiniteTransform
from .transform_base import Transform

__all__ = ["Transform", "ComposeTransform", "IndependentTransform", "ExpTransform", "PowerTransform",
           "SigmoidTransform", "TanhTransform", "AbsTransform", "AffineTransform", "SoftmaxTransform",
           "StickBreakingTransform", "identity_transform", "SoftplusTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "CorrCholeskyTransform", "CatTransform", "StackTransform", "ReshapeTransform",
           "CumulativeDistributionTransform"]


class ComposeTransform(Transform):
    """``parts`` applied in order (``ComposeTransform([])`` is the identity)."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim  # walk back: the dims the last part needs
        for part in reversed(self.parts):
            event_dim = max(event_dim - part.codomain.event_dim + part.domain.event_dim, part.domain.event_dim)
        return constraints.independent(domain, event_dim - domain.event_dim) if event_dim > domain.event_dim else domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim - part.domain.event_dim + part.codomain.event_dim, part.codomain.event_dim)
        return constraints.independent(codomain, event_dim - codomain.event_dim) if event_dim > codomain.event_dim else codomain

    @property
    def bijective(self):
        return all(part.bijective for part in self.parts)

    @property
    def sign(self):
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            self._inv = ComposeTransform([part.inv for part in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x.new_zeros(x.shape)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms, event_dim = [], self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(part) for part in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dims in its event:
    the log-determinant is summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ExpTransform(Transform):
    """``y = exp(x)``; log|dy/dx| = x."""
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, 1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals."""
    domain, codomain, bijective = constraints.positive, constraints.positive, True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign() if not isinstance(self.exponent, Number) else (1 if self.exponent > 0 else -1)

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool((self.exponent == other.exponent).all()
                                                          if not isinstance(self.exponent, Number) else
                                                          self.exponent == other.exponent)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()


def _clipped_sigmoid(x):
    info = finfo(x.dtype)
    return x.sigmoid().clamp(min=info.tiny, max=1.0 - info.eps)


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, kept inside (0, 1) by the dtype's tiny and eps."""
    domain, codomain, bijective, sign = constraints.real, constraints.unit_interval, True, 1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        info = finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)`` (squashed Gaussian policies, soft actor-critic); log|dy/dx| in the
    overflow-free form 2 (log 2 - x - softplus(-2x))."""
    domain, codomain, bijective, sign = constraints.real, constraints.interval(-1.0, 1.0), True, 1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return 0.5 * (y.log1p() - (-y).log1p())

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not injective: the inverse picks the non-negative root)."""
    domain, codomain = constraints.real, constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x`` (tensors or numbers), over ``event_dim`` rightmost dims."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        same = [a == b if isinstance(a, Number) and isinstance(b, Number) else bool((a == b).all())
                for a, b in ((self.loc, other.loc), (self.scale, other.scale))]
        return all(same)

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, Number):
            result = x.new_full(shape, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:  # summed over the scale's own event entries, then broadcast (torch's order)
            result = result.reshape(tuple(result.shape[:result.ndim - self._event_dim]) + (-1,)).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return _broadcast(shape, self.loc, self.scale)

    def inverse_shape(self, shape):
        return _broadcast(shape, self.loc, self.scale)


def _broadcast(shape, *values):
    return broadcast_shapes(tuple(shape), *(tuple(getattr(v, "shape", ())) for v in values))


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last dim (not bijective; the inverse is ``log y`` up to a
    constant)."""
    domain, codomain = constraints.real_vector, constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return softmax(x - x.max(-1, True)[0], -1)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """Maps a vector of K - 1 reals onto the K-simplex by stick breaking: entry i takes the
    fraction ``sigmoid(x_i - log(K - 1 - i))`` of the stick left (the offsets map x = 0 to
    the simplex's centre), the last entry what remains. Bijective; the Jacobian is triangular,
    so ``log|det J| = sum_i (log sigmoid(z_i) - z_i + log y_i)`` with ``z = x - offset``.
    Source: https://pytorch.org/docs/stable/distributions.html#torch.distributions.transforms.StickBreakingTransform
    """
    domain, codomain, bijective = constraints.real_vector, constraints.simplex, True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _log_offset(x, k):
        """log(k - i) for i = 0 .. k - 1 (x gives dtype)."""
        return (k + 1 - x.new_ones(k).cumsum(-1)).log()

    def _call(self, x):
        fraction = _clipped_sigmoid(x - self._log_offset(x, x.shape[-1]))
        left = (1 - fraction).cumprod(-1)
        return pad(fraction, [0, 1], value=1) * pad(left, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        left = (1 - head.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return head.log() - left.log() + self._log_offset(y, head.shape[-1])

    def log_abs_det_jacobian(self, x, y):
        z = x - self._log_offset(x, x.shape[-1])
        return (-z + logsigmoid(z) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class ReshapeTransform(Transform):
    """The rightmost dims of shape ``in_shape`` reshaped to ``out_shape`` (volume-preserving:
    log-determinant 0). ValueError when the two hold different numbers of elements, or for an
    input whose rightmost dims are not ``in_shape``."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape, cache_size)

    def _call(self, x):
        return x.reshape(tuple(x.shape[:x.dim() - len(self.in_shape)]) + tuple(self.out_shape))

    def _inverse(self, y):
        return y.reshape(tuple(y.shape[:y.dim() - len(self.out_shape)]) + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    @staticmethod
    def _reshaped(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return Size(tuple(shape[:cut]) + tuple(new))

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``, onto (0, 1); inverse ``icdf``; log|dy/dx| is the density,
    ``distribution.log_prob(x)`` (the probability integral transform)."""
    bijective, sign = True, 1
    codomain = constraints.independent(constraints.unit_interval, 0)

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CumulativeDistributionTransform(self.distribution,
                                                                                           cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``; inverse ``y + log(-expm1(-y))``; log|dy/dx| = -softplus(-x)."""
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, 1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)
