"""The errors of the distributed package (``torch.distributed.DistError`` and its subclasses),
all RuntimeErrors as in torch: ``except RuntimeError`` in a user's loop catches them.

Source: https://pytorch.org/docs/stable/distributed.html (Exceptions)
"""

__all__ = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """Base of the errors raised by the distributed package (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The communication engine failed: a peer died, or an operation timed out."""


class DistNetworkError(DistError):
    """A network error while setting up communication."""


class DistStoreError(DistError):
    """A key-value store error (ember has no store; kept for torch's import paths)."""
