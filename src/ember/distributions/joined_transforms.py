"""Transforms applied blockwise: :class:`CatTransform` (blocks of given lengths along a dim)
and :class:`StackTransform` (one transform per slice along a dim), re-exported by
:mod:`.transforms` (https://pytorch.org/docs/stable/distributions.html#torch.distributions.transforms.CatTransform)."""
from .._ops.join import cat, stack
from . import constraints
from .independent import _sum_rightmost
from .transform_base import Transform

__all__ = ["CatTransform", "StackTransform"]


def _check(transforms, dim, x, size):
    """AssertionError (PyTorch's class: it asserts) for a ``dim`` outside ``x``'s dims or
    when ``x`` has not ``size`` entries there."""
    if not -x.dim() <= dim < x.dim():
        raise AssertionError(f"dim {dim} out of range for a tensor of {x.dim()} dims")
    if x.shape[dim] != size:
        raise AssertionError(f"expected size {size} along dim {dim} for {len(transforms)} transforms, got {x.shape[dim]}")


class CatTransform(Transform):
    """``CatTransform(tseq, dim=0, lengths=None)``: ``tseq[i]`` on the i-th block of
    ``lengths[i]`` entries (1 by default) along ``dim``; the log-determinant is concatenated
    along ``dim`` where that dim survives in it, else summed. AssertionError (PyTorch's class)
    for a non-Transform in ``tseq``, ``lengths`` not matching it, or an input of the wrong size."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("CatTransform takes a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"CatTransform: {len(self.transforms)} transforms and {len(self.lengths)} lengths")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths,
                                                                        cache_size)

    def _blocks(self, *tensors):
        start = 0
        for transform, length in zip(self.transforms, self.lengths):
            yield (transform,) + tuple(t.narrow(self.dim, start, length) for t in tensors)
            start += length

    def _call(self, x):
        _check(self.transforms, self.dim, x, self.length)
        return cat([t(block) for t, block in self._blocks(x)], self.dim)

    def _inverse(self, y):
        _check(self.transforms, self.dim, y, self.length)
        return cat([t.inv(block) for t, block in self._blocks(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check(self.transforms, self.dim, x, self.length)
        terms = []
        for t, xs, ys in self._blocks(x, y):
            term = t.log_abs_det_jacobian(xs, ys)
            terms.append(_sum_rightmost(term, self.event_dim - t.event_dim) if t.event_dim < self.event_dim else term)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return cat(terms, dim) if dim < 0 else sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``StackTransform(tseq, dim=0)``: ``tseq[i]`` on ``x.select(dim, i)``, the results and
    log-determinants stacked along ``dim``. AssertionError (PyTorch's class) for a non-Transform
    in ``tseq`` or an input of the wrong size."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("StackTransform takes a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = list(tseq), dim

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        _check(self.transforms, self.dim, x, len(self.transforms))
        return stack([t(s) for s, t in zip(self._slices(x), self.transforms)], self.dim)

    def _inverse(self, y):
        _check(self.transforms, self.dim, y, len(self.transforms))
        return stack([t.inv(s) for s, t in zip(self._slices(y), self.transforms)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check(self.transforms, self.dim, x, len(self.transforms))
        return stack([t.log_abs_det_jacobian(a, b)
                      for a, b, t in zip(self._slices(x), self._slices(y), self.transforms)], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
