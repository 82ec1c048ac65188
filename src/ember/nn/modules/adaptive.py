"""Adaptive softmax (Grave et al., 2017, "Efficient softmax approximation for GPUs",
https://arxiv.org/abs/1609.04309; https://pytorch.org/docs/stable/generated/torch.nn.AdaptiveLogSoftmaxWithLoss.html).

The classes are split by ``cutoffs`` into a shortlist ``[0, cutoffs[0])`` and clusters
``[cutoffs[i], cutoffs[i + 1])``. A ``head`` layer scores the shortlist classes and one entry
per cluster; each cluster has a ``tail`` projection ``in_features -> in_features // div_value**(i+1)
-> cluster size``. The log-probability of a class in cluster ``i`` is the head's log-probability
of the cluster plus the tail's log-probability of the class within it, so frequent (shortlist)
classes cost one small matrix product and rare ones are computed only for the rows that need them.
"""
from collections import namedtuple

from .. import functional as F
from ..._ops.core import named
from ..._ops.join import cat
from ..._ops.pointwise_binary import where
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over ``n_classes`` classes of ``in_features``-dim inputs.

    ``cutoffs``: increasing, unique integers in ``[1, n_classes - 1]`` (ValueError otherwise);
    ``div_value``: how much narrower each successive cluster's projection is; ``head_bias``: a
    bias in the head layer. Sort the classes by frequency, most frequent first.

    ``forward(input, target)`` with input (N, in_features) and target (N) int64 class indices in
    ``[0, n_classes - 1]`` (or input (in_features) and a 0-dim target) returns
    ``_ASMoutput(output, loss)``: ``output`` (N) the log-probability of each target, ``loss``
    the mean of ``-output``. RuntimeError for mismatched shapes or a target out of range.
    ``log_prob(input)`` gives all (N, n_classes) log-probabilities, ``predict(input)`` their argmax (N).
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None,
                 dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        factory = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // div_value ** (i + 1))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        """Draws every weight afresh as at construction (each Linear's own initialisation)."""
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def _check(self, input, target):
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input.shape}")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input.shape}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.numel() and (target.min().item() < 0 or target.max().item() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")

    def forward(self, input, target):
        self._check(input, target)
        x, t = (input, target) if target.ndim else (input.unsqueeze(0), target.unsqueeze(0))
        cluster = sum(t >= c for c in self.cutoffs[:-1])  # 0: the shortlist, i + 1: cluster i
        column = where(cluster == 0, t, cluster + (self.shortlist_size - 1))  # each target's head entry
        head_logprob = F.log_softmax(self.head(x), dim=1)
        output = head_logprob.gather(1, column.unsqueeze(1)).squeeze(1)
        for i, projection in enumerate(self.tail):  # only the rows whose target is in cluster i
            rows = (cluster == i + 1).nonzero().flatten()
            if rows.numel():
                within = (t.index_select(0, rows) - self.cutoffs[i]).unsqueeze(1)
                logprob = F.log_softmax(projection(x.index_select(0, rows)), dim=1).gather(1, within)
                output = output.index_add(0, rows, logprob.squeeze(1))
        output = named(output, "AddBackward0")  # torch's node: the head's part added to the tails'
        loss = (-output).mean()
        return _ASMoutput(output if target.ndim else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster_logprob = head_logprob[:, self.shortlist_size + i].unsqueeze(1)
            parts.append(F.log_softmax(projection(input), dim=1) + cluster_logprob)
        return cat(parts, 1)

    def log_prob(self, input):
        """The log-probabilities of every class, (N, in_features) -> (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row, (N, in_features) -> (N) int64: the argmax of
        :meth:`log_prob`, with the tails evaluated only for rows whose head prefers a cluster (a
        cluster's classes are never more probable than the cluster itself)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        rows = (output >= self.shortlist_size).nonzero().flatten()
        if not rows.numel():
            return output
        subset = input.index_select(0, rows)
        best = self._full_log_prob(subset, head_output.index_select(0, rows)).argmax(dim=1)
        return output.index_copy(0, rows, best)
