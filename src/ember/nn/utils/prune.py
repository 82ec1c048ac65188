"""Pruning: zero out parameter entries through a mask (``torch.nn.utils.prune``,
https://pytorch.org/docs/stable/nn.html#module-torch.nn.utils.prune, and
https://pytorch.org/tutorials/intermediate/pruning_tutorial.html).

Pruning parameter ``name`` of a module reparametrises it: the original values move to the
parameter ``name + "_orig"``, a buffer ``name + "_mask"`` (0 = pruned, 1 = kept, the
parameter's dtype) joins the state_dict, and ``name`` becomes a plain attribute
``name_orig * name_mask`` recomputed by a forward pre-hook (the pruning method itself) before
every forward, so gradients reach ``name_orig`` only through kept entries. Pruning the same
parameter again combines the methods in a :class:`PruningContainer`: the new method only sees
the entries (unstructured) or channels (structured) that are still unpruned. :func:`remove`
makes the pruning permanent: ``name`` is a Parameter again, holding the masked values.

``amount`` is a number of entries/channels (int >= 0) or a fraction in [0, 1] (float,
rounded to the nearest count); ValueError outside those ranges or above the tensor's size,
TypeError for another type.

Example::

    >>> from ember import nn
    >>> from ember.nn.utils import prune
    >>> m = prune.l1_unstructured(nn.Linear(4, 3), "weight", amount=0.5)
    >>> list(m.state_dict()), int((m.weight_mask == 0).sum())
    (['bias', 'weight_orig', 'weight_mask'], 6)
    >>> list(prune.remove(m, "weight").state_dict())
    ['bias', 'weight']
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._creation import ones_like, zeros_like
from ..._sampling import rand, rand_like
from ..._linalg_legacy import norm
from ..._ops.sort import kthvalue, topk
from ...autograd.grad_mode import no_grad
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured",
           "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way to compute a mask; also the forward pre-hook that re-applies it.

    Subclasses set ``PRUNING_TYPE`` ("unstructured", "structured" with a ``dim`` attribute,
    or "global") and define ``compute_mask(t, default_mask)``, which returns a new mask for
    ``t`` that keeps every zero of ``default_mask``.
    """
    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for tensor ``t`` (same shape), given the mask already in place."""

    def apply_mask(self, module):
        """``name_orig * name_mask`` of ``module``, in the parameter's dtype."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes ``getattr(module, name)`` with ``cls(*args, **kwargs)``, reparametrising it
        on the first pruning and composing with earlier methods otherwise (see the module
        docstring). ``importance_scores`` (same shape as the parameter; default the parameter's
        current value) decide which entries go. Returns the method (or container) now
        registered as the hook. AssertionError when ``importance_scores`` has another shape;
        a failing mask computation leaves the module as it was."""
        old_method, old_hooks = None, []
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                old_hooks.append(k)
        if len(old_hooks) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                                 f"module {module}. Use a PruningContainer.")
        for k in old_hooks:
            del module._forward_pre_hooks[k]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method = old_method
        elif old_method is not None:
            method = PruningContainer(old_method, method)

        orig = getattr(module, name)
        if importance_scores is not None and importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                 f"{module}: got {list(importance_scores.shape)}, expected "
                                 f"{list(orig.shape)}")
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores if importance_scores is not None else orig,
                                       default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes from ``importance_scores`` (default ``t``),
        starting from ``default_mask`` (default all ones)."""
        if importance_scores is not None and importance_scores.shape != t.shape:
            raise AssertionError("importance_scores should have the same shape as tensor t")
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores if importance_scores is not None else t,
                                     default_mask=default_mask)

    def remove(self, module):
        """Makes the pruning of ``module`` permanent: ``name`` becomes a Parameter holding
        ``name_orig * name_mask``; ``name_orig``, ``name_mask`` are deleted."""
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied in turn to one parameter. Its mask is the last method's
    mask computed on what the earlier ones left: the still-unpruned entries for an
    unstructured method, the channels along ``dim`` that still have an unpruned entry for a
    structured one, the whole tensor for a global one."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Appends ``method``; TypeError for a non-pruning-method, ValueError when it acts on
        another parameter name."""
        if method is None:
            return
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if self._tensor_name is None:
            self._tensor_name = method._tensor_name
        elif self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            index = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the "
                                     "attribute `dim` defined.")
            dim = method.dim + t.dim() if method.dim < 0 else method.dim
            if not 0 <= dim < t.dim():
                raise IndexError(f"Index is out of bounds for tensor of dimension {t.dim()}")
            other = [d for d in range(t.dim()) if d != dim]
            kept = default_mask.sum(dim=other) != 0 if other else default_mask != 0
            index = tuple(kept if d == dim else slice(None) for d in range(t.dim()))
        elif kind == "global":
            index = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[index], default_mask=default_mask[index])
        mask[index] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: applies the reparametrisation with an all-ones mask."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


def _validate_amount_init(amount):
    if not isinstance(amount, numbers.Real) or isinstance(amount, bool):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _count(amount, size):
    """How many of ``size`` entries or channels ``amount`` prunes; ValueError when an integer
    amount exceeds ``size``."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                             f"prune={size}")
        return int(amount)
    return round(amount * size)


