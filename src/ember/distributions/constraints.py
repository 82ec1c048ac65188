"""Constraints: the set a distribution's parameter or sample must lie in
(https://pytorch.org/docs/stable/distributions.html#module-torch.distributions.constraints).

``constraint.check(value)`` is a bool tensor, True where ``value`` satisfies it, reduced over
the constraint's ``event_dim`` rightmost dims (a simplex is checked per vector). Distributions
check their arguments and, in ``log_prob``, their values against these when validating.
"""
from .. import linalg
from .._dtype import bool as bool_, finfo
from .._ops.join import cat as _cat, stack as _stack
from .._ops.reduce import all as _all

__all__ = ["Constraint", "dependent", "is_dependent", "one_hot", "boolean", "real", "real_vector", "positive", "nonnegative",
           "unit_interval", "interval", "half_open_interval", "greater_than",
           "greater_than_eq", "less_than", "integer_interval", "nonnegative_integer",
           "positive_integer", "simplex", "multinomial", "lower_cholesky", "lower_triangular", "corr_cholesky", "positive_definite", "independent",
           "dependent_property", "square", "symmetric", "positive_semidefinite", "cat", "stack"]


class Constraint:
    """A set of values. ``is_discrete`` for sets of integers, ``event_dim`` for the number of
    rightmost dims that together make one element (1 for vectors, 2 for matrices)."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor, True where ``value`` is in the set (one entry per event: the rightmost
        ``event_dim`` dims are reduced). NotImplementedError on the base class."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


def _reduce(ok, event_dim):
    return _all(ok, tuple(range(-event_dim, 0))) if event_dim else ok


class _Dependent(Constraint):
    """A constraint that depends on other parameters (``Uniform``'s ``low < high``): checked by
    the distribution itself, not by ``check``."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


class _DependentProperty(property, _Dependent):
    """A property whose value (a constraint) depends on the distribution's parameters, usable as
    a class-level constraint (``@constraints.dependent_property(is_discrete=True)``; torch's
    ``dependent_property``)."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        property.__init__(self, fn)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


def is_dependent(constraint):
    """Whether ``constraint`` is :data:`dependent` (validated by its distribution)."""
    return isinstance(constraint, _Dependent)


class _OneHot(Constraint):
    """Vectors of zeros with a single one."""
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return _all((value == 0) | (value == 1), -1) & (value.sum(-1) == 1)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Real(Constraint):
    def check(self, value):
        return value == value  # not NaN


class _GreaterThan(Constraint):
    """``value > lower_bound`` (``constraints.greater_than(lower_bound)``)."""
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    """``value >= lower_bound`` (``constraints.greater_than_eq(lower_bound)``)."""
    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    """``value < upper_bound`` (``constraints.less_than(upper_bound)``)."""
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """``lower_bound <= value <= upper_bound`` (``constraints.interval``)."""
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    """``lower_bound <= value < upper_bound`` (``constraints.half_open_interval``)."""
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _IntegerInterval(_Interval):
    """The integers from ``lower_bound`` to ``upper_bound``, both included
    (``constraints.integer_interval``)."""
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_GreaterThan):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Multinomial(Constraint):
    """Count vectors: nonnegative entries summing to at most ``upper_bound``."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return _all(x >= 0, -1) & (x.sum(-1) <= self.upper_bound)


class _Simplex(Constraint):
    """Nonnegative vectors summing to one (within 1e-6)."""
    event_dim = 1

    def check(self, value):
        return _all(value >= 0, -1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal."""
    event_dim = 2

    def check(self, value):
        lower = _all((value.tril() == value).flatten(-2), -1)
        return lower & _all(value.diagonal(dim1=-2, dim2=-1) > 0, -1)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""
    event_dim = 2

    def check(self, value):
        return _all((value.tril() == value).flatten(-2), -1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower triangular, a positive diagonal,
    and rows of unit Euclidean norm (within ``10 n eps`` for n columns)."""
    event_dim = 2

    def check(self, value):
        tolerance = finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = value.detach().pow(2).sum(-1).sqrt()
        return lower_cholesky.check(value) & _all((row_norm - 1.0).abs() <= tolerance, -1)


class _Square(Constraint):
    """Square matrices."""
    event_dim = 2

    def check(self, value):
        return value.new_full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=bool_)


class _Symmetric(_Square):
    """Square matrices equal to their transpose (within 1e-6)."""

    def check(self, value):
        square = super().check(value)
        if not bool(square.all()):
            return square
        return _all(((value - value.mT).abs() <= 1e-6).flatten(-2), -1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with no negative eigenvalue."""

    def check(self, value):
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return _all(linalg.eigvalsh(value) >= 0, -1)


class _PositiveDefinite(Constraint):
    """Symmetric matrices with a successful Cholesky factorisation."""
    event_dim = 2

    def check(self, value):
        symmetric = _all(((value - value.mT).abs() < 1e-6).flatten(-2), -1)
        return symmetric & (linalg.cholesky_ex(value).info == 0)


class _IndependentConstraint(Constraint):
    """``base_constraint`` over ``reinterpreted_batch_ndims`` more rightmost dims."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        return _reduce(self.base_constraint.check(value), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Cat(Constraint):
    """``cseq[i]`` on the i-th block of ``lengths[i]`` entries along ``dim`` (each 1 by default);
    ``check`` concatenates the blocks' checks along ``dim``."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq, self.dim = list(cseq), dim
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat: {len(self.cseq)} constraints and {len(self.lengths)} lengths")

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        _check_dim(self.dim, value)
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(Constraint):
    """``cseq[i]`` on the i-th slice along ``dim``; ``check`` stacks the slices' checks."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        _check_dim(self.dim, value)
        return _stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


def _check_dim(dim, value):
    if not -value.dim() <= dim < value.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-value.dim()}, {value.dim() - 1}], "
                         f"but got {dim})")


dependent = _Dependent()
dependent_property = _DependentProperty
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
one_hot = _OneHot()
boolean = _Boolean()
real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
positive_definite = _PositiveDefinite()
interval = _Interval
half_open_interval = _HalfOpenInterval
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
integer_interval = _IntegerInterval
multinomial = _Multinomial
independent = _IndependentConstraint
cat = _Cat
stack = _Stack
