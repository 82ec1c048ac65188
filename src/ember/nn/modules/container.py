"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict`` (https://pytorch.org/docs/stable/nn.html#containers).

Each keeps its elements as registered submodules or parameters named "0", "1", ... (or by
key), so ``state_dict`` keys read ``layers.0.weight`` as in PyTorch.
"""
import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from ..._tensor import Tensor
from .._typename import typename as _typename
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class Container(Module):
    """Deprecated: a Module holding the keyword arguments as named submodules
    (``Container(a=m)`` registers ``a``); constructing one warns (FutureWarning) as torch does."""

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


def _renumbered(modules):
    return type(modules)((str(i), m) for i, m in enumerate(modules.values()))


def _abs_index(idx, size):
    """``idx`` (any index-like, possibly negative) as a non-negative int; IndexError if out of range."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


class Sequential(Module):
    """Runs its modules in order, feeding each one's output to the next.

    ``Sequential(m0, m1, ...)`` names them "0", "1", ...; ``Sequential(OrderedDict(...))``
    keeps the given names. Indexing with an int gives a module, with a slice a new
    Sequential; ``append``, ``insert``, ``extend``, ``pop``, ``del``, ``+``, ``*`` work as on
    a list. IndexError for an index out of range.

    Example::

        >>> from ember import nn
        >>> nn.Sequential(nn.Linear(3, 4), nn.Identity())
        Sequential(
          (0): Linear(in_features=3, out_features=4, bias=True)
          (1): Identity()
        )
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _key(self, idx):
        return next(islice(self._modules, _abs_index(idx, len(self._modules)), None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key(idx)]
        for key in keys:
            delattr(self, key)
        self._modules = _renumbered(self._modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other):
        combined = self * other
        return self.extend(list(combined)[len(self):])

    def pop(self, key):
        """Removes the module at ``key`` (an index or a slice) and returns it."""
        v = self[key]
        del self[key]
        return v

    def append(self, module):
        """Adds ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Puts ``module`` at position ``index`` (negative counts from the end); returns self.
        AssertionError for a non-Module, IndexError outside ``[-len, len]``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        """Appends each module of ``sequential`` (any iterable of modules); returns self."""
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of submodules, registered so that ``parameters()``, ``to()`` and ``state_dict``
    see them. Indexing, slicing (a new ModuleList), ``append``, ``extend``, ``insert``,
    ``pop``, ``del``, ``+`` and ``+=`` work as on a list; it has no ``forward``. IndexError
    for an index out of range, TypeError when extended with a non-iterable."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self._modules)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_abs_index(idx, len(self._modules))), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(idx, len(self._modules))))
        self._modules = _renumbered(self._modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(chain(self, other))

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def __repr__(self):
        # Runs of identical children print once, as "(2-4): 3 x Linear(...)".
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = [_addindent(f"({s}): {r}" if s == e else f"({s}-{e}): {e - s + 1} x {r}", 2)
                 for s, e, r in blocks]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def insert(self, index, module):
        """Puts ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        """Adds ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Removes the module at index ``key`` and returns it (the later ones move down one)."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        """Appends each module of the iterable ``modules``; returns self. TypeError for a non-iterable."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


def _update_pairs(name, target, pairs):
    """Sets ``target[k] = v`` for each pair, with PyTorch's checks on the pairs' shape."""
    for j, pair in enumerate(pairs):
        if not isinstance(pair, Iterable):
            raise TypeError(f"{name} update sequence element #{j} should be Iterable; is"
                            + type(pair).__name__)
        if len(pair) != 2:
            raise ValueError(f"{name} update sequence element #{j} has length {len(pair)}; 2 is required")
        target[pair[0]] = pair[1]


class ModuleDict(Module):
    """An ordered dict of submodules, registered under their keys. Supports ``[]``, ``del``,
    ``in``, ``len``, iteration over keys, ``keys``/``values``/``items``, ``pop``, ``clear``
    and ``update`` (from a mapping or from (key, module) pairs; TypeError/ValueError for
    malformed pairs)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Removes every module."""
        self._modules.clear()

    def pop(self, key):
        """Removes the module named ``key`` and returns it (KeyError if there is none)."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The names of the modules, in insertion order."""
        return self._modules.keys()

    def items(self):
        """``(name, module)`` pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules):
        """Adds or replaces the modules of ``modules``: a mapping (a plain dict in its order), a
        ModuleDict, or an iterable of ``(name, module)`` pairs. TypeError for anything else."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, "
                            "but got " + type(modules).__name__)
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
        else:
            _update_pairs("ModuleDict", self, modules)


def _describe(key, value, type_text):
    if isinstance(value, Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        size = "x".join(str(s) for s in value.size())
        return f"  ({key}): {kind} containing: [{type_text(value)} of size {size}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of parameters (plain tensors given to it become :class:`Parameter`\\ s; other
    objects are kept as they are). Indexing, slicing, ``append``, ``extend``, ``+=``;
    calling it raises RuntimeError."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx, param):
        idx = _abs_index(idx, len(self))
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        """Adds ``value`` at the end (a tensor becomes a Parameter, as on assignment); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        """Appends each of ``values``; returns self. TypeError for a non-iterable or a single Tensor."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_describe(k, p, lambda t: t.dtype) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters keyed by strings (plain tensors become
    :class:`Parameter`\\ s). The dict methods work (``update`` from a plain dict inserts in
    sorted key order, as PyTorch does); TypeError for a non-string key; calling it raises
    RuntimeError."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key):
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                            "non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key, value):
        attr = self._key_to_attr(key)
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        """A new ParameterDict holding the same parameters (not copies of them)."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        """The parameter at ``key``, first set to ``default`` if there is none."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        """Removes every parameter."""
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        """Removes the parameter at ``key`` and returns it (KeyError if there is none)."""
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        """Removes the last-inserted parameter and returns ``(key, parameter)``."""
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def get(self, key, default=None):
        """The parameter at ``key``, or ``default`` if there is none."""
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with each of ``keys`` set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """``(key, parameter)`` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The parameters, in insertion order."""
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """Adds or replaces entries from ``parameters``: an OrderedDict or ParameterDict (in its
        order), another mapping (in sorted key order, as PyTorch), or ``(key, value)`` pairs.
        TypeError for anything else."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):
                self[key] = value
        else:
            _update_pairs("ParameterDict", self, parameters)

    def __or__(self, other):
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other):
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other):
        self.update(other)
        return self

    def extra_repr(self):
        return "\n".join(_describe(k, p, _typename) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")
