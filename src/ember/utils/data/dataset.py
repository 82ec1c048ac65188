"""Datasets (``torch.utils.data`` datasets, https://pytorch.org/docs/stable/data.html#dataset-types).

A map-style :class:`Dataset` answers ``dataset[i]`` and usually ``len(dataset)``; an
:class:`IterableDataset` is a stream read with ``iter(dataset)``. The wrappers here combine
datasets without copying samples: :class:`TensorDataset` (rows of tensors), :class:`Subset`,
:class:`ConcatDataset`, :class:`ChainDataset`, :class:`StackDataset` and :func:`random_split`.
"""
import bisect
import itertools
import math
import warnings
from typing import Generic, TypeVar

from ... import _random
from ..._sampling import randperm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.

    ``dataset + other`` is a :class:`ConcatDataset`. A subclass may also define
    ``__getitems__(indices) -> list of samples`` to fetch a whole batch at once; the DataLoader
    then calls it instead of ``__getitem__`` once per index.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: subclasses define ``__iter__``.

    With ``num_workers > 0`` each worker process iterates its own copy of the dataset; use
    :func:`ember.utils.data.get_worker_info` inside ``__iter__`` to give each worker a distinct
    shard, or every sample arrives once per worker. ``dataset + other`` is a :class:`ChainDataset`.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``.

    Args:
        *tensors (Tensor): tensors with the same size of the first dimension (N, ...).

    Raises AssertionError("Size mismatch between tensors") when first dimensions differ (as
    PyTorch does). With the default collate function the DataLoader gathers a whole batch of
    rows with one indexing operation per tensor instead of one per sample; the batches are the
    same.
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Zips datasets of equal length: sample ``i`` is ``(d[i] for d in args)`` as a tuple, or
    ``{k: d[i]}`` as a dict when the datasets are given as keywords.

    Raises ValueError when both or neither of ``args`` and ``kwargs`` are given, or when the
    lengths differ ("Size mismatch between datasets").
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) "
                             "like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = args or list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        def column(d):
            getitems = getattr(d, "__getitems__", None)
            rows = getitems(indices) if callable(getitems) else [d[i] for i in indices]
            if len(rows) != len(indices):
                raise ValueError("Nested dataset's output size mismatch. "
                                 f"Expected {len(indices)}, got {len(rows)}")
            return rows
        if isinstance(self.datasets, dict):
            columns = {k: column(d) for k, d in self.datasets.items()}
            return [{k: rows[n] for k, rows in columns.items()} for n in range(len(indices))]
        columns = [column(d) for d in self.datasets]
        return [tuple(rows[n] for rows in columns) for n in range(len(indices))]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The datasets one after another: index ``i`` falls into the dataset whose cumulative size
    first exceeds it. Negative indices count from the end.

    Raises AssertionError for an empty list or an :class:`IterableDataset` part, and ValueError
    for a negative index beyond the length.
    """

    @staticmethod
    def cumsum(sequence):
        """The running totals of the lengths of ``sequence``'s datasets: where each one ends."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        part = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[part][idx - (self.cumulative_sizes[part - 1] if part else 0)]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (an iterable :class:`ConcatDataset`).

    Raises AssertionError while iterating or taking ``len`` if a part is not an IterableDataset.
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices`` (a sequence of ints), in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=_random.default_generator):
    """Splits ``dataset`` into non-overlapping :class:`Subset` s of the given lengths, drawn by a
    random permutation from ``generator``.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1: each split
    gets ``floor(len * fraction)`` items and the remainder is dealt one at a time, round-robin,
    from the first split (PyTorch's rule). Raises ValueError for a fraction outside [0, 1] or
    counts whose sum is not the dataset length; warns for an empty split.

    Source: https://pytorch.org/docs/stable/data.html#torch.utils.data.random_split
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(len(dataset) * frac)))
        for i in range(len(dataset) - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths)]
