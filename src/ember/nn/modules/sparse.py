"""Lookup tables: ``Embedding`` and ``EmbeddingBag``
(https://pytorch.org/docs/stable/nn.html#sparse-layers)."""
from ..._creation import empty
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..functional.sparse import _padding_row
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _table(module, num_embeddings, embedding_dim, _weight, requires_grad, device, dtype):
    """Sets ``module.weight``: ``_weight`` as given, or drawn from N(0, 1) with the padding
    row zeroed; AssertionError when ``_weight`` has another shape."""
    if _weight is None:
        module.weight = Parameter(empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                                  requires_grad=requires_grad)
        module.reset_parameters()
    else:
        if list(_weight.shape) != [num_embeddings, embedding_dim]:
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        module.weight = Parameter(_weight, requires_grad=requires_grad)


class _Table(Module):
    def reset_parameters(self):
        """Draws the weight from N(0, 1) and zeroes the ``padding_idx`` row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)


class Embedding(_Table):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``.

    Args:
        num_embeddings, embedding_dim: the table's shape.
        padding_idx: a row (negative values count from the end) that starts at zero and gets
            no gradient, so it stays a fixed "padding" vector.
        max_norm, norm_type: rows looked up with a ``norm_type``-norm above ``max_norm`` are
            rescaled in place to norm ``max_norm`` first.
        scale_grad_by_freq: divide each row's gradient by its id's count in the mini-batch.
        sparse: accepted for compatibility; gradients are dense.
        _weight, _freeze: an initial (num_embeddings, embedding_dim) weight, and whether it
            gets no gradient (see :meth:`from_pretrained`).

    Shape: input (*) of int64/int32 ids; output (*, embedding_dim).

    Attributes: ``weight`` (num_embeddings, embedding_dim) from N(0, 1).

    Raises AssertionError for a ``padding_idx`` outside the table or a ``_weight`` of the
    wrong shape; the forward raises as :func:`ember.nn.functional.embedding`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.Embedding.html

    Example::

        >>> import ember
        >>> table = ember.nn.Embedding(10, 3, padding_idx=0)
        >>> table(ember.tensor([[1, 2, 0], [4, 3, 9]])).shape
        ember.Size([2, 3, 3])
    """
    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_row(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        _table(self, num_embeddings, embedding_dim, _weight, not _freeze, device, dtype)
        self.sparse = sparse

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (num_embeddings, embedding_dim), shared
        not copied, and frozen (no gradient) unless ``freeze=False``. The padding row is
        left as given. AssertionError unless ``embeddings`` is 2-D."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                   sparse=sparse)


class EmbeddingBag(_Table):
    """Sums, means or maxima of bags of embeddings, one (embedding_dim) vector per bag.

    Args:
        num_embeddings, embedding_dim, max_norm, norm_type, scale_grad_by_freq, sparse,
            _weight: as for :class:`Embedding`.
        mode: ``"sum"``, ``"mean"`` (default) or ``"max"``.
        include_last_offset: ``offsets`` has one more entry, the end of the last bag.
        padding_idx: a row left out of every bag (and of a mean's count), zero at start.

    Shape: input (B, n) of bags of n ids, or 1-D ids with ``offsets`` (B) (B + 1 with
    ``include_last_offset``); per_sample_weights as the input (``mode="sum"`` only);
    output (B, embedding_dim).

    Raises as :func:`ember.nn.functional.embedding_bag`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.EmbeddingBag.html
    """
    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq",
                     "mode", "sparse", "include_last_offset", "padding_idx"]

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_row(padding_idx, num_embeddings, "padding_idx")
        _table(self, num_embeddings, embedding_dim, _weight, True, device, dtype)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                               self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is ``embeddings`` (2-D, shared not copied), frozen
        unless ``freeze=False``. AssertionError unless ``embeddings`` is 2-D."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, _weight=embeddings, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
