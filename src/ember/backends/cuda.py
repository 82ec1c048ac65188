"""``ember.backends.cuda``: the CUDA switches programs set unconditionally.

ember computes on the CPU, so these flags change nothing it computes; they hold the values
PyTorch reports on a machine without CUDA, and programs that set them (nanoGPT sets
``matmul.allow_tf32``) run unchanged. Source: https://pytorch.org/docs/stable/backends.html
"""
import contextlib

__all__ = ["is_built", "matmul", "cufft_plan_cache", "preferred_linalg_library",
           "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
           "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled",
           "enable_cudnn_sdp", "sdp_kernel"]


def is_built():
    """False: ember has no CUDA build."""
    return False


class _Flags:
    """A fixed set of named flags; setting or reading any other name is an AttributeError, as
    on PyTorch's ``backends.cuda.matmul``."""

    def __init__(self, **flags):
        object.__setattr__(self, "_flags", dict(flags))

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(f"Unknown attribute {name}")
        return flags[name]

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError(f"Unknown attribute {name}")
        self._flags[name] = value


matmul = _Flags(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                allow_bf16_reduced_precision_reduction=True)
cufft_plan_cache = _Flags(size=0, max_size=0)

_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def preferred_linalg_library(backend=None):
    """The linear-algebra library choice; ember always uses NumPy/SciPy's LAPACK."""
    return "default"


def flash_sdp_enabled():
    """Whether the flash scaled-dot-product-attention kernel may be chosen (a flag only: ember's
    attention has one kernel; https://pytorch.org/docs/stable/backends.html)."""
    return _SDP["flash"]


def enable_flash_sdp(enabled):
    """Sets the flag :func:`flash_sdp_enabled` reads (``enabled`` taken as a bool)."""
    _SDP["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    """Whether the memory-efficient attention kernel may be chosen (a flag only, as
    :func:`flash_sdp_enabled`)."""
    return _SDP["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    """Sets the flag :func:`mem_efficient_sdp_enabled` reads (``enabled`` taken as a bool)."""
    _SDP["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    """Whether the reference (math) attention kernel may be chosen (a flag only, as
    :func:`flash_sdp_enabled`)."""
    return _SDP["math"]


def enable_math_sdp(enabled):
    """Sets the flag :func:`math_sdp_enabled` reads (``enabled`` taken as a bool)."""
    _SDP["math"] = bool(enabled)


def cudnn_sdp_enabled():
    """Whether the cuDNN attention kernel may be chosen (a flag only, as :func:`flash_sdp_enabled`)."""
    return _SDP["cudnn"]


def enable_cudnn_sdp(enabled):
    """Sets the flag :func:`cudnn_sdp_enabled` reads (``enabled`` taken as a bool)."""
    _SDP["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Sets the four scaled-dot-product-attention switches inside a ``with`` block and restores
    them after (PyTorch's deprecated context manager; ember's attention has one kernel)."""
    saved = dict(_SDP)
    _SDP.update(flash=bool(enable_flash), math=bool(enable_math),
                mem_efficient=bool(enable_mem_efficient), cudnn=bool(enable_cudnn))
    try:
        yield
    finally:
        _SDP.update(saved)
