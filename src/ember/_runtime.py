"""Process-wide settings that PyTorch programs set at their start: threads, deterministic
algorithms, float32 matmul precision, the default device, warnings
(https://pytorch.org/docs/stable/torch.html#parallelism, #utilities).

ember runs on the CPU, where its kernels are deterministic and its float32 products are
float32 BLAS products, so ``use_deterministic_algorithms`` and
``set_float32_matmul_precision`` only record what they are told (and ``get_*`` report it);
``set_num_threads`` limits the BLAS threads of the eager products and of compiled code.
"""
import os
import warnings

from . import _backend
from ._device import DEFAULT as _DEFAULT, default_device as _default_device, device as _device
from ._dispatch_state import META as _META

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
           "set_default_device", "get_default_device", "set_warn_always", "is_warn_always_enabled"]

_STATE = {"interop": None, "deterministic": False, "warn_only": False, "precision": "highest",
          "warn_always": False}


def set_num_threads(int):
    """Uses at most ``int`` threads for the BLAS products (eager and compiled).
    RuntimeError unless ``int`` is positive."""
    if int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _backend.set_num_threads(int)


def get_num_threads():
    """The number of threads the products may use (the machine's CPUs until set)."""
    return _backend.get_num_threads() or os.cpu_count()


def set_num_interop_threads(int):
    """Records the number of inter-op threads (ember runs ops one after another); RuntimeError
    unless positive, or when set a second time, as PyTorch's."""
    if int <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _STATE["interop"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _STATE["interop"] = int


def get_num_interop_threads():
    """The inter-op thread count set by ``set_num_interop_threads`` (default: the CPU count)."""
    return _STATE["interop"] or os.cpu_count()


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records the request for deterministic algorithms (every ember kernel is); TypeError
    unless ``mode`` is a bool."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
                        f"not {type(mode).__name__}")
    _STATE["deterministic"], _STATE["warn_only"] = mode, bool(warn_only) and mode


def are_deterministic_algorithms_enabled():
    """Whether ``use_deterministic_algorithms(True)`` is in force."""
    return _STATE["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether deterministic algorithms were requested with ``warn_only=True``."""
    return _STATE["warn_only"]


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode):
    """``"default"``/0, ``"warn"``/1 or ``"error"``/2: the same as
    ``use_deterministic_algorithms(False)``, ``(True, warn_only=True)`` and ``(True)``."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0 (default), 1 (warn) or 2 (error): the deterministic mode as ``set_deterministic_debug_mode`` takes it."""
    if not _STATE["deterministic"]:
        return 0
    return 1 if _STATE["warn_only"] else 2


def set_float32_matmul_precision(precision):
    """Records ``"highest"``, ``"high"`` or ``"medium"`` (ember's float32 products are float32
    on the CPU whatever is asked, as PyTorch's CPU products are); another value warns and
    changes nothing, as PyTorch's."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _STATE["precision"] = precision


def get_float32_matmul_precision():
    """The precision last set by ``set_float32_matmul_precision`` (``"highest"`` by default)."""
    return _STATE["precision"]


def set_default_device(device):
    """The device factories use when given none: ``"cpu"``, ``"meta"`` or None (the CPU);
    RuntimeError naming any other device."""
    if device is not None and _device(device).type not in ("cpu", "meta"):
        raise RuntimeError(f"ember runs on the CPU only; set_default_device({device!r}) is not supported")
    _DEFAULT[0] = None if device is None else _device(device)
    if device is not None and _DEFAULT[0].type == "meta":
        _META[:] = [True]


def get_default_device():
    """The device factories use when given none (``device(type='cpu')`` unless set)."""
    return _default_device()


def set_warn_always(b):
    """Records whether once-only warnings should repeat (``torch.set_warn_always``)."""
    _STATE["warn_always"] = bool(b)


def is_warn_always_enabled():
    """Whether once-only warnings repeat (``set_warn_always``)."""
    return _STATE["warn_always"]
