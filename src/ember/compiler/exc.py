"""The compiler's exceptions, under torch's names (``torch._dynamo.exc``)."""

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend"]


class TorchDynamoException(RuntimeError):
    """Base of the errors ``ember.compile`` raises itself."""


class Unsupported(TorchDynamoException):
    """A graph break under ``fullgraph=True``: the message names the reason and the source line."""


class InvalidBackend(TorchDynamoException):
    """``ember.compile(backend=...)`` with a name no backend answers to."""
