"""Session 25's review: inputs where compiled code gave another result than eager's.

Module attributes read where no user code names them (``compiler/side_effects.py``'s
``names_read``): a read by a name computed at run time (``hasattr(self, name)``, ``getattr``
under another name), by a format string's field (``"{0.scale}".format(self)``) or by a getter
without Python code (``property(operator.attrgetter("_factor"))``) must be guarded, else the
graph replays the old value after the attribute changed.
"""
import operator

import pytest

import ember

nn = ember.nn
_NAMES = ["sc" + "ale"]
_get = getattr  # (the built-in under another name)


class _Property(nn.Module):
    factor = property(operator.attrgetter("_factor"))

    def __init__(self):
        super().__init__()
        self._factor = 2.0

    def forward(self, x):
        return x * self.factor


class _Has(nn.Module):
    def forward(self, x):
        for name in _NAMES:
            if hasattr(self, name):
                x = x * 3
        return x


class _Format(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x):
        return x * float("{0.scale}".format(self))


class _Aliased(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale, self.key = 2.0, _NAMES[0]

    def forward(self, x):
        return x * _get(self, self.key)


class _Stored(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale, self.read = 2.0, operator.attrgetter(_NAMES[0])

    def forward(self, x):
        return x * self.read(self)


@pytest.mark.parametrize("module, name, value", [
    (_Property, "_factor", 5.0), (_Has, "scale", 1), (_Format, "scale", 5.0), (_Aliased, "scale", 5.0),
    (_Stored, "scale", 5.0)], ids=["property-attrgetter", "hasattr", "format", "aliased-getattr", "stored-attrgetter"])
def test_attribute_read_unseen_is_guarded(module, name, value):
    ember.compiler.reset()
    m = module()
    compiled, x = ember.compile(m), ember.ones(3)
    assert compiled(x).tolist() == m(x).tolist()
    setattr(m, name, value)
    assert compiled(x).tolist() == m(x).tolist()
