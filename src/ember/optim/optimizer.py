"""Optimizer: the base class of every ember optimizer (``torch.optim.Optimizer``).

The base class owns what all optimizers share: parameter groups, per-parameter state, the
``state_dict`` layout, ``zero_grad``, and the loop of ``step`` over parameters that have a
gradient. A subclass supplies two small methods, so it reads as its update equations:

* ``_init_state(param, group)``: the initial state of one parameter (a dict of tensors);
* ``_update(param, grad, state, group)``: one step of the algorithm for one parameter.

``_update`` works on the NumPy arrays behind the tensors (``param`` and ``grad`` are arrays,
``grad`` already negated when ``maximize`` is set), because this loop is on the hot path of
every training step and each ember op carries dispatch overhead that a fused array expression
does not; ``step`` bumps the parameter's version counter for the in-place write.

Semantics follow https://pytorch.org/docs/stable/optim.html.
"""
import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from .._backend import namespace
from .._ops.complex import view_as_complex, view_as_real
from .._ops.core import OBSERVERS, observed_range
from .._tensor import Tensor
from .._dtype import get_default_dtype, float64, float32
from .._creation import tensor as _tensor
from ..autograd.grad_mode import no_grad, enable_grad
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

# Step hooks of every optimizer: the pre-hooks run before each optimizer's own, the
# post-hooks after them.
_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()
_HOOK_TABLES = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                "_optimizer_load_state_dict_post_hooks")


