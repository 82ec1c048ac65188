"""``torch.jit`` for programs that use it: ember has no TorchScript, so scripting and tracing
give back what they were given, which runs eagerly with the same results
(https://pytorch.org/docs/stable/jit.html).

A program decorated with ``@torch.jit.script``, ``@torch.jit.ignore`` or ``@torch.jit.export``,
that traces a model for speed, or that asks ``torch.jit.is_scripting()`` runs unchanged.
What needs TorchScript itself raises when called, naming what to do instead: ``save`` and
``load`` of TorchScript archives (save a ``state_dict`` with ``ember.save``) and compiling
TorchScript source (``CompilationUnit``). ``ember.compile`` is ember's compiler.
"""
import builtins
import contextlib
import typing
import warnings
from collections import namedtuple

from .nn.modules.module import Module

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule", "annotate",
           "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze", "fuser", "interface", "ignore",
           "isinstance", "load", "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution",
           "save", "script",
           "script_if_tracing", "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait"]

Final = typing.Final
Attribute = namedtuple("Attribute", ["value", "type"])  # as torch's outside TorchScript


class Error(RuntimeError):
    """``torch.jit.Error``: an error raised by TorchScript code."""


class ScriptModule(Module):
    """The base of scripted modules; a subclass (the old ``script_method`` API) is a Module."""


class ScriptFunction:
    """The type of scripted functions; ember's script returns the function itself, so nothing
    is an instance."""


def _deprecated(name, instead="switch to `torch.compile` or `torch.export`"):
    """torch 2.13's DeprecationWarning for the TorchScript entry points."""
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please {instead}.", DeprecationWarning, stacklevel=3)


def _not_supported(what, instead):
    return NotImplementedError(f"ember.jit.{what} is not supported: ember has no TorchScript; {instead}")


class CompilationUnit:
    """TorchScript source compiled into functions: not supported (NotImplementedError)."""

    def __init__(self, lang=None, _frames_up=0):
        raise _not_supported("CompilationUnit", "write the functions in Python")


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` (a function, Module or class) itself: it runs eagerly, as a scripted one would
    compute. Use ``ember.compile`` for speed. A DeprecationWarning, as torch's."""
    _deprecated("script")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """``func`` (a function or Module) itself, run eagerly; ``example_inputs`` are not run.
    A DeprecationWarning, as torch's."""
    _deprecated("trace")
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """``mod`` itself (see :func:`trace`)."""
    _deprecated("trace_method")
    return mod


def script_if_tracing(fn):
    """``fn`` itself (it is scripted only under a trace, which ember never runs)."""
    return fn


def _decorator(fn=None, **kwargs):
    """A decorator used bare (``@ignore``) or called (``@ignore(drop=True)``): the function."""
    if callable(fn):
        return fn
    return lambda f: f


def ignore(drop=False, **kwargs):
    """``@ignore`` / ``@ignore(drop=True)``: leaves the function to Python, which is where it runs."""
    return _decorator(drop)


def unused(fn):
    """``fn`` itself: a method TorchScript would replace by a raise runs as written."""
    return fn


def export(fn):
    """``fn`` itself: a method TorchScript would compile besides ``forward``."""
    return fn


def interface(obj):
    """``obj`` itself: a class TorchScript would read as an interface type."""
    return obj


def annotate(the_type, the_value):
    """``the_value``: a type hint for TorchScript, nothing to do in Python."""
    return the_value


def isinstance(obj, target_type):
    """``builtins.isinstance``, also for ``typing`` containers (``List[int]``,
    ``Dict[str, Tensor]``, ``Optional[...]``, ``Tuple[...]``), checked element by element."""
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union:
        return any(isinstance(obj, t) for t in args)
    if not builtins.isinstance(obj, origin):
        return False
    if origin in (list, set, frozenset) and args:
        return all(isinstance(v, args[0]) for v in obj)
    if origin is dict and args:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple and args:
        if len(args) == 2 and args[1] is Ellipsis:
            return all(isinstance(v, args[0]) for v in obj)
        return len(obj) == len(args) and all(isinstance(v, t) for v, t in zip(obj, args))
    return True


class Future:
    """The result of :func:`fork`: the call already ran (ember runs it at once, in order)."""

    def __init__(self, value=None):
        self._value = value

    def wait(self):
        """The result."""
        return self._value

    def value(self):
        """The result."""
        return self._value

    def done(self):
        """True: the call has run."""
        return True

    def then(self, callback):
        """A Future of ``callback(self)``, run now."""
        return Future(callback(self))

    def set_result(self, result):
        """Sets the result."""
        self._value = result


def fork(func, *args, **kwargs):
    """Runs ``func(*args, **kwargs)`` now and returns a :class:`Future` holding its result."""
    _deprecated("fork", "use `torch.compile` instead")
    return Future(func(*args, **kwargs))


def wait(future):
    """The result of a :func:`fork`."""
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """``mod`` itself; RuntimeError (torch's) for a module in training mode."""
    _deprecated("freeze", "use `torch.compile` instead")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """``mod`` in eval mode."""
    _deprecated("optimize_for_inference", "use `torch.compile` instead")
    return mod.eval()


def save(m, f, _extra_files=None):
    """Not supported (NotImplementedError): save ``m.state_dict()`` with ``ember.save``."""
    raise _not_supported("save", "save the module's state_dict with ember.save and load it into the same class")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Not supported (NotImplementedError): a TorchScript archive holds TorchScript code."""
    raise _not_supported("load", "load a state_dict saved with torch.save into the model's Python class")


def export_opnames(m):
    """Not supported (NotImplementedError)."""
    raise _not_supported("export_opnames", "there are no TorchScript ops to list")


_fusion = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled):
    """Records the flag (nothing is fused by TorchScript here)."""
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled():
    """The flag :func:`enable_onednn_fusion` recorded (initially False, as torch's)."""
    return _fusion["onednn"]


def set_fusion_strategy(strategy):
    """Records the strategy and returns the previous one (nothing is fused by TorchScript here)."""
    previous, _fusion["strategy"] = _fusion["strategy"], strategy
    return previous


@contextlib.contextmanager
def strict_fusion():
    """A context that checks nothing: there is no TorchScript fusion to be strict about."""
    yield


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """A context for TorchScript's graph optimizations: nothing to switch here (ember runs Python)."""
    yield


@contextlib.contextmanager
def fuser(name):
    """A context choosing TorchScript's fuser (``"fuser0"`` legacy, ``"fuser1"`` NNC, ``"fuser2"``
    nvFuser, ``"fuser3"`` oneDNN, ``"none"``): accepted, nothing to fuse here. Exception (torch's
    plain ``Exception``) for another name."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")
    yield


def is_scripting():
    """False: ember code always runs as Python."""
    return False


def is_tracing():
    """False: ember never traces for TorchScript."""
    return False


def script_method(fn):
    """``fn`` itself (the old ScriptModule API)."""
    return fn
