"""``ember.cuda``: availability queries that programs ask before choosing a device.

ember computes on the CPU; these answer as PyTorch does on a machine without CUDA."""

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize",
           "empty_cache", "current_device", "set_device"]


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """No-op without CUDA (as in PyTorch)."""


manual_seed_all = manual_seed


def synchronize(device=None):
    """Nothing to wait for on the CPU."""


def empty_cache():
    """No cache to empty."""


def current_device():
    raise AssertionError("Torch not compiled with CUDA enabled")


def set_device(device):
    raise AssertionError("Torch not compiled with CUDA enabled")
