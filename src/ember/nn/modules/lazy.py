"""``LazyModuleMixin``: modules whose parameter shapes come from their first input
(https://pytorch.org/docs/stable/generated/torch.nn.modules.lazy.LazyModuleMixin.html).

A lazy module holds :class:`~ember.nn.parameter.UninitializedParameter`\\ s (and
``UninitializedBuffer``\\ s) until its first call: a forward pre-hook then runs the class's
``initialize_parameters(*args, **kwargs)``, which materializes them from the input's shape
and re-draws them with the layer's ``reset_parameters``; the hooks are removed and the module
becomes its ``cls_to_become`` (``LazyLinear`` becomes ``Linear``). The parameter objects stay
the same, so an optimizer built before the first call keeps working. Loading a state_dict
before the first call materializes them with the checkpoint's shapes (a load_state_dict
pre-hook). ``state_dict`` keeps uninitialized entries as they are (not detached).
"""
from itertools import chain

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixed in before the layer class (``class LazyLinear(LazyModuleMixin, Linear)``); the
    layer sets ``cls_to_become`` and defines ``initialize_parameters``. RuntimeError when the
    first forward leaves a parameter uninitialized."""
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for table, skip in ((self._parameters, ()), (self._buffers, self._non_persistent_buffers_set)):
            for name, value in table.items():
                if value is not None and name not in skip:
                    destination[prefix + name] = value if keep_vars or is_lazy(value) else value.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        for name, value in chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if value is not None and key in state_dict and is_lazy(value) and not is_lazy(state_dict[key]):
                with no_grad():
                    value.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs):
        """Materializes the parameters from the first forward's arguments; each lazy layer
        defines it."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether any parameter or buffer of this module (not its children) is uninitialized."""
        return any(is_lazy(v) for v in chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a "
                           "dummy forward pass to correctly initialize the modules")
