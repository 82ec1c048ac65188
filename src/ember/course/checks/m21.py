"""Module 21, distributed data parallel: how DistributedSampler shares a dataset among ranks
(padding or dropping to an even split), against torch's sampler with the same options."""
import torch

import ember

from . import check, same


@check("21/distributed-sampler", points=3)
def distributed_sampler():
    for n, replicas in ((10, 3), (11, 4), (2, 4), (12, 3), (7, 1)):
        for drop_last in (False, True):
            for shuffle in (False, True):
                for rank in range(replicas):
                    kw = dict(num_replicas=replicas, rank=rank, shuffle=shuffle, seed=5, drop_last=drop_last)
                    got = list(ember.utils.data.DistributedSampler(range(n), **kw))
                    expected = list(torch.utils.data.DistributedSampler(range(n), **kw))
                    if shuffle:  # the shuffled order follows the random streams: compare the shares
                        got, expected = sorted(got), sorted(expected)
                    same(f"DistributedSampler(range({n}), {kw})", got, expected)
