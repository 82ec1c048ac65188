"""``ember.cuda``: availability queries that programs ask before choosing a device.

ember computes on the CPU; these answer as PyTorch does on a machine without CUDA."""

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize",
           "empty_cache", "current_device", "set_device"]


def is_available():
    """False: ember computes on the CPU (https://pytorch.org/docs/stable/generated/torch.cuda.is_available.html).
    """
    return False


def device_count():
    """0: there are no CUDA devices to ember."""
    return 0


def manual_seed(seed):
    """No-op without CUDA (as in PyTorch)."""


manual_seed_all = manual_seed


def synchronize(device=None):
    """Nothing to wait for on the CPU."""


def empty_cache():
    """No cache to empty."""


def current_device():
    """Raises AssertionError ("Torch not compiled with CUDA enabled"), as PyTorch built
    without CUDA."""
    raise AssertionError("Torch not compiled with CUDA enabled")


def set_device(device):
    """Raises AssertionError ("Torch not compiled with CUDA enabled"), as PyTorch built
    without CUDA."""
    raise AssertionError("Torch not compiled with CUDA enabled")
