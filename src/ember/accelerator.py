"""``ember.accelerator``: the current accelerator (none: ember computes on the CPU)."""

__all__ = ["is_available", "current_accelerator", "device_count", "set_device_index",
           "current_device_index"]


def is_available():
    """False: ember has no accelerator (https://pytorch.org/docs/stable/accelerator.html)."""
    return False


def current_accelerator(check_available=False):
    """None: there is no accelerator, so none is current (``check_available`` changes nothing)."""
    return None


def device_count():
    """0: ember sees no accelerator devices."""
    return 0


def set_device_index(device):
    """Raises RuntimeError: there is no accelerator to select (as PyTorch without one)."""
    raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index():
    """Raises RuntimeError: there is no accelerator (as PyTorch without one)."""
    raise RuntimeError("Cannot access accelerator device when none is available.")
