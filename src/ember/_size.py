"""``ember.Size``: the tuple subclass that ``tensor.shape`` returns (``torch.Size``)."""
from ._dtype import PRINTED_MODULE

__all__ = ["Size"]


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
