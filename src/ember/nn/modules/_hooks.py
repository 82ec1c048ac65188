"""``Module``'s hook registration (https://pytorch.org/docs/stable/generated/torch.nn.Module.html):
``register_forward_pre_hook``, ``register_forward_hook`` and the full backward hooks. The
hooks are run by ``Module.__call__`` in ``module.py``."""
from ..utils.hooks import RemovableHandle


class HooksMixin:
    """The hook-registration methods of :class:`~ember.nn.Module`, which inherits them; they
    fill the module's ``_forward_pre_hooks``, ``_forward_hooks``, ``_backward_pre_hooks`` and
    ``_backward_hooks`` tables (and the ``with_kwargs``/``always_call`` marks)."""

    @staticmethod
    def _add_hook(table, hook, prepend, extra=()):
        handle = RemovableHandle(table, extra_dict=[d for d, _ in extra])
        table[handle.id] = hook
        for d, flag in extra:
            if flag:
                d[handle.id] = True
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``) runs
        before ``forward``; a non-None result replaces the positional inputs (a non-tuple is
        wrapped in one), or the ``(args, kwargs)`` pair. ``prepend`` runs it before the
        hooks already registered. Returns a handle whose ``remove()`` unregisters it."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend,
                              [(self._forward_pre_hooks_with_kwargs, with_kwargs)])

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs after
        ``forward``; a non-None result replaces the output. ``always_call`` runs it even when
        ``forward`` raises. Returns a removable handle."""
        return self._add_hook(self._forward_hooks, hook, prepend,
                              [(self._forward_hooks_with_kwargs, with_kwargs),
                               (self._forward_hooks_always_called, always_call)])

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output) -> tuple or None`` runs when the gradients of the
        module's outputs are known; a tuple replaces ``grad_output``. Returns a removable handle."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output) -> tuple or None`` runs when the gradients of
        the module's positional inputs are known (None for non-tensor inputs); a tuple
        replaces ``grad_input``. Returns a removable handle."""
        return self._add_hook(self._backward_hooks, hook, prepend)
