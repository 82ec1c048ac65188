"""Tensor layouts (https://pytorch.org/docs/stable/tensor_attributes.html#torch-layout): how a
tensor's elements are stored. ember stores ``strided`` (dense) and ``sparse_coo`` tensors; the
other layouts exist as names so that programs can compare with them."""

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]


class layout:
    """A storage layout; printed as PyTorch prints it (``torch.strided``)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):  # pickled by name: one object per layout
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
