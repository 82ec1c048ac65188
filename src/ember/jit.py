"""``torch.jit`` for programs that use it: ember has no TorchScript, so scripting gives back
what it was given, which runs eagerly with the same results, and tracing records the
compiler's graph of the example call (:class:`TracedModule`: callable, ``.graph``, ``.code``)
(https://pytorch.org/docs/stable/jit.html).

A program decorated with ``@torch.jit.script``, ``@torch.jit.ignore`` or ``@torch.jit.export``,
that traces a model for speed, or that asks ``torch.jit.is_scripting()`` runs unchanged.
``save`` writes a traced module's graph and tensors in ``ember.export``'s format (data only:
loading runs no code from the file) and ``load`` reads it back as a module. What needs
TorchScript itself raises when called, naming what to do instead: ``save`` of a module that
was not traced, ``load`` of torch's TorchScript archives (they hold TorchScript code) and
compiling TorchScript source (``CompilationUnit``). ``ember.compile`` is ember's compiler.
"""
import builtins
import contextlib
import inspect
import io
import os
import types
import typing
import warnings
import zipfile
from collections import namedtuple

from .compiler.capture import capture, flatten
from .compiler.exc import Unsupported
from .compiler.guards import World
from .export import serialize
from .export.dynamic_shapes import Dim, ValueRanges, shapes_spec
from .export.exported_program import ExportedProgram, declared_program
from .fx.graph_module import CapturedGraphModule
from .nn.modules.module import Module

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule", "annotate",
           "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze", "fuser", "interface", "ignore",
           "isinstance", "load", "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution",
           "save", "script", "TracedModule",
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


_TRACING = [0]  # (is_tracing(): inside trace's recording)


class TracedModule(CapturedGraphModule):
    """What :func:`trace` returns: the ops one call of the function or module dispatched (its
    Python control flow taken as at that call, as torch's trace records it), replayed through
    the dispatcher (results carry autograd history). ``.graph`` and ``.code`` are the compiler's
    graph of that call; the module holds the traced module's parameters and buffers themselves,
    under their names. A call with tensors of other shapes or dtypes is recorded again for them
    (a graph bakes sizes in: a mean's count, a view's shape). ``save`` writes the example call's
    graph (see :func:`save`)."""

    def forward(self, *args, **kwargs):
        """The recorded graph run on these tensors (one recorded for their shapes and dtypes)."""
        flat = flatten((args, kwargs))
        key = tuple([(t.shape, t.dtype) for t in flat])
        traced = self.__dict__["_traced"]
        if key not in traced[1]:
            traced[1][key] = _record(traced[0], args, kwargs, CapturedGraphModule)
        module = self if traced[1][key] is None else traced[1][key]
        return CapturedGraphModule.run_at(module, flat, None)

    def save(self, f, _extra_files=None):
        """The example call's graph and this module's tensors written to ``f`` (see :func:`save`)."""
        save(self, f, _extra_files)


def _record(func, args, kwargs, cls):
    """The ``cls`` module of one call of ``func``: RuntimeError or
    :class:`~ember.compiler.exc.Unsupported` where it cannot be replayed (it ran backward, it
    needs a tensor's value in Python, or Python's own effects)."""
    world = World(func, args, kwargs)
    _TRACING[0] += 1
    try:
        _, cap = capture(func, args, kwargs, world, fullgraph=True, joint=False)
    finally:
        _TRACING[0] -= 1
    name = type(func).__name__ if isinstance(func, Module) else getattr(func, "__name__", "traced")
    return cls.from_capture(cap, world, name if name.isidentifier() else "traced")


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """A :class:`TracedModule` of ``func`` (a function or Module) called with ``example_inputs``
    (a tensor or a tuple) and ``example_kwarg_inputs``. Where the call cannot be recorded as a
    graph (a ``print``, an ``.item()`` read into Python, a backward), ``func`` itself, run
    eagerly, with a warning naming why. A DeprecationWarning, as torch's."""
    _deprecated("trace")
    args = example_inputs if type(example_inputs) is tuple else () if example_inputs is None else (example_inputs,)
    kwargs = dict(example_kwarg_inputs or {})
    try:
        traced = _record(func, args, kwargs, TracedModule)
    except (Unsupported, RuntimeError) as e:
        warnings.warn(f"ember.jit.trace: the call could not be recorded as a graph ({e}); the function "
                      f"itself is returned and runs eagerly", stacklevel=2)
        return func
    key = tuple([(t.shape, t.dtype) for t in flatten((args, kwargs))])
    # (not a submodule: its parameters are traced's own; the example call is kept for save, as torch's
    # _store_inputs keeps it)
    traced.__dict__["_traced"] = (func, {key: None}, args, kwargs)
    traced.train(func.training if isinstance(func, Module) else False)
    return traced


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
    """Write a :class:`TracedModule` (what :func:`trace` returns) to ``f`` (a path, written
    atomically, or a writable binary file): the graph of its example call and its tensors, in
    ``ember.export.save``'s format (a zip of JSON and raw bytes). ``_extra_files``: ``{name:
    text}`` stored beside them. Every size of the example's tensors is recorded ``Dim.AUTO``
    (``ember.export``): where the traced code allows, the loaded module runs at other sizes (a
    batch of 2 or more where the example's was), as torch's traced graphs do; sizes the code
    fixes (a Linear's features, a ``view`` to constants) stay the example's.

    Raises:
        NotImplementedError: ``m`` is not a traced module (a scripted or plain module has no
            recorded graph: save its ``state_dict`` with ``ember.save``, or trace it first).
    """
    if not builtins.isinstance(m, TracedModule):
        raise _not_supported("save", f"only a module made by ember.jit.trace can be saved (got "
                             f"{type(m).__name__}); save its state_dict with ember.save, or trace it first")
    serialize.save(_sized_program(m) or ExportedProgram(m, {}), f, extra_files=_extra_files)