def _add_hook(table, hook, prepend=False):
    handle = RemovableHandle(table)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`` runs before every
    optimizer's ``step``, ahead of its own pre-hooks (``args`` starts with the optimizer).
    Returns a handle whose ``remove()`` unregisters it
    (``torch.optim.optimizer.register_optimizer_step_pre_hook``)."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs) -> None`` runs after every optimizer's ``step``, after
    its own post-hooks. Returns a removable handle."""
    return _add_hook(_global_optimizer_post_hooks, hook)


def step_hooks(optimizer):
    """``(pre, post)``: the step hooks that run around ``optimizer.step()``, in their order (the
    global pre-hooks, then its own; its own post-hooks, then the global ones)."""
    return ((*_global_optimizer_pre_hooks.values(), *optimizer._optimizer_step_pre_hooks.values()),
            (*optimizer._optimizer_step_post_hooks.values(), *_global_optimizer_post_hooks.values()))


def step_hook_functions(optimizer):
    """The functions of :func:`step_hooks`, pre then post, in one tuple (read by the compiled
    step's recheck on every call: without hooks, four emptiness tests)."""
    if not (_global_optimizer_pre_hooks or optimizer._optimizer_step_pre_hooks
            or optimizer._optimizer_step_post_hooks or _global_optimizer_post_hooks):
        return ()
    return sum(step_hooks(optimizer), ())


def _with_step_hooks(step):
    """``step`` running the global and the optimizer's step hooks around it: the class's own
    ``step``, wrapped once when the first instance is made (a subclass that overrides
    ``step`` gets the hooks too)."""
    @functools.wraps(step)
    def hooked(*args, **kwargs):
        self = args[0]
        pre, post = step_hooks(self)
        for hook in pre:
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        out = step(*args, **kwargs)
        for hook in post:
            hook(self, args, kwargs)
        return out
    hooked.hooked = True
    return hooked


class _RequiredParameter:
    """Marks a default that each parameter group must give (``torch.optim.optimizer.required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


def _step_tensor():
    """The ``step`` counter kept in an optimizer's state: a 0-d float tensor, as in PyTorch
    (float64 when that is the default dtype, float32 otherwise)."""
    return _tensor(0.0, dtype=float64 if get_default_dtype() is float64 else float32)


class Optimizer:
    """Base class for all optimizers (https://pytorch.org/docs/stable/optim.html).

    Args:
        params (iterable): tensors to optimize, ``(name, tensor)`` pairs, or dicts defining
            parameter groups (each with a ``"params"`` entry and optional per-group options).
        defaults (dict): the optimization options used by groups that do not set them.

    Raises:
        TypeError: ``params`` is a single tensor, or contains something that is not a tensor.
        ValueError: the parameter list is empty, a parameter appears in two groups, a
            group omits a required option, or a parameter is not a leaf.

    Example::

        >>> import ember
        >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ember.optim.SGD([w], lr=0.25)
        >>> for _ in range(2):
        ...     opt.zero_grad()
        ...     (w * w).sum().backward()
        ...     opt.step()
        >>> w
        tensor([ 0.2500, -0.5000], requires_grad=True)
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        for name in _HOOK_TABLES:
            setattr(self, name, OrderedDict())
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        if defaults.get("differentiable"):
            raise NotImplementedError("ember optimizers do not support differentiable=True")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_TABLES:  # an unpickled optimizer starts without hooks
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()

    def _patch_step_function(self):
        """Wraps this class's ``step`` with the step hooks, once (torch's name)."""
        if not getattr(type(self).step, "hooked", False):
            type(self).step = _with_step_hooks(type(self).step)

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`` runs before each
        :meth:`step` (``args`` starts with the optimizer; a returned pair replaces the
        arguments, anything else raises RuntimeError). Returns a removable handle."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None`` runs after each :meth:`step`. Returns a
        removable handle."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer) -> None`` runs first in :meth:`state_dict`; ``prepend`` puts it
        before the hooks already registered. Returns a removable handle."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> None or state_dict`` runs last in
        :meth:`state_dict`; a returned dict replaces the result. Returns a removable handle."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> None or state_dict`` runs first in
        :meth:`load_state_dict`, on a shallow copy of the given dict; a returned dict is
        loaded instead. Returns a removable handle."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer) -> None`` runs last in :meth:`load_state_dict`. Returns a
        removable handle."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group):
        """Adds a parameter group (a dict with ``"params"`` and optional options); options it
        does not set take the optimizer's defaults.

        Raises:
            TypeError: ``param_group`` is not a dict, its params are a set or hold a non-tensor.
            ValueError: a required option is missing, a parameter is not a leaf, or one of its
                parameters already belongs to another group.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use a "
                            "list instead.")
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization "
                                 f"parameter {name}")
            param_group.setdefault(name, default)

        new_ids = {id(p) for p in param_group["params"]}
        if len(new_ids) != len(param_group["params"]):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see github.com/pytorch/pytorch/issues/"
                          "40967 for more information", stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
            if any(id(p) in new_ids for p in group["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all optimized tensors: to ``None`` (the default, so the next
        step skips parameters that receive no gradient), or to zeros in place. A recording
        profiler shows it as ``Optimizer.zero_grad#<Class>.zero_grad``, as PyTorch's does."""
        if OBSERVERS:
            return observed_range(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad",
                                  self._zero_grad, set_to_none)
        return self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none):
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:  # (set without reading it: a compiled step's graph then does not
                    p.grad = None  # depend on which parameters had a gradient before it)
                elif p.grad is None:
                    continue
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        """Performs one optimization step on every parameter whose ``.grad`` is not None.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss; it runs
                with gradients enabled.

        Returns:
            The closure's loss, or None without a closure.

        A recording profiler shows the step as ``Optimizer.step#<Class>.step``, as PyTorch's does.
        """
        if OBSERVERS:
            return observed_range(f"Optimizer.step#{type(self).__name__}.step", self._step, closure)
        return self._step(closure)

    def _step(self, closure):
        if type(self)._update is Optimizer._update and type(self)._step_param is Optimizer._step_param:
            raise NotImplementedError  # a subclass defines _update or _step_param, or overrides step
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        states = self.state
        if OBSERVERS and type(self)._step_param is Optimizer._step_param and \
                any(p.grad is not None for group in self.param_groups for p in group["params"]):
            _array_updates_break(self)  # once a step, as torch's one break (it was one a parameter)
        with no_grad():
            for group in self.param_groups:
                group = _with_numbers(group)
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = states.get(p)
                    if not state:
                        state = self._init_state(p, group)
                        if state:
                            states[p] = state
                    if p.dtype.is_complex:
                        _step_on_real_views(self, p, state, group)
                    else:
                        self._step_param(p, state, group)
        return loss

    # The group entries an update op takes as its last inputs, in its order: a key, or (key, i)
    # for item i of a tuple (Adam's betas). ``ember.compile`` makes each an input of the graph,
    # read from the group at every call, so an LR scheduler changing them does not recompile
    # (compiler/group_replay.py, hyperparameter_inputs).
    hyperparameters = ()

    def _hyperparameters(self, group):
        """The numbers of ``hyperparameters`` in ``group``."""
        return [group[key] if type(key) is str else group[key[0]][key[1]] for key in self.hyperparameters]

    def _step_param(self, p, state, group):
        """Updates ``p`` from ``p.grad``: through an update op (SGD, Adam, RMSprop, Adagrad), or by default through
        ``_update`` on the arrays (a graph break of a compiled step's recording, noted by ``step``)."""
        grad = p.grad._data
        self._update(p._data, -grad if group.get("maximize", False) else grad, state, group)
        p._versions[0] += 1

    def _init_state(self, param, group):
        """The initial state of ``param`` (a dict; empty when the algorithm keeps none)."""
        return {}

    def _update(self, param, grad, state, group):
        """Updates the array ``param`` in place from the array ``grad``; subclasses define it."""

    def state_dict(self):
        """The optimizer's state as a dict with two entries, PyTorch's layout:

        * ``"state"``: per-parameter state keyed by the parameter's integer index (indices
          count the parameters of all groups in order); the tensors are the live state, not
          copies.
        * ``"param_groups"``: each group's options, with ``"params"`` the list of indices.
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index = {}
        packed_groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            packed_groups.append(packed)
        packed_state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": packed_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Loads a dict returned by :meth:`state_dict`: state tensors are cast to the dtype of
        their (floating-point) parameter, except ``step``; groups take the saved options.

        Raises:
            ValueError: the number of groups, or the size of a group, differs from this
                optimizer's.
        """
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key == "step" or not param.is_floating_point():
                    return value
                return value.to(param.dtype)
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)


