"""The von Mises distribution of an angle (https://pytorch.org/docs/stable/distributions.html#vonmises).

Its normaliser needs ``log I_0`` (and ``log I_1`` for the variance), the modified Bessel
functions, taken from the polynomial approximations of Abramowitz & Stegun 9.8.1-9.8.4
(relative error below 2e-7), which stay finite where ``I_0`` itself overflows and are
differentiable by autograd; draws follow Best & Fisher's rejection sampler, "Efficient
simulation of the von Mises distribution", Applied Statistics 28 (1979) 152-157.
"""
import math

from .._creation import zeros
from .._dtype import bool as bool_, float64
from .._ops.pointwise_binary import where
from .._sampling import rand
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4: per order, the series in (x / 3.75)^2 below 3.75 (times x
# for order 1), and of sqrt(x) exp(-x) I_n(x) in 3.75 / x above
_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
          [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
_LARGE = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537, -0.01647633,
           0.00392377],
          [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312, 0.01787654,
           -0.00420059])


def _polynomial(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):  # Horner's rule
        result = c + y * result
    return result


def _log_bessel_i(x, order):
    """log I_order(x) for x > 0, order 0 or 1 (each series fed only its own range, so that the
    other's overflow raises no warning)."""
    near = x.clamp(max=3.75)
    small = _polynomial((near / 3.75) ** 2, _SMALL[order])
    small = (small if order == 0 else near * small).log()
    far = x.clamp(min=3.75)
    large = far - 0.5 * far.log() + _polynomial(3.75 / far, _LARGE[order]).log()
    return where(x < 3.75, small, large)


class VonMises(Distribution):
    """``VonMises(loc, concentration)``: the circular density
    ``exp(concentration cos(x - loc)) / (2 pi I_0(concentration))``; ``loc`` and values are
    angles in radians, read modulo 2 pi; draws lie in [-pi, pi). ``mean`` and ``mode`` are
    ``loc`` and ``variance`` is the circular one, ``1 - I_1(k) / I_0(k)``. No rsample and no
    entropy (NotImplementedError, as torch).

    Raises:
        ValueError: with validation on, ``concentration`` is not positive.
    """
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _expand_params = (("loc", 0), ("concentration", 0))

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_bessel_i(self.concentration, 0))

    @lazy_property
    def _proposal_r(self):
        """Best & Fisher's r = (1 + rho^2) / (2 rho), in float64 (in float32 the sampler stalls
        for concentrations near 1e-4); 1/k + k, its expansion at 0, below k = 1e-5."""
        kappa = self.concentration.to(float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=Size()):
        """Draws of shape ``sample_shape + batch_shape`` by rejection (three uniforms per try,
        every entry retried until accepted), in float64, returned in ``loc``'s dtype."""
        with no_grad():
            shape = self._extended_shape(sample_shape)
            loc, kappa, r = self.loc.to(float64), self.concentration.to(float64), self._proposal_r
            x, done = zeros(shape, dtype=float64), zeros(shape, dtype=bool_)
            while not done.all():
                u1, u2, u3 = rand((3,) + tuple(shape), dtype=float64).unbind()
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                if accept.any():
                    x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
                    done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_bessel_i(self.concentration, 1) - _log_bessel_i(self.concentration, 0)).exp()