def _validate_structured(t):
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found "
                         f"tensor of shape {tuple(t.shape)} with {t.dim()} dims")


def _channel_mask(t, dim, channels):
    """Ones in the slices of ``t`` along ``dim`` picked by ``channels`` (indices or booleans)."""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim else slice(None) for d in range(t.dim()))] = 1
    return mask


def _zero_top_k(scores, k, default_mask, largest):
    """A copy of ``default_mask`` with zeros at the ``k`` entries of ``scores`` (same shape)
    that ``topk`` ranks first: the largest, or with ``largest=False`` the smallest."""
    # course:begin 16/zero-top-k
    # hint: clone the default mask, then set to 0 the k entries topk ranks first in scores (flattened)
    # hint: (torch.nn.utils.prune.l1_unstructured zeroes the k smallest |w|)
    mask = default_mask.clone()
    if k:
        mask.view(-1)[topk(scores.view(-1), k=k, largest=largest).indices] = 0
    return mask
    # course:end 16/zero-top-k


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries chosen uniformly at random (among those the default mask keeps,
    when composed)."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _zero_top_k(rand_like(t), _count(self.amount, t.numel()), default_mask, largest=True)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value (of the importance scores)."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _zero_top_k(t.detach().abs(), _count(self.amount, t.numel()), default_mask, largest=False)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels (slices along ``dim``) chosen at random."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured(t)
        channels = t.shape[self.dim]
        k = _count(self.amount, channels)
        if k == 0:
            return default_mask
        prob = rand(channels)
        mask = _channel_mask(t, self.dim % t.dim(), prob > kthvalue(prob, k=k).values)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm (``n`` as in
    :func:`ember.norm` over all other dims: a number, inf or -inf)."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured(t)
        channels = t.shape[self.dim]
        k = _count(self.amount, channels)
        if k == 0:
            return default_mask
        dim = self.dim % t.dim()
        norms = norm(t.detach(), p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        mask = _channel_mask(t, dim, topk(norms, k=channels - k, largest=True).indices)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0 (combined with any mask in place)."""
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"mask of shape {list(self.mask.shape)} does not match the parameter's "
                                 f"shape {list(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Reparametrises ``module.name`` with an all-ones mask. Returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes ``amount`` random entries of ``module.name``. Returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes the ``amount`` entries of ``module.name`` with the smallest ``|importance_scores|``
    (default ``|module.name|``). Returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes ``amount`` random channels along ``dim`` of ``module.name``. Returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm of
    ``importance_scores`` (default ``module.name``). Returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes several parameters together, as if they were one flattened tensor: e.g. with
    ``pruning_method=L1Unstructured, amount=0.5`` the half of all their entries with the
    smallest magnitudes, however they are spread among the parameters.

    Args:
        parameters: iterable of ``(module, name)`` pairs.
        pruning_method: an unstructured pruning class (TypeError for another PRUNING_TYPE).
        importance_scores: dict from ``(module, name)`` to a tensor of the parameter's shape
            (default the parameter's values).
        **kwargs: the method's arguments (``amount``); ``amount`` counts over all entries.

    Each parameter then carries a :class:`CustomFromMask` with its slice of the global mask.
    TypeError when ``parameters`` is not iterable or ``importance_scores`` not a dict.
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    with no_grad():
        scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                       for module, name in parameters])
        default_mask = parameters_to_vector([getattr(module, name + "_mask", ones_like(getattr(module, name)))
                                             for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
                        f"method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        n = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + n].view_as(param))
        pointer += n


def custom_from_mask(module, name, mask):
    """Prunes ``module.name`` where ``mask`` (same shape) is 0. Returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of ``module.name`` permanent (see :meth:`BasePruningMethod.remove`).
    Returns ``module``; ValueError if ``name`` is not pruned."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be "
                     "removed")


def is_pruned(module):
    """True when ``module`` or any submodule has a pruned parameter."""
    return any(isinstance(hook, BasePruningMethod)
               for submodule in module.modules() for hook in submodule._forward_pre_hooks.values())
