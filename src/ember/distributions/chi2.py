"""The chi-squared distribution (https://pytorch.org/docs/stable/distributions.html#chi2),
in its own module as torch's ``torch.distributions.chi2``."""
from numbers import Number

from . import constraints
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["Chi2"]


class Chi2(Gamma):
    """``Chi2(df)``: the sum of ``df`` squared standard normals, Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if isinstance(df, Number):
            df = float(df)
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2
