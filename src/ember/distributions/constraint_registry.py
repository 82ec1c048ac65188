"""``biject_to`` and ``transform_to``: from a constraint to a transform that maps unconstrained
reals onto the constrained set, for optimising a constrained parameter through an
unconstrained one (https://pytorch.org/docs/stable/distributions.html#module-torch.distributions.constraint_registry).

``biject_to(c)`` is bijective (``t.inv(t(x)) == x``, with a log-determinant, for
reparameterising densities); ``transform_to(c)`` need only land in the set (``simplex`` takes
``SoftmaxTransform``, not bijective). Lookups go by the constraint's class; a class with no
factory raises NotImplementedError naming it. ``register(constraint, factory)`` adds one, or
decorates the factory when ``factory`` is omitted.
"""
from numbers import Number

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Factories ``factory(constraint) -> Transform``, one per constraint class."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Registers ``factory`` for ``constraint`` (an instance or a subclass of
        :class:`~.constraints.Constraint`); without ``factory``, a decorator. TypeError for
        anything else."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(*keys):
    def register(factory):
        for key in keys:
            biject_to.register(key, factory)
            transform_to.register(key, factory)
        return factory
    return register


@_both(constraints.real)
def _real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_independent(constraint):
    return transforms.IndependentTransform(biject_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_independent(constraint):
    return transforms.IndependentTransform(transform_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@_both(constraints.greater_than, constraints.greater_than_eq)
def _greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval, constraints.half_open_interval)
def _interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, Number) and lower == 0 and isinstance(upper, Number) and upper == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(lower, upper - lower)])


biject_to.register(constraints.simplex, lambda constraint: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda constraint: transforms.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda constraint: transforms.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite, lambda constraint: transforms.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite, lambda constraint: transforms.PositiveDefiniteTransform())
_both(constraints.corr_cholesky)(lambda constraint: transforms.CorrCholeskyTransform())


@biject_to.register(constraints.cat)
def _biject_cat(constraint):
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_cat(constraint):
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
