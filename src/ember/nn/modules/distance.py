"""``PairwiseDistance`` and ``CosineSimilarity``, the module forms of
:func:`ember.nn.functional.pairwise_distance` and :func:`~ember.nn.functional.cosine_similarity`
(https://pytorch.org/docs/stable/generated/torch.nn.PairwiseDistance.html,
https://pytorch.org/docs/stable/generated/torch.nn.CosineSimilarity.html)."""
from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` over the last dimension.

    Shape: x1 (N, D) or (D); x2 broadcastable to x1; output (N) or () (with ``keepdim``,
    (N, 1) or (1)). RuntimeError naming the sizes when the inputs do not broadcast.
    """
    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``.

    Shape: x1 (*1, D, *2) with D at ``dim``; x2 broadcastable to x1; output (*1, *2).
    """
    __constants__ = ["dim", "eps"]

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
