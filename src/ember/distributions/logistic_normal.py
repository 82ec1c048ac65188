"""The logistic-normal distribution on the simplex
(https://pytorch.org/docs/stable/distributions.html#logisticnormal)."""
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution, base_parameter
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """``LogisticNormal(loc, scale)``: ``StickBreakingTransform(X)`` for ``X ~ Normal(loc,
    scale)`` with the last dim of ``loc``/``scale`` (size K - 1; a scalar is read as K - 1 = 1)
    the event, so draws lie on the K-simplex: event_shape ``(K,)``.

    No closed-form mean, variance or entropy (NotImplementedError, as torch).

    Raises:
        ValueError: with validation on, ``scale`` is not positive or a value is off the simplex.
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True
    loc = base_parameter("loc")
    scale = base_parameter("scale")

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(LogisticNormal, _instance))
