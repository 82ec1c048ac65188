"""``torch.utils.data._utils``'s import paths, which programs import from
(``from torch.utils.data._utils.collate import default_collate``): the names live in
:mod:`ember.utils.data._collate` and :mod:`ember.utils.data._worker`."""
from . import collate, worker

__all__ = ["collate", "worker"]
