"""The compiler's exceptions, under torch's names (``torch._dynamo.exc``)."""

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend", "UncapturedHigherOrderOpError", "UserError",
           "FailOnRecompileLimitHit"]


class TorchDynamoException(RuntimeError):
    """Base of the errors ``ember.compile`` raises itself."""


class Unsupported(TorchDynamoException):
    """A graph break under ``fullgraph=True``: the message names the reason and the source line."""


class InvalidBackend(TorchDynamoException):
    """``ember.compile(backend=...)`` with a name no backend answers to."""


class UncapturedHigherOrderOpError(TorchDynamoException):
    """A control-flow operator's function breaks its contract (mutates or aliases its inputs,
    changes the metadata of a loop's carry): the message names the offending output."""


class UserError(Unsupported):
    """A call the user must change (``ember.export.export`` given arguments it cannot trace)."""


class FailOnRecompileLimitHit(Exception):
    """A function compiled with ``fullgraph=True`` whose guards failed once more after
    ``recompile_limit`` graphs: it may not fall back to eager. An ``Exception``, not a
    RuntimeError, as torch's (``torch._dynamo.exc.FailOnRecompileLimitHit``)."""
