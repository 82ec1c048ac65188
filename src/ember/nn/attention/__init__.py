"""``torch.nn.attention``: choosing the kernel behind ``F.scaled_dot_product_attention``
(https://pytorch.org/docs/stable/nn.attention.html). ember's attention has one CPU
implementation; :func:`sdpa_kernel` sets the same switches as ``torch.backends.cuda``'s
``enable_*_sdp`` inside its block, so a program that allows only kernels the CPU lacks
(memory-efficient, cuDNN) gets torch's "No viable backend" error, and one that allows
``MATH`` or ``FLASH_ATTENTION`` computes as before.
"""
import contextlib
import enum

from ...backends import cuda

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(int, enum.Enum):
    """The attention kernels torch can choose, by torch's numbers."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCHES = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
             SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, only the kernels in ``backends`` (one :class:`SDPBackend` or a list)
    may run; the switches are restored after. AssertionError, as torch, for anything else.
    ``set_priority`` (the order to try them in) changes nothing on one implementation."""
    assert isinstance(backends, (list, SDPBackend)), \
        f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got {type(backends).__name__}"
    chosen = {int(b) for b in ([backends] if isinstance(backends, SDPBackend) else backends)}
    saved = {name: getattr(cuda, f"{name}_sdp_enabled")() for name in _SWITCHES.values()}
    try:
        for backend, name in _SWITCHES.items():
            getattr(cuda, f"enable_{name}_sdp")(int(backend) in chosen)
        yield
    finally:
        for name, enabled in saved.items():
            getattr(cuda, f"enable_{name}_sdp")(enabled)
