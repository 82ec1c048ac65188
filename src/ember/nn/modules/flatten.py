"""``Flatten`` and ``Unflatten`` (https://pytorch.org/docs/stable/generated/torch.nn.Flatten.html)."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dimensions ``start_dim`` to ``end_dim`` into one (a view when possible).

    Shape: input (*, S_start, ..., S_end, *); output (*, prod(S_start..S_end), *). With the
    defaults a batch (N, *) becomes (N, prod(*)).
    """
    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dimension ``dim`` into ``unflattened_size`` (one entry may be -1).

    Shape: input (*, S_dim, *); output (*, U_1, ..., U_n, *) with ``prod(U) = S_dim``.
    TypeError when ``unflattened_size`` is not a tuple or list of ints.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.Unflatten.html
    """
    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(elem).__name__} at pos {idx}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
