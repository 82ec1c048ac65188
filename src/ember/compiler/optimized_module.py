"""``torch._dynamo.OptimizedModule``: what ``ember.compile(module)`` returns, a module whose calls
go through the compiled ``module.__call__`` (:mod:`.eval_frame`)."""
import copy

from ..nn.modules.module import Module

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """What ``ember.compile(module)`` returns (``torch._dynamo.OptimizedModule``): calls go
    through the compiled ``module.__call__``; the original is ``_orig_mod`` (so state_dict keys
    carry the ``_orig_mod.`` prefix, as torch's do) and its attributes read through."""
    __module__ = "ember._dynamo.eval_frame"  # (where torch's lives: a pickle names it so)

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_call"] = compiled

    @property
    def training(self):
        """The original module's mode (torch's mirrors it): ``model.eval()`` on either is seen by
        both, and the graphs' guards on it pick the eval-mode graph."""
        modules = self.__dict__.get("_modules")
        return modules["_orig_mod"].training if modules and "_orig_mod" in modules else True

    @training.setter
    def training(self, value):
        modules = self.__dict__.get("_modules")
        if modules and "_orig_mod" in modules:  # (Module.__init__'s default is the original's)
            modules["_orig_mod"].training = value

    def __call__(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    forward = __call__

    def __getattr__(self, name):
        try:
            return Module.__getattr__(self, name)
        except AttributeError:
            modules = self.__dict__.get("_modules")
            if modules is None or "_orig_mod" not in modules:  # being built (copy, unpickling)
                raise
            return getattr(modules["_orig_mod"], name)

    def __deepcopy__(self, memo):
        """A compiled copy of a deep copy of the module: its own graphs, captured on first call."""
        c = self._compiled_call
        mod = copy.deepcopy(self._orig_mod, memo)
        return OptimizedModule(mod, type(c)(mod.__call__, c._fullgraph, c._backend, c._options, c._recompile_limit,
                                            c._dynamic, c._spec, mod.forward, c._label, c._isolate))
