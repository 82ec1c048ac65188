"""``RemovableHandle``, what every ``register_*_hook`` returns (``torch.utils.hooks``,
https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook):
modules, optimizers and their state_dicts keep hooks in ordered dicts keyed by the handle's id."""
import itertools

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """What ``register_*_hook`` returns: ``handle.remove()`` takes the hook out of its table
    (and of any companion tables, such as the one recording ``with_kwargs``). Also a context
    manager that removes the hook on exit."""
    _ids = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict = hooks_dict
        self.id = next(RemovableHandle._ids)
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self.extra_dicts = tuple(extra_dict)

    def remove(self):
        """Unregisters the hook (from every dict it was put in); calling it again does nothing."""
        self.hooks_dict.pop(self.id, None)
        for d in self.extra_dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
