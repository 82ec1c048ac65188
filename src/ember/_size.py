"""``ember.Size``: the tuple subclass that ``tensor.shape`` returns (``torch.Size``), and the
reading of sizes given as ints or one sequence (``zeros(2, 3)``, ``x.view((2, 3))``) with the
TypeErrors of torch's parser for what is no int."""
import operator

from ._dtype import PRINTED_MODULE, bool as _bool

__all__ = ["Size", "sizes_arg", "type_name"]


class Size(tuple):
    """A tuple of dimension lengths that prints as PyTorch's: ``torch.Size([2, 3])``."""

    def __repr__(self):
        return f"{PRINTED_MODULE}.Size({list(self)})"

    def numel(self):
        """The number of elements of a tensor of this size: the product of the sizes (1 for ())."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


def type_name(x):
    """A type as torch's messages name it: the C type's name, dotted for NumPy's (``numpy.float64``)."""
    return f"numpy.{type(x).__name__}" if type(x).__module__ == "numpy" else type(x).__name__


def _index(x, bools, symbolic=True):
    """``x`` as an int when torch's parser takes it as one (an int, a NumPy int, an integer
    tensor of one element; a bool only where ``bools``), else None. ``symbolic`` (torch's
    ``SymInt[]``, sizes): RuntimeError, in torch's words, for a bool tensor of one element."""
    if type(x) is int:
        return x
    if not bools and type(x).__name__ in ("bool", "bool_"):
        return None
    try:
        value = operator.index(x)
    except TypeError as error:
        if type(error) is not TypeError:  # (a symbolic size's own error)
            raise
        return None
    if symbolic and getattr(x, "dtype", None) is _bool:
        raise RuntimeError("Expected scalar.isIntegral( false) to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")
    return value


def sizes_arg(sizes, name, arg="size", position=1, sequence=False, symbolic=True):
    """The ints of ``sizes``, the positional arguments of ``name(*sizes)`` (``zeros(2, 3)``,
    ``view((2, 3))``, ``reshape([6])``), as torch's parser reads its ``tuple of ints`` argument
    ``arg`` (at ``position``): ints, NumPy ints and one-element integer tensors (a bool after the
    first); TypeError in torch's words for a float, a bool first, None, a string, a float or
    many-element tensor, an array (torch checks the first size's type, then unpacks the rest).
    ``sequence``: ``sizes`` holds one argument that is no ``*sizes`` (``full(size, ...)``,
    ``randint(high, size)``), which must be a tuple or list (``full(2, 1.0)`` is torch's TypeError).
    ``symbolic``: sizes (torch's ``SymInt[]``, where a bool tensor is its RuntimeError), else dims
    (``int[]``: a bool tensor after the first reads as 0 or 1)."""
    one = len(sizes) == 1
    if one and sequence and not isinstance(sizes[0], (tuple, list)):
        where = f" (position {position})" if position else ""
        raise TypeError(f"{name}(): argument '{arg}'{where} must be tuple of ints, not {type_name(sizes[0])}")
    if one and not isinstance(sizes[0], (tuple, list)):
        value = _index(sizes[0], bools=False, symbolic=symbolic)
        if value is None:
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple of ints, "
                            f"not {type_name(sizes[0])}")
        return (value,)
    values = []
    for k, x in enumerate(sizes[0] if one else sizes):
        value = _index(x, bools=k > 0, symbolic=symbolic)
        if value is None:
            if k > 0:
                raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {k + 1} with "
                                f"error \"type must be tuple of ints,but got {type_name(x)}\"")
            if not one:
                raise TypeError(f"{name}() takes 1 positional argument but {len(sizes)} were given")
            if position is None:  # (given by name)
                raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not {type_name(sizes[0])}")
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple of ints, but found "
                            f"element of type {type_name(x)} at pos 0")
        values.append(value)
    return tuple(values)
