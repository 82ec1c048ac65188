"""``autocast``: per-op dtype choice inside a region (``torch.autocast``).

Inside ``with autocast("cpu", dtype=bfloat16)`` the ops of :data:`LOWER_PRECISION` (matrix
products, convolutions, attention) cast their floating-point inputs to the autocast dtype,
and the ops of :data:`FLOAT32` (losses, products of many numbers) cast theirs to float32;
float64 inputs are never cast, and every other op runs in the dtypes it is given. The casts
are ordinary recorded ops, so gradients flow back to float32 parameters in float32.

The state is per thread, as torch's: a region in one thread changes neither another thread's
ops nor what :func:`is_autocast_enabled` tells it, and a new thread starts with autocast off.
The dispatcher calls :func:`autocast_inputs` (through ``_ops.core.INPUT_CASTS``) while some
thread is inside an enabled CPU region (one list check per op when none is), and it casts in
the threads whose ``AUTOCAST.dtype`` is set; backward runs without it. CUDA autocast is accepted
and disabled with PyTorch's warning, as on a PyTorch install without CUDA.

Source: https://pytorch.org/docs/stable/amp.html (CPU ops that can autocast to bfloat16 /
to float32), checked against torch 2.13's CPU results.
"""
import functools
import threading
import warnings

from .. import _dtype
from .._dispatch_state import AUTOCAST
from .._ops.core import INPUT_CASTS

__all__ = ["autocast", "autocast_inputs", "is_autocast_available", "is_autocast_enabled",
           "get_autocast_dtype", "custom_fwd", "custom_bwd", "AUTOCAST"]

# Op entry names, as in ember._ops: matrix products run in the lower-precision dtype...
LOWER_PRECISION = frozenset({"Matmul", "Addmm", "Conv", "ConvTranspose", "Einsum", "AttentionWeights"})
# ...and ops whose accuracy needs float32's precision or range run in float32.
FLOAT32 = frozenset({"CrossEntropy", "NllLoss", "BinaryCrossEntropy", "MseLoss", "Prod"})



class _DeviceState(threading.local):
    """This thread's ``[enabled, dtype]`` per device type (a new thread starts with autocast off
    and the default dtypes, as torch's)."""

    def __init__(self):
        self.devices = {"cpu": [False, _dtype.bfloat16], "cuda": [False, _dtype.float16]}


_STATE = _DeviceState()
# How many threads have ``AUTOCAST.dtype`` set by a region: ``INPUT_CASTS`` is on while any has.
_REGIONS = [0]
_LOCK = threading.Lock()
_CPU_DTYPES = (_dtype.bfloat16, _dtype.float16)


def is_autocast_available(device_type):
    """True for "cpu", the device ember autocasts on."""
    return device_type == "cpu"


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for ``device_type`` (PyTorch's default asks about "cuda")."""
    state = _STATE.devices.get(device_type)
    return state[0] if state else False


def get_autocast_dtype(device_type):
    """The dtype autocast uses on ``device_type``: bfloat16 on "cpu" unless set otherwise."""
    return _STATE.devices[device_type][1]


def autocast_inputs(op, inputs):
    """``inputs`` as the op entry ``op`` receives them inside an autocast region:
    eligible (float16, bfloat16, float32) tensors cast to its dtype or to float32."""
    name = op.name
    target = AUTOCAST.dtype if name in LOWER_PRECISION else _dtype.float32 if name in FLOAT32 else None
    if target is None or AUTOCAST.dtype is None:  # (or this thread is outside autocast, or in a backward)
        return inputs
    return tuple(x.to(target) if getattr(x, "dtype", None) in _ELIGIBLE and x.dtype is not target else x
                 for x in inputs)


_ELIGIBLE = (_dtype.float16, _dtype.bfloat16, _dtype.float32)


def _set_active(dtype):
    """Set this thread's CPU autocast dtype (None: off), turning the dispatcher's cast on when
    the first thread enters a region and off when the last leaves."""
    was = AUTOCAST.dtype is not None
    AUTOCAST.dtype = dtype
    if was != (dtype is not None):
        with _LOCK:
            _REGIONS[0] += 1 if dtype is not None else -1
            INPUT_CASTS[:] = [autocast_inputs] if _REGIONS[0] > 0 else []


class autocast:
    """Context manager and decorator enabling mixed precision on ``device_type``.

    Args:
        device_type (str): "cpu" (or "cuda", which is disabled with a warning: no CUDA).
        dtype (ember.dtype, optional): the lower-precision dtype; bfloat16 or float16 on the
            CPU. Default: :func:`get_autocast_dtype` of the device (bfloat16 on the CPU).
        enabled (bool): False makes the region a no-op (nesting ``enabled=False`` inside an
            enabled region turns autocast off there). Default: True.
        cache_enabled (bool, optional): accepted for compatibility; ember caches no casts.

    Raises:
        ValueError: ``device_type`` is not a str.
        RuntimeError: ``device_type`` is not a device ember knows.

    Example::

        >>> import ember
        >>> a = ember.ones(2, 2)
        >>> with ember.amp.autocast("cpu", dtype=ember.bfloat16):
        ...     ember.mm(a, a).dtype   # doctest: +SKIP
        ember.bfloat16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _STATE.devices:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                          stacklevel=2)
            self._enabled = False
        if self._enabled and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.",
                          stacklevel=2)
            self._enabled = False

    def __enter__(self):
        state = _STATE.devices[self.device]
        self._saved = (tuple(state), AUTOCAST.dtype)
        state[0] = self._enabled
        if self._enabled:
            state[1] = self.fast_dtype
        if self.device == "cpu":
            _set_active(self.fast_dtype if self._enabled else None)
        return self

    def __exit__(self, *exc):
        state, active = self._saved
        _STATE.devices[self.device][:] = state
        if self.device == "cpu":
            _set_active(active)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return func(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom ``Function.forward``: with ``cast_inputs`` set and autocast on,
    the forward runs with autocast off on inputs cast to ``cast_inputs``; otherwise as is."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        if cast_inputs is None or not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        cast = [a.to(cast_inputs) if getattr(a, "dtype", None) in _ELIGIBLE else a for a in args]
        with autocast(device_type, enabled=False):
            return fwd(*cast, **kwargs)
    return forward


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom ``Function.backward`` (ember's backward runs outside autocast,
    so the forward's dtypes already hold)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
