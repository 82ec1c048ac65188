"""``torch.utils.dlpack``: ``from_dlpack`` and ``to_dlpack`` (the exchange lives in ``ember._dlpack``)."""
from .._dlpack import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
