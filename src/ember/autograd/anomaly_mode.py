"""``detect_anomaly`` / ``set_detect_anomaly``: backward raises RuntimeError naming the node
whose gradient contains NaN."""
from .grad_mode import STATE

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "set_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class detect_anomaly:
    """Context manager (and decorator) that turns on NaN checks in backward."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = STATE.anomaly
        STATE.anomaly = self.check_nan
        return self

    def __exit__(self, *exc):
        STATE.anomaly = self.prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly(detect_anomaly):
    """``set_detect_anomaly(mode)``: on or off, also as a plain call."""

    def __init__(self, mode, check_nan=True):
        super().__init__(bool(mode) and check_nan)
        self.prev = STATE.anomaly
        STATE.anomaly = self.check_nan

    def __enter__(self):
        return self


def is_anomaly_enabled():
    """Whether anomaly detection is on (:class:`detect_anomaly`, :func:`set_detect_anomaly`):
    backward then names the forward op whose gradient was nan
    (https://pytorch.org/docs/stable/autograd.html#anomaly-detection)."""
    return STATE.anomaly


def set_anomaly_enabled(enabled, check_nan=True):
    """``torch.set_anomaly_enabled``: NaN checks in backward on or off."""
    STATE.anomaly = bool(enabled) and check_nan


def is_anomaly_check_nan_enabled():
    """Whether anomaly mode checks gradients for nan: on whenever anomaly detection is on."""
    return bool(STATE.anomaly)
