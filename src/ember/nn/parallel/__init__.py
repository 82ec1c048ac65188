"""``ember.nn.parallel``: DistributedDataParallel (gradients averaged over MPI ranks) and the
one-device DataParallel (``torch.nn.parallel``)."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
