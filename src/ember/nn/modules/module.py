"""``Module``: the base class of every layer and model
(https://pytorch.org/docs/stable/generated/torch.nn.Module.html).

A Module keeps its parameters, buffers and submodules in three ordered tables filled by
``__setattr__``; everything else (naming, ``train``/``eval``, calling with hooks, and the
hook registration, ``state_dict`` and ``to``/``float``/... it inherits from ``_hooks.py``,
``_state_dict.py`` and ``_conversion.py``) walks those tables, so keys, orders and printed
forms match PyTorch's.
"""
import warnings
from collections import OrderedDict

from ..._tensor import Tensor
from .._typename import typename as _typename
from ..parameter import Buffer, Parameter
from ..utils.hooks import BackwardHook
from ._conversion import ConversionMixin
from ._hooks import HooksMixin
from ._state_dict import StateDictMixin

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook"]

# Counts changes to any module's attributes, tables and hooks: a compiled function re-reads
# the modules it reaches only when this moved (its guards stay cheap in a training loop).
STATE_VERSION = [0]
TRAINING_VERSION = [0]  # of those changes, the ``training`` flags set (train(), eval()): see compiler/recheck.py


def _counted(base, *names):
    """``base``'s methods ``names``, each counting a change before it runs."""
    def counted(write):
        def method(self, *args, **kwargs):
            STATE_VERSION[0] += 1
            return write(self, *args, **kwargs)
        return method
    return [counted(getattr(base, name)) for name in names]


_ABSENT = object()


def _unchanged(old, new):
    """Whether setting a plain attribute from ``old`` to ``new`` leaves it as a compiled
    function's guards see it (objects by identity, Python scalars by type and value): a forward
    that writes ``self.n = x.shape[0]`` on every call keeps the guards' fast path."""
    return old is new or type(old) is type(new) and type(new) in (int, float, bool, str) and old == new


class _Table(dict):
    """A module's ``_parameters``, ``_buffers`` or ``_modules``: every write counts as a change
    (``STATE_VERSION``), also one made without ``Module``'s methods (``model._modules["0"] = m``)."""
    __setitem__, __delitem__, __ior__, pop, popitem, clear, update, setdefault = _counted(
        dict, "__setitem__", "__delitem__", "__ior__", "pop", "popitem", "clear", "update", "setdefault")


class _Hooks(OrderedDict):
    """A table of hooks, whose writes count as changes as a ``_Table``'s do."""
    __setitem__, __delitem__, pop, popitem, clear, update, setdefault, move_to_end = _counted(
        OrderedDict, "__setitem__", "__delitem__", "pop", "popitem", "clear", "update", "setdefault", "move_to_end")


_PLAIN = {_Table: dict, _Hooks: OrderedDict}
_TABLES = {"_parameters": _Table, "_buffers": _Table, "_modules": _Table, "_forward_pre_hooks": _Hooks,
           "_forward_hooks": _Hooks, "_backward_pre_hooks": _Hooks, "_backward_hooks": _Hooks,
           "_state_dict_pre_hooks": _Hooks, "_state_dict_hooks": _Hooks,
           "_load_state_dict_pre_hooks": _Hooks, "_load_state_dict_post_hooks": _Hooks}

# Hooks that run for every module's call, before the module's own (ModuleTracker and
# FlopCounterMode find the module path through them).
_global_forward_pre_hooks = _Hooks()
_global_forward_hooks = _Hooks()
_global_forward_hooks_always_called = {}


def register_module_forward_pre_hook(hook):
    """``hook(module, args) -> None or new args`` runs before every module's forward, ahead of
    the module's own pre-hooks (``torch.nn.modules.module.register_module_forward_pre_hook``).
    Returns a handle whose ``remove()`` unregisters it."""
    return Module._add_hook(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook, *, always_call=False):
    """``hook(module, args, output) -> None or new output`` runs after every module's forward,
    ahead of the module's own forward hooks; with ``always_call`` also when forward raised
    (``torch.nn.modules.module.register_module_forward_hook``). Returns a removable handle."""
    return Module._add_hook(_global_forward_hooks, hook, False,
                            [(_global_forward_hooks_always_called, always_call)])


def _addindent(text, spaces):
    first, *rest = text.split("\n")
    if not rest:
        return text
    pad = " " * spaces
    return first + "\n" + "\n".join(pad + line for line in rest)


