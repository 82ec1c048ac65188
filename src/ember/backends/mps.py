"""Apple's Metal backend: not available in ember."""


def is_available():
    return False


def is_built():
    return False
