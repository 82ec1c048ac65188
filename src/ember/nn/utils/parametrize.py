"""Parametrizations: a module's tensor recomputed from an underlying ``original`` on every access
(``torch.nn.utils.parametrize``, https://pytorch.org/tutorials/intermediate/parametrizations.html).

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (state_dict key
``parametrizations.weight.original``; P's own parameters and buffers under
``parametrizations.weight.0.*``) and gives the module a class ``Parametrized<Name>`` whose
``weight`` property returns ``P(original)``. Several parametrizations on one tensor chain in
order. When P has ``right_inverse``, ``original`` starts as ``right_inverse(weight)`` and
assigning ``module.weight = X`` stores ``right_inverse(X)``. Inside :func:`cached` each
parametrized tensor is computed once.

Example::

    >>> from ember import nn
    >>> class Symmetric(nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).mT
    >>> m = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((m.weight == m.weight.T).all()), type(m).__name__
    (True, 'ParametrizedLinear')
"""
import contextlib

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "ParametrizationList", "transfer_parametrizations_and_params"]

_CACHE = {"enabled": 0, "values": {}}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, on first access."""
    _CACHE["enabled"] += 1
    try:
        yield
    finally:
        _CACHE["enabled"] -= 1
        if not _CACHE["enabled"]:
            _CACHE["values"] = {}


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to ``original`` (the tensor stored
    in ``right_inverse`` form). ``right_inverse`` of a parametrization may return a tuple, which
    is stored as ``original0``, ``original1``, ... and passed to its forward unpacked."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        values = [new] if self.is_tensor else list(new)
        if self.is_tensor:
            if not unsafe:
                _check_same(new, original, "right_inverse")
            if tuple(new.shape) == tuple(original.shape) and new.dtype == original.dtype:
                with no_grad():
                    original.copy_(new)
                values = [original]
        else:
            self.ntensors = len(values)
        names = ["original"] if self.is_tensor else [f"original{i}" for i in range(len(values))]
        for name, value in zip(names, values):
            # a parameter stays a parameter (the same object when possible), a buffer a buffer
            if isinstance(original, Parameter):
                value = value if isinstance(value, Parameter) else Parameter(
                    value.detach().clone(), original.requires_grad)
                self.register_parameter(name, value)
            else:
                self.register_buffer(name, value.detach().clone() if value is not original else value)

    def right_inverse(self, value):
        """Stores ``value`` as the parametrized tensor: runs the right inverses in reverse and
        writes the result into ``original`` (no gradient recorded)."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                elif not self.unsafe:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, part in enumerate(value):
                    getattr(self, f"original{i}").copy_(part)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _check_same(new, original, what):
    if new.dtype != original.dtype or tuple(new.shape) != tuple(original.shape):
        raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype "
                         f"or shape.\noriginal.dtype: {original.dtype}\n{what}(original).dtype: "
                         f"{new.dtype}\noriginal.shape: {tuple(original.shape)}\n{what}(original)"
                         f".shape: {tuple(new.shape)}")


def _parametrized_class(module):
    """The module's class wrapped once in ``Parametrized<Name>``, which holds the properties."""
    cls = type(module)
    if getattr(cls, "_is_parametrized_class", False):
        return cls
    new = type(f"Parametrized{cls.__name__}", (cls,), {"_is_parametrized_class": True,
                                                       "_original_class": cls})
    module.__class__ = new
    return new


def _add_property(cls, name):
    def get(self):
        if _CACHE["enabled"]:
            key = (id(self), name)
            if key not in _CACHE["values"]:
                _CACHE["values"][key] = self.parametrizations[name]()
            return _CACHE["values"][key]
        return self.parametrizations[name]()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    setattr(cls, name, property(get, set_))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrizes ``module.<tensor_name>`` (a parameter or buffer) by the Module
    ``parametrization``; returns the module. A second call on the same name appends to its
    chain. ``unsafe=True`` skips the checks that the parametrization keeps shape and dtype."""
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            out = parametrization(current)
            _check_same(out, current, "parametrization")
        chain.append(parametrization)
        return module
    original = getattr(module, tensor_name)
    if tensor_name in module._parameters:
        del module._parameters[tensor_name]
    elif tensor_name in module._buffers:
        del module._buffers[tensor_name]
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    chain = ParametrizationList([parametrization], original, unsafe=unsafe)
    if not unsafe:
        out = chain()
        _check_same(out, original, "parametrization")
    if not hasattr(module, "parametrizations"):
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = chain
    _add_property(_parametrized_class(module), tensor_name)
    return module


def is_parametrized(module, tensor_name=None):
    """True when ``module`` has a parametrization (on ``tensor_name`` if given)."""
    parametrizations = module._modules.get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module):
    """The module's class before any parametrization was registered."""
    return type(module)._original_class if is_parametrized(module) else type(module)


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undoes :func:`register_parametrization` on ``tensor_name``: the tensor becomes a plain
    parameter again, holding the current parametrized value (``leave_parametrized``) or the
    ``original``. ValueError when it is not parametrized."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            with no_grad():
                if tuple(value.shape) == tuple(original.shape) and value.dtype == original.dtype:
                    original.copy_(value)
                else:
                    original = Parameter(value.detach().clone(), original.requires_grad)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        original = Parameter(value.detach().clone(), value.requires_grad)
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = type(module)._original_class
    return module


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Registers on ``to_module`` the parametrizations of ``from_module`` (all, or those of
    ``tensor_name``), sharing the parametrization objects and the ``original`` (or
    ``original0``, ``original1``, ...) Parameters; a tensor ``to_module`` lacks is first made a
    Parameter from ``from_module``'s parametrized value. Nothing happens when ``from_module`` is
    not parametrized. Returns ``to_module``.

    Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.parametrize.transfer_parametrizations_and_params.html
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            index = 0
            while hasattr(source, f"original{index}"):
                setattr(target, f"original{index}", getattr(source, f"original{index}"))
                index += 1
    return to_module