class Module(HooksMixin, StateDictMixin, ConversionMixin):
    """Base class for all neural network modules (``torch.nn.Module``,
    https://pytorch.org/docs/stable/generated/torch.nn.Module.html).

    Subclasses call ``super().__init__()`` first, assign :class:`~ember.nn.Parameter`\\ s,
    buffers (:meth:`register_buffer` or :class:`~ember.nn.Buffer`) and submodules as
    attributes, and define ``forward``. Assignment registers them (``__setattr__``), so
    :meth:`parameters`, :meth:`state_dict`, :meth:`to`, :meth:`train`/:meth:`eval` and the
    printed form reach every submodule. Calling the module runs its forward pre-hooks,
    ``forward``, its forward hooks and sets up its backward hooks; with no hooks registered it
    is a plain call of ``forward``. Shapes and dtypes are those of each subclass's ``forward``.

    ``state_dict()`` keys are dotted attribute paths (``"fc.weight"``): a module's own
    parameters, then its persistent buffers, then each submodule's, in registration order: the
    names PyTorch gives the same model, so state_dicts move between ember and torch.

    Attributes:
        training (bool): True in training mode (the default), False after :meth:`eval`;
            dropout and batch norm read it.

    Raises:
        AttributeError: a parameter, buffer or submodule is assigned before
            ``Module.__init__()`` ran; reading an attribute the module does not have.
        TypeError: a plain tensor is assigned to the name of a registered parameter (a
            :class:`~ember.nn.Parameter` or None is expected).
        KeyError: a registered name is empty, contains ``"."`` or is already an attribute.
        NotImplementedError: the module is called but defines no ``forward``.
        RuntimeError: :meth:`load_state_dict` with ``strict=True`` meets missing, unexpected
            or wrongly shaped entries (the message lists them).

    Example::

        >>> import ember
        >>> from ember import nn
        >>> class Model(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(3, 2)
        ...     def forward(self, x):                  # (N, 3) -> (N, 2)
        ...         return self.fc(x).relu()
        >>> model = Model()
        >>> model
        Model(
          (fc): Linear(in_features=3, out_features=2, bias=True)
        )
        >>> model(ember.zeros(4, 3)).shape
        torch.Size([4, 2])
        >>> list(model.state_dict())
        ['fc.weight', 'fc.bias']
        >>> sum(p.numel() for p in model.parameters())
        8
        >>> model.eval().training
        False
        >>> model.fc.weight = ember.zeros(2, 3)
        Traceback (most recent call last):
            ...
        TypeError: cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)
    """

    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_non_persistent_buffers_set"] = set()
        for name, table in _TABLES.items():
            d[name] = table()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_hooks_always_called"] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input):
        """The computation of the module; every subclass defines it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---- calling ---------------------------------------------------------------------------
    def _call_impl(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks \
                or _global_forward_pre_hooks or _global_forward_hooks:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    __call__ = _call_impl

    def compile(self, *args, **kwargs):
        """Compiles this module's ``forward`` in place with :func:`ember.compile` (same arguments);
        see :func:`ember.compiler.eval_frame.compile_forward` (``ember.nn``'s own stay eager)."""
        from ...compiler.eval_frame import compile_forward
        compile_forward(self, *args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        result = None
        called = set()
        try:
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
            bw_hook = None
            if self._backward_hooks or self._backward_pre_hooks:
                bw_hook = BackwardHook(self, list(self._backward_hooks.values()),
                                       list(self._backward_pre_hooks.values()))
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in self._all_forward_hooks():
                if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                    called.add(hook_id)
                result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a Tensor or "
                                  f"a tuple of Tensors but received {type(result)}", stacklevel=3)
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            for hook_id, hook in self._all_forward_hooks():
                if hook_id in called or (hook_id not in self._forward_hooks_always_called
                                         and hook_id not in _global_forward_hooks_always_called):
                    continue
                try:
                    result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception "
                                  f"that was silenced as another error was raised in forward: {e}",
                                  stacklevel=3)
            raise

    def _all_forward_hooks(self):
        return (*_global_forward_hooks.items(), *self._forward_hooks.items())

    def _run_forward_hook(self, hook_id, hook, args, kwargs, result):
        if hook_id in self._forward_hooks_with_kwargs:
            new = hook(self, args, kwargs, result)
        else:
            new = hook(self, args, result)
        return result if new is None else new

    # ---- registration ----------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer: module state that is not a parameter (e.g. running statistics).
        ``persistent=False`` keeps it out of :meth:`state_dict`. ``tensor=None`` registers a
        name that state_dict skips. Raises AttributeError before ``__init__``, TypeError for a
        non-string name or a non-tensor value, KeyError for a name that is empty, dotted or
        already an attribute."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter (a :class:`Parameter` or None). Raises as :meth:`register_buffer`
        does, TypeError for a value that is not a Parameter, and ValueError for a non-leaf."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters "
                             f"must be created explicitly. To express '{name}' as a function of "
                             "another Tensor, compute the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module (or None) under ``name``. TypeError for a non-Module or a
        non-string name; KeyError for a name that is empty, dotted or already an attribute."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name):
        # Runs only when normal lookup fails, i.e. for every parameter, buffer and child access:
        # kept to the three dict probes.
        d = self.__dict__
        params = d.get("_parameters")
        if params is not None:
            if name in params:
                return params[name]
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        if not _unchanged(d.get(name, _ABSENT), value):
            STATE_VERSION[0] += 1
            TRAINING_VERSION[0] += name == "training"
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, d, self._buffers, self._modules)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, d, params, self._buffers)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def _forget(self, name, *tables):
        for table in tables:
            table.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name):
        STATE_VERSION[0] += 1
        d = self.__dict__
        if name in d["_parameters"]:
            del d["_parameters"][name]
        elif name in d["_buffers"]:
            del d["_buffers"][name]
            d["_non_persistent_buffers_set"].discard(name)
        elif name in d["_modules"]:
            del d["_modules"][name]
        else:
            object.__delattr__(self, name)

    # Pickled and copied with plain dicts for its tables (a file names no ember class for them),
    # which come back counted.
    def __getstate__(self):
        return {k: _PLAIN[type(v)](v) if type(v) in _PLAIN else v for k, v in self.__dict__.items()}

    def __setstate__(self, state):
        self.__dict__.update(state)
        d = self.__dict__
        for name, table in _TABLES.items():  # a module pickled before a table existed gets an empty one
            if type(d.get(name)) is not table:
                d[name] = table(d.get(name, ()))

    def __dir__(self):
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    # ---- lookup ----------------------------------------------------------------------------
    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ("" is the module itself); AttributeError
        naming the first missing or non-Module part."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Puts ``module`` at dotted path ``target``; with ``strict`` the last part must
        already be a submodule. AttributeError for a missing path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The parameter at dotted path ``target``; AttributeError if there is none."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path ``target``; AttributeError if there is none."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # ---- iteration -------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        # course:begin 04/named-members
        # hint: for each (prefix, module) of named_modules (or just this one without recurse), yield
        # hint: (prefix.name, member) for get_members(module), skipping None and, with remove_duplicate, repeats
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield (module_prefix + "." + k if module_prefix else k), v
        # course:end 04/named-members

    def parameters(self, recurse=True):
        """The parameters of this module (and, with ``recurse``, of its descendants), each
        once, in registration order."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(dotted name, parameter)`` pairs, as in :meth:`parameters`; a parameter shared by
        several modules appears once unless ``remove_duplicate`` is False."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Yields the buffers of this module (and, with ``recurse``, of its submodules), each once."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Yields ``(name, buffer)`` with dotted names (``"bn.running_mean"``) after ``prefix``;
        ``recurse=False`` for this module's own, ``remove_duplicate=False`` to repeat shared ones."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        """Yields the direct submodules, in registration order."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """``(name, module)`` for the direct submodules, each module once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        """Yields this module and every submodule, depth first, each once."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``(dotted name, module)`` for this module and all descendants, depth first, this
        module first with name ``prefix``."""
        # course:begin 04/named-modules
        # hint: depth first, this module first as (prefix, self), children as prefix.name; a module reached
        # hint: twice is yielded once unless remove_duplicate is False (memo: the modules seen)
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + "." + name if prefix else name, remove_duplicate)
        # course:end 04/named-modules

    # ---- modes -----------------------------------------------------------------------------
    def train(self, mode=True):
        """Sets ``training`` on this module and its descendants (affects Dropout, BatchNorm);
        returns self. ValueError for a non-bool mode."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets ``requires_grad`` on every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all parameters: to None, or to zeros in place."""
        for p in self.parameters():
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

    def apply(self, fn):
        """Calls ``fn(module)`` on every descendant (children first) and on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- printing --------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The module's own settings, shown inside its parentheses by ``repr``; override it."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return self._get_name() + "(" + body + ")"