def _auto(value):
    """export's ``dynamic_shapes`` entry making every size of ``value``'s tensors ``Dim.AUTO``."""
    if builtins.isinstance(value, Module):
        return None
    if hasattr(value, "dim") and hasattr(value, "shape"):
        return {d: Dim.AUTO for d in range(value.dim())}
    if builtins.isinstance(value, (tuple, list)):
        return type(value)(_auto(v) for v in value)
    if builtins.isinstance(value, dict):
        return {k: _auto(v) for k, v in value.items()}
    return None


def _sized_program(m):
    """The ExportedProgram of ``m``'s example call with its sizes ``Dim.AUTO``, or None where
    export cannot record it so (the static graph is saved then)."""
    func, _, args, kwargs = m.__dict__["_traced"]
    host = func if builtins.isinstance(func, Module) else types.SimpleNamespace(forward=func)
    was = getattr(func, "training", None)
    _TRACING[0] += 1
    try:
        if was is not None:
            func.train(m.training)
        bound = inspect.signature(host.forward).bind(*args, **kwargs)
        spec, auto = shapes_spec(host, args, kwargs, {n: _auto(v) for n, v in bound.arguments.items()})
        program = declared_program(func.__call__ if host is func else func, host.forward, args, kwargs, spec,
                                   auto, torch_names=host is func)
    except Exception:  # (whatever export refuses: varargs, unhashable structures, a size it cannot fit)
        return None
    finally:
        _TRACING[0] -= 1
        if was is not None:
            func.train(was)
    # (export leaves sizes 0 and 1 out of a range fitted at larger ones; a trace's graph runs at
    # any size, as torch's: a batch of 1 is the common case kept)
    program.range_constraints = {k: ValueRanges(min(v.lower, 1), v.upper) for k, v in program.range_constraints.items()}
    return program


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """The module :func:`save` wrote to ``f`` (a path or readable binary file): it runs the
    saved graph on inputs of the traced call's dtypes, at the sizes the graph allows (see
    :func:`save`), and holds its tensors
    (``state_dict()``); no code in the file is run. ``_extra_files`` (a dict) gets the saved
    extra files' contents (bytes, as torch's) for its keys. ``map_location``: ember has only the CPU.

    Raises:
        NotImplementedError: ``f`` is TorchScript's archive (written by torch: it holds TorchScript code).
        RuntimeError: ``f`` is neither (naming why); on call, inputs of another dtype or rank.
        AssertionError: on call, a size the graph fixes (``Guard failed: ...``, torch.export's).
    """
    data = _read(f)
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except zipfile.BadZipFile:
        names = []
    if any(n.endswith(("/constants.pkl", "/code/")) or "/code/" in n for n in names):
        raise _not_supported("load", "this is a TorchScript archive, which holds TorchScript code; load a "
                             "state_dict saved with torch.save into the model's Python class")
    try:
        program = serialize.load(io.BytesIO(data), extra_files=_extra_files)
    except ValueError as e:
        raise RuntimeError(f"ember.jit.load: {e}") from None
    for name in _extra_files or {}:
        _extra_files[name] = _extra_files[name].encode()
    return program.module()


def _read(f):
    if builtins.isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read()
    return f.read()


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
    """True while :func:`trace` records its example call."""
    return _TRACING[0] > 0


def script_method(fn):
    """``fn`` itself (the old ScriptModule API)."""
    return fn
