"""Samplers: the order in which a DataLoader visits dataset indices
(https://pytorch.org/docs/stable/data.html#data-loading-order-and-sampler).

A sampler is an iterable of indices (``Sampler[int]``); :class:`BatchSampler` groups another
sampler's indices into lists. Random samplers draw from an :class:`ember.Generator`; without
one they seed a fresh generator from ember's default generator on each ``iter()``, so
``ember.manual_seed`` makes every epoch's order reproducible. The draws are PyTorch's (same
generator, same transforms, same chunking), so a seed gives PyTorch's order.
"""
import itertools
from typing import Generic, TypeVar

from ... import _distributions, _random
from ..._creation import as_tensor
from ..._dtype import float64
from ..._sampling import multinomial

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (yielding indices or lists of indices) and,
    for ``len(DataLoader)`` to work, ``__len__``."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_generator(generator):
    """``generator``, or a new one seeded from the default generator (PyTorch's rule, so that
    advancing a sampler never disturbs the default stream by more than one draw)."""
    if generator is not None:
        return generator
    return _random.Generator().manual_seed(_distributions.random_seed())


class RandomSampler(Sampler[int]):
    """Indices in random order: a permutation of ``range(len(data_source))`` (repeated for
    ``num_samples`` beyond the length), or ``num_samples`` uniform draws with replacement.

    Indices are drawn lazily, 32 at a time with replacement (one permutation at a time
    without), as PyTorch does: ``num_samples=int(1e10)``, the "infinite loader" idiom, costs
    nothing up front. The generator is seeded when the first index is taken.

    Args:
        data_source (Sized): the dataset.
        replacement (bool): draw with replacement. Default: False.
        num_samples (int, optional): how many indices; default ``len(data_source)``.
        generator (Generator, optional): the random stream.

    Raises TypeError for a non-bool ``replacement`` and ValueError for a non-positive
    ``num_samples``.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _fresh_generator(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _distributions.randint(0, n, (32,), generator).tolist()
            yield from _distributions.randint(0, n, (self.num_samples % 32,), generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _distributions.randperm(n, generator).tolist()
            yield from _distributions.randperm(n, generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in random order (without replacement), drawn from ``generator`` or
    the default generator."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _distributions.randperm(len(self.indices), self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices into ``weights``, index ``i`` drawn with probability
    ``weights[i] / sum(weights)`` (weights need not sum to one).

    Args:
        weights (sequence or Tensor): 1-d non-negative weights, converted to float64.
        num_samples (int): how many indices to draw.
        replacement (bool): draw with replacement. Default: True.
        generator (Generator, optional): the random stream.

    Raises ValueError for a non-positive ``num_samples``, a non-bool ``replacement`` or weights
    that are not 1-d; iterating raises RuntimeError (from :func:`ember.multinomial`) for
    negative weights or too many samples without replacement.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = as_tensor(weights, dtype=float64)
        if weights.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from multinomial(self.weights, self.num_samples, self.replacement,
                               generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Lists of ``batch_size`` indices from ``sampler`` (any iterable of indices); the last list
    is shorter unless ``drop_last`` drops it.

    ``len`` is ``len(sampler) // batch_size`` with ``drop_last``, else the ceiling. Raises
    ValueError for a non-positive or non-int ``batch_size`` or a non-bool ``drop_last``.

    Example::

        >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        # course:begin 07/batch-sampler
        # hint: group the sampler's indices into lists of batch_size; the last one may be short
        # hint: unless drop_last, when it is left out (torch.utils.data.BatchSampler)
        indices = iter(self.sampler)
        if self.drop_last:
            # zip over the same iterator n times takes n items per tuple and stops at a short one
            for batch in zip(*[indices] * self.batch_size):
                yield [*batch]
        else:
            batch = [*itertools.islice(indices, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(indices, self.batch_size)]
        # course:end 07/batch-sampler

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
