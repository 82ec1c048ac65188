"""``torch.utils.data._utils.worker``: ``get_worker_info`` and ``WorkerInfo`` of
:mod:`ember.utils.data._worker`."""
from .._worker import WorkerInfo, get_worker_info

__all__ = ["WorkerInfo", "get_worker_info"]
