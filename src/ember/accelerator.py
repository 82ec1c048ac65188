"""``ember.accelerator``: the current accelerator (none: ember computes on the CPU)."""

__all__ = ["is_available", "current_accelerator", "device_count"]


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
