"""``Module``'s ``state_dict`` and ``load_state_dict``: the checkpoint side of a module
(https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.state_dict),
kept apart from ``module.py``'s registration, hooks and traversal, with their four hook
tables (``register_state_dict_pre_hook`` ... ``register_load_state_dict_post_hook``). Keys,
orders, error messages, hook arguments and the returned ``_IncompatibleKeys`` are PyTorch's."""
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from ..utils.hooks import RemovableHandle

_EXTRA_STATE_KEY = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys the model wanted but did not get, and the
    keys it got but has no place for."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _WrappedHook:
    """A load_state_dict pre-hook, called with its module (held weakly) as first argument
    when it was registered through the public method."""

    def __init__(self, hook, module=None):
        self.hook = hook
        self.module = None if module is None else weakref.ref(module)

    def __call__(self, *args):
        if self.module is None:
            return self.hook(*args)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args)


def _add(table, hook):
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


class StateDictMixin:
    """The state_dict methods of :class:`~ember.nn.Module`, which inherits them; they read
    the module's ``_parameters``, ``_buffers``, ``_non_persistent_buffers_set`` and
    ``_modules`` tables, and its ``_state_dict_pre_hooks``, ``_state_dict_hooks``,
    ``_load_state_dict_pre_hooks`` and ``_load_state_dict_post_hooks``."""

    _version = 1  # the ``version`` in each module's ``local_metadata``, as PyTorch's

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars) -> None`` runs when :meth:`state_dict` reaches this
        module, before its own entries are saved. Returns a handle whose ``remove()``
        unregisters it."""
        return _add(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata) -> None`` runs after this module
        and its descendants saved their entries; it may change ``state_dict`` in place
        (``local_metadata`` is ``{"version": module._version}``). A hook returning anything
        but None makes :meth:`state_dict` raise RuntimeError. Returns a removable handle."""
        hook._from_public_api = True
        return _add(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        """The older post-hook: as :meth:`register_state_dict_post_hook`, but a non-None
        result replaces the state_dict (respected at the root module only). RuntimeError for
        a function already registered through the public method."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was "
                               "previously registered via register_state_dict_post_hook")
        return _add(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None`` runs before this module loads its own entries
        from ``state_dict`` (the whole dict filtered to this module's ``prefix``; it may edit
        it and the lists in place). Returns a removable handle."""
        return _add(self._load_state_dict_pre_hooks, _WrappedHook(hook, self))

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """As :meth:`register_load_state_dict_pre_hook`; without ``with_module`` the hook is
        called without the module as first argument."""
        return _add(self._load_state_dict_pre_hooks, _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys) -> None`` runs after this module and its
        descendants loaded; ``incompatible_keys`` holds the live ``missing_keys`` and
        ``unexpected_keys`` lists, so clearing them in place avoids the strict error and
        adding to them causes it. A hook returning anything but None raises AssertionError.
        Returns a removable handle."""
        return _add(self._load_state_dict_post_hooks, hook)

    def get_extra_state(self):
        """Override (with :meth:`set_extra_state`) to store extra state under ``_extra_state``."""
        raise RuntimeError("Reached a code path in StateDictMixin.get_extra_state() that should never be "
                           "called. Please file an issue.")

    def set_extra_state(self, state):
        """Restores what :meth:`get_extra_state` saved, from ``load_state_dict``. A module that
        defines ``get_extra_state`` defines this too; the base raises RuntimeError, as PyTorch's."""
        raise RuntimeError("Reached a code path in StateDictMixin.set_extra_state() that should never be "
                           "called. Please file an issue.")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not StateDictMixin.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """An ordered dict from dotted names to the parameters and persistent buffers
        (detached, sharing storage, unless ``keep_vars``); per module: its parameters, its
        buffers, then its children's entries. Its ``_metadata`` attribute maps each module's
        dotted path to ``{"version": module._version}``, which loading hands to that module."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Loads this module's own entries (not its children's) from ``state_dict``, recording
        problems in the three lists, after this module's load_state_dict pre-hooks. Overridden
        by modules whose stored form differs."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if isinstance(value, Parameter):
                                value.requires_grad_(param.requires_grad)
                            else:
                                value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the '
                                  f"model are {param.size()} and whose dimensions in the checkpoint are "
                                  f"{value.size()}, an exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY
        if type(self).set_extra_state is not StateDictMixin.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head, dot, _ = key[len(prefix):].partition(".")
                    if (head not in self._modules) if dot else (head not in local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies parameters and buffers from ``state_dict`` into this module and its
        descendants (``assign=True`` puts the given tensors in place instead of copying).

        Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``. With ``strict``, missing
        or unexpected keys raise RuntimeError("Error(s) in loading state_dict for <Class>: ...");
        shape mismatches always do. TypeError for a non-mapping.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be "
                                         "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: "
                                  + ", ".join(f'"{k}"' for k in unexpected_keys) + ". ")
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: "
                                  + ", ".join(f'"{k}"' for k in missing_keys) + ". ")
        if error_msgs:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(error_msgs))
        return _IncompatibleKeys(missing_keys, unexpected_keys)
