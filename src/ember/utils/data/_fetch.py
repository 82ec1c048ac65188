"""Fetchers: turn one index (or one list of indices) from the sampler into one collated batch.

The same fetchers run in the main process (``num_workers=0``) and in each worker process.
"""
import numpy as np

from ..._tensor import Tensor
from ._collate import default_collate
from .dataset import Subset, TensorDataset


class MapDatasetFetcher:
    """``collate_fn([dataset[i] for i in index])`` for a map-style dataset (or
    ``dataset.__getitems__(index)`` where the dataset defines it); without automatic batching,
    ``collate_fn(dataset[index])``."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.fast = auto_collation and collate_fn is default_collate

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.fast:
            batch = _tensor_rows(self.dataset, index)
            if batch is not None:
                return batch
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if getitems else [self.dataset[i] for i in index]
        return self.collate_fn(data)


def _tensor_rows(dataset, index):
    """``default_collate([dataset[i] for i in index])`` gathered with one NumPy indexing per
    tensor, when ``dataset`` is a TensorDataset (possibly inside Subsets) whose tensors need no
    gradient; None when that does not apply and the per-sample path must run.

    ``take`` copies the rows into a new C-contiguous array, which is what stacking the
    row views produces; the checks are per call because datasets are mutable.
    """
    while type(dataset).__getitem__ is Subset.__getitem__ and type(dataset).__getitems__ is Subset.__getitems__:
        indices = dataset.indices
        index = [indices[i] for i in index]
        dataset = dataset.dataset
    if type(dataset).__getitem__ is not TensorDataset.__getitem__ or hasattr(dataset, "__getitems__"):
        return None
    tensors = dataset.tensors
    if any(type(t) is not Tensor or t.requires_grad for t in tensors):
        return None
    rows = np.asarray(index)
    if rows.ndim != 1 or rows.dtype.kind not in "iu" or not len(rows):
        return None
    return [Tensor._make(t._data.take(rows, axis=0)) for t in tensors]


class IterableDatasetFetcher:
    """Reads the next ``len(index)`` samples of ``iter(dataset)`` and collates them (the index
    values themselves are placeholders); raises StopIteration when the stream is exhausted, or
    when the last batch is short and ``drop_last`` is set."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = IterableDatasetFetcher if iterable else MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
