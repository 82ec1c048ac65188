"""``GradScaler``: dynamic loss scaling for mixed-precision training (``torch.amp.GradScaler``)."""
import math
import warnings

import numpy as np

from .. import _backend, _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Multiplies the loss by a scale S before ``backward``, divides the gradients by S before
    the optimizer's step, skips steps whose gradients hold inf or nan, and adapts S::

        after a skipped step:                 S ← S · backoff_factor
        after growth_interval clean steps:    S ← S · growth_factor   (if still finite)

    Args:
        device (str): "cpu" scales; "cuda" (PyTorch's default) disables the scaler with a
            warning, as PyTorch does without CUDA. Default: "cuda".
        init_scale (float): the first S. Default: 2**16.
        growth_factor (float): must exceed 1. Default: 2.0.
        backoff_factor (float): must lie in (0, 1). Default: 0.5.
        growth_interval (int): clean steps between growths. Default: 2000.
        enabled (bool): False makes every method a pass-through (``scale`` returns its input,
            ``step`` just steps). Default: True.

    Usage per iteration: ``scaler.scale(loss).backward()``, optionally ``scaler.unscale_(opt)``
    (to clip gradients), ``scaler.step(opt)``, ``scaler.update()``.

    Raises:
        RuntimeError: ``unscale_`` twice or after ``step`` before ``update``; ``step`` with a
            closure; loading an empty state dict.
        AssertionError: ``unscale_``/``update`` before any ``scale``; ``step`` on an optimizer
            none of whose parameters has a gradient; ``update`` before any ``step``.
        ValueError: float16 gradients (their reciprocal scale would underflow).

    Source: Micikevicius et al., "Mixed Precision Training" (ICLR 2018);
    https://pytorch.org/docs/stable/amp.html#gradient-scaling
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer = {}

    def _lazy_init(self, like):
        """S and the growth tracker, made on the device of the first tensor scaled (as torch's)."""
        self._scale = Tensor._make(_backend.from_host(np.array(self._init_scale, np.float32), like._data))
        self._growth_tracker = Tensor._make(_backend.from_host(np.array(self._init_growth_tracker, np.int32),
                                                               like._data))

    def _check_scale(self, caller):
        if self._scale is None:
            raise AssertionError(f"Attempted {caller} but _scale is None.  This may indicate your "
                                 "script did not use scaler.scale(loss or outputs) earlier in the iteration.")

    def _optimizer_state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def scale(self, outputs):
        """``outputs`` (a tensor, or lists/tuples of tensors) multiplied by S; unchanged when
        disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs)
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer):
        """Divides the gradients of ``optimizer``'s parameters by S in place and records
        whether any is inf or nan (at most once per ``update``)."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._optimizer_state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # The reciprocal in float64, then float32: PyTorch's rounding of 1/S.
        inv_scale = np.float32(1.0 / float(self._scale._data))
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.dtype is _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad = p.grad._data
                    found_inf |= not _backend.namespace(grad).isfinite(grad).all()
                    grad *= inv_scale
                    p.grad._versions[0] += 1
        state["found_inf"] = found_inf
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` on unscaled gradients, skipped (returning None)
        when they hold inf or nan."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._optimizer_state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None or not any(p.grad is not None for g in optimizer.param_groups
                                                 for p in g["params"]):
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Sets S to ``new_scale`` (a float or a 1-element tensor) or adapts it from the steps
        since the last update; then starts a new iteration."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            value = float(new_scale)
            self._scale._data[...] = value
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale, tracker = self._scale._data, self._growth_tracker._data
            if any(found):
                scale *= np.float32(self._backoff_factor)
                tracker[...] = 0
            else:
                tracker += 1
                if tracker == self._growth_interval:
                    grown = scale * np.float32(self._growth_factor)
                    if math.isfinite(float(grown)):
                        scale[...] = grown
                    tracker[...] = 0
        self._per_optimizer = {}

    def get_scale(self):
        """S as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale._data)

    def get_growth_factor(self):
        """The factor the scale is multiplied by after ``growth_interval`` steps without inf/nan."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Sets the growth factor (``new_factor`` > 1)."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The factor the scale is multiplied by after a step with inf or nan gradients."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Sets the backoff factor (``new_factor`` in (0, 1))."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """The number of consecutive finite steps after which the scale grows."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Sets the growth interval (a positive int)."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker._data)

    def is_enabled(self):
        """Whether the scaler scales (False when made with ``enabled=False``)."""
        return self._enabled

    def state_dict(self):
        """PyTorch's keys: scale, growth_factor, backoff_factor, growth_interval and
        _growth_tracker; empty when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Restores the scale, factors, interval and growth tracker from :meth:`state_dict`'s dict
        (nothing when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._scale is not None:
            self._scale._data[...] = self._init_scale
            self._growth_tracker._data[...] = self._init_growth_tracker
