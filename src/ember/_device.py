"""``ember.device``: where a tensor's storage lives (PyTorch's ``torch.device``).

A tensor lives on the CPU, or on the ``meta`` device: a shape and dtype without data
(``_backend.meta``), for building a model without memory (``with device("meta"):``).

ember computes on the CPU with NumPy; ``device("cuda")`` is accepted as a name but tensors can
only be placed on it once the CuPy backend is present (see ``_backend``).
"""
from ._dispatch_state import META

__all__ = ["device", "CPU", "META_DEVICE", "default_device", "check_device", "device_type"]


class device:
    """``device("cpu")``, ``device("cuda:0")`` or ``device("cuda", 0)``.

    Raises RuntimeError for an unknown device type, as PyTorch does.
    """
    __slots__ = ("type", "index")
    _TYPES = ("cpu", "cuda", "mps", "meta")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif ":" in type:
            type, _, idx = type.partition(":")
            index = int(idx)
        if type not in self._TYPES:
            raise RuntimeError(f"Expected one of {', '.join(self._TYPES)} device type at start of "
                               f"device string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        """``with device("meta"):`` factories given no device make tensors on this one
        (a model built inside gets meta parameters); ``"cpu"`` restores the CPU inside."""
        if self.type not in ("cpu", "meta"):
            check_device(self)
        DEFAULT.append(self)
        if self.type == "meta":
            META[:] = [True]
        return self

    def __exit__(self, *exc):
        DEFAULT.pop()
        return False


CPU = device("cpu")
META_DEVICE = device("meta")
# The default devices in force, innermost last: ``set_default_device``'s at the bottom, then
# those of the ``with device(...)`` blocks entered.
DEFAULT = [None]


def default_device():
    """The device a factory given none places its tensor on."""
    return DEFAULT[-1] or CPU


def check_device(d):
    """Accepts ``None``, "cpu" or a cpu device; RuntimeError naming the device otherwise."""
    if d is None:
        return CPU
    d = device(d) if not isinstance(d, device) else d
    if d.type != "cpu":
        raise RuntimeError(f"ember was built without support for device '{d}': only the CPU is "
                           "available in this install")
    return d


def device_type(d):
    """The type ("cpu", "meta", ...) of a device given as a string or a :class:`device`."""
    return d.type if isinstance(d, device) else device(d).type
