"""``ember.device``: where a tensor's storage lives (PyTorch's ``torch.device``).

ember computes on the CPU with NumPy; ``device("cuda")`` is accepted as a name but tensors can
only be placed on it once the CuPy backend is present (see ``_backend``).
"""

__all__ = ["device", "CPU"]


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


CPU = device("cpu")


def check_device(d):
    """Accepts ``None``, "cpu" or a cpu device; RuntimeError naming the device otherwise."""
    if d is None:
        return CPU
    d = device(d) if not isinstance(d, device) else d
    if d.type != "cpu":
        raise RuntimeError(f"ember was built without support for device '{d}': only the CPU is "
                           "available in this install")
    return d
