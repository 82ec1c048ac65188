"""Apple's Metal backend: not available in ember."""


def is_available():
    """False: ember has no Metal (MPS) device (https://pytorch.org/docs/stable/backends.html)."""
    return False


def is_built():
    """False: ember is not built with Metal (MPS) support."""
    return False
