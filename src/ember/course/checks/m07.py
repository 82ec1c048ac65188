"""Module 07, data loading: batching indices as torch.utils.data.BatchSampler does."""
import ember
import torch

from . import check, same


@check("07/batch-sampler", points=2)
def batch_sampler():
    for n, size, drop_last in ((10, 3, False), (10, 3, True), (9, 3, False), (9, 3, True), (2, 5, False),
                               (2, 5, True), (0, 4, False), (7, 1, True)):
        got = list(ember.utils.data.BatchSampler(range(n), size, drop_last))
        expected = list(torch.utils.data.BatchSampler(range(n), size, drop_last))
        same(f"BatchSampler(range({n}), batch_size={size}, drop_last={drop_last})", got, expected)
        same(f"len(BatchSampler(range({n}), {size}, {drop_last}))",
             len(ember.utils.data.BatchSampler(range(n), size, drop_last)), len(expected))
    loader = ember.utils.data.DataLoader(ember.utils.data.TensorDataset(ember.arange(10)), batch_size=4)
    same("DataLoader(arange(10), batch_size=4) batches", [b[0].tolist() for b in loader],
         [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]])
