"""``torch._dynamo.exc``: the compiler's exceptions."""
from ..compiler.exc import (FailOnRecompileLimitHit, InvalidBackend, TorchDynamoException,
                            UncapturedHigherOrderOpError, Unsupported, UserError)

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend", "UncapturedHigherOrderOpError", "UserError",
           "FailOnRecompileLimitHit"]