def _with_numbers(group):
    """``group`` with its 0-d tensor hyperparameters read as Python numbers for this step (torch
    accepts ``lr=torch.tensor(0.01)``, which an LR scheduler then updates in place, and tensor
    ``betas``); the group itself when it has none. The update kernels compute with numbers: a
    tensor there would turn their in-place arithmetic into new tensors and leave the
    parameters unchanged."""
    if not any(isinstance(v, Tensor) or isinstance(v, tuple) and any(isinstance(x, Tensor) for x in v)
               for k, v in group.items() if k != "params"):
        return group
    return {k: v if k == "params" else _number(v) for k, v in group.items()}


def _number(value):
    if isinstance(value, Tensor):  # its array's item: a compiled step's capture reads it as an input
        return value._data.item()
    return tuple(_number(v) for v in value) if isinstance(value, tuple) else value


def _step_on_real_views(optimizer, param, state, group):
    """One step of a complex ``param`` as torch's optimizers take it: on the real views of the
    parameter, its gradient and its complex state tensors (each element a (real, imag) pair, so
    that Adam's second moments are per part), while the state keeps the parameter's complex
    shape and dtype (torch's state_dict layout). A state tensor the step makes in real shape
    (SGD's first momentum buffer) is stored as its complex view."""
    pairs = view_as_real(param)
    pairs.grad = view_as_real(param.grad)
    views = {k: view_as_real(v) if isinstance(v, Tensor) and v.dtype.is_complex else v
             for k, v in state.items()}
    real = dict(views)
    optimizer._step_param(pairs, real, group)
    for k, v in real.items():
        if k not in views or v is not views[k]:
            made_here = isinstance(v, Tensor) and v.shape == pairs.shape and v.dtype is pairs.dtype
            state[k] = view_as_complex(v.contiguous()) if made_here else v


def _check_nonnegative(**values):
    """ValueError, PyTorch's wording, for the first negative hyperparameter."""
    labels = {"lr": "learning rate", "eps": "epsilon value"}
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {labels.get(name, name + ' value')}: {value}")


def _count_step_and_decay(param, grad, state, group):
    """Bumps ``state["step"]`` and applies the group's weight decay: to ``param`` in place when
    ``decoupled_weight_decay`` (AdamW-style), else as ``grad + weight_decay * param``.
    Returns ``(step as a float, grad)``: the preamble NAdam and RAdam share."""
    state["step"]._data += 1
    lr, weight_decay = group["lr"], group["weight_decay"]
    if weight_decay != 0:
        if group["decoupled_weight_decay"]:
            param *= 1 - lr * weight_decay
        else:
            grad = grad + weight_decay * param
    return float(state["step"]._data), grad


def _zeros(param):
    """A zero state tensor shaped and typed like ``param``."""
    return Tensor._make(namespace(param._data).zeros_like(param._data))


def _full(param, value):
    """A state tensor shaped and typed like ``param`` holding ``value``; for a complex
    ``param``, ``value`` in both parts (``value + value j``, as torch starts each part's state)."""
    value = complex(value, value) if param.dtype.is_complex else value
    return Tensor._make(namespace(param._data).full_like(param._data, value))


def _array_updates_break(optimizer):
    """Tells a compiled step's recording that ``optimizer.step`` updates the parameters on their
    arrays, which no recording sees: a graph break (one a step; the step runs eagerly)."""
    for observer in tuple(OBSERVERS):
        if hasattr(observer, "graph_break"):
            observer.graph_break(f"{type(optimizer).__name__}.step updates the parameters outside ember's "
                                 f"ops (of the optimizers, SGD, Adam, AdamW, RMSprop and Adagrad have update ops)")
