"""``torch.overrides``: the helpers for types that override ``__torch_function__``, and
``TorchFunctionMode`` (https://pytorch.org/docs/stable/notes/extending.html#extending-torch-python-api,
"Extending all torch API with Modes").

Importing this module turns overrides on (see :mod:`ember._tensor_subclass`): from then on a
tensor-like type that is no Tensor subclass (torch's ``ScalarTensor`` example, with its
``HANDLED_FUNCTIONS`` table) is handed every public function called with it. A Tensor
subclass turns them on by itself, when its class is made, and so does a mode, when entered.
"""
import contextlib
import functools
import inspect
import sys
import warnings

from . import _tensor_subclass
from ._tensor_subclass import (GENERATION, NOT_WRAPPED, PUBLIC_PATHS, enable, get_default_nowrap_functions,
                               handle_torch_function, has_torch_function, is_tensor_like, mode_stack, pop_mode,
                               push_mode, tensor_attributes, overloaded_args as _get_overloaded_args)
from ._tensor import Tensor
from ._C import _get_function_stack_at, _is_torch_function_mode_enabled, _len_torch_function_stack

__all__ = ["has_torch_function", "handle_torch_function", "is_tensor_like", "get_default_nowrap_functions",
           "TorchFunctionMode", "BaseTorchFunctionMode", "enable_reentrant_dispatch", "get_overridable_functions",
           "get_ignored_functions", "get_testing_overrides", "resolve_name", "is_tensor_method_or_property",
           "_get_current_function_mode", "_get_current_function_mode_stack", "_push_mode", "_pop_mode",
           "_pop_mode_temporarily", "_len_torch_function_stack", "_is_torch_function_mode_enabled",
           "_get_function_stack_at", "has_torch_function_unary", "has_torch_function_variadic",
           "wrap_torch_function", "_get_overloaded_args"]

enable()

# The functions of the namespaces no subclass argument can override (torch's list, as far as
# ember has them): besides the settings and type checks no mode sees (NOT_WRAPPED), the
# factories, which take no tensor (a mode sees them).
_FACTORIES = {"arange", "as_strided", "as_tensor", "asarray", "bartlett_window", "blackman_window", "can_cast",
              "empty", "empty_strided", "eye", "fftfreq", "rfftfreq", "fill", "from_numpy", "frombuffer", "full",
              "hamming_window", "hann_window", "kaiser_window", "linspace", "logspace", "normal", "ones",
              "promote_types", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm",
              "range", "result_type", "scalar_tensor", "sparse_coo_tensor", "tensor", "tril_indices",
              "triu_indices", "vander", "zeros"}
_IGNORED_TENSOR = {"new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor",
                   "new_zeros", "stride", "unflatten", "to_sparse_coo", "to_sparse_csr", "__torch_function__",
                   "__init_subclass__", "__iter__", "__hash__", "__delitem__"}


def has_torch_function_unary(obj):
    """``torch.overrides.has_torch_function_unary``: :func:`has_torch_function` of ``(obj,)``."""
    return has_torch_function((obj,))


def has_torch_function_variadic(*args):
    """``torch.overrides.has_torch_function_variadic``: :func:`has_torch_function` of ``args``."""
    return has_torch_function(args)


def wrap_torch_function(dispatcher):
    """``torch.overrides.wrap_torch_function``: a decorator making a Python function overridable:
    ``dispatcher(*args, **kwargs)`` gives the arguments to look at, and a call where one of them
    overrides ``__torch_function__`` (or a mode is on) is handed over with the decorated function
    as ``func``."""
    def decorator(function):
        @functools.wraps(function)
        def overridable(*args, **kwargs):
            relevant = tuple(dispatcher(*args, **kwargs))
            if has_torch_function(relevant):
                return handle_torch_function(overridable, relevant, *args, **kwargs)
            return function(*args, **kwargs)
        return overridable
    return decorator


class TorchFunctionMode:
    """``torch.overrides.TorchFunctionMode``: a mode, entered with ``with``, whose
    ``__torch_function__(func, types, args=(), kwargs=None)`` is called for every public
    function, Tensor method, operator and property used on this thread inside the block, with or
    without tensor arguments (``types``: the types of the arguments that override
    ``__torch_function__``, ``()`` for plain Tensors). While it runs, the mode is off this
    thread's stack: the functions it calls go to the next mode out (modes nest), then to the
    subclasses' ``__torch_function__``, then run. A subclass defines ``__torch_function__``
    (the base raises NotImplementedError); returning ``NotImplemented`` hands the call on to the
    subclass arguments. Inside ``torch._C.DisableTorchFunction`` no mode is called.
    """

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Handles one call of ``func(*args, **kwargs)``; a mode's own class defines it."""
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        """The mode made of ``cls(*args, **kwargs)``, with torch's warning that ``with Mode()`` suffices."""
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """``torch.overrides.BaseTorchFunctionMode``: a mode that runs each call as it is (a base
    for modes that change a few calls and pass the others on)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Runs ``func(*args, **kwargs)``."""
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    """This thread's innermost ``TorchFunctionMode`` (None: no mode)."""
    stack = mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack():
    """This thread's ``TorchFunctionMode`` objects, outermost first (a new list)."""
    return list(mode_stack())


def _push_mode(mode):
    """Puts ``mode`` on this thread's stack (what ``with mode:`` does)."""
    push_mode(mode)


def _pop_mode():
    """Takes this thread's innermost mode off its stack and returns it.

    Raises:
        RuntimeError: no mode is on the stack (torch's words).
    """
    return pop_mode()


@contextlib.contextmanager
def _pop_mode_temporarily():
    """Takes the innermost mode off this thread's stack for the ``with`` block (yields it)."""
    mode = pop_mode()
    try:
        yield mode
    finally:
        push_mode(mode)


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """``torch.overrides.enable_reentrant_dispatch``: torch restores its Python dispatcher's
    thread state inside the block; ember has no ``__torch_dispatch__`` layer, so the block runs
    as it is."""
    yield


def _namespaces():
    """``(torch's name, ember's module or Tensor)`` of each namespace whose functions are handed over."""
    spaces = [(path, sys.modules[name]) for name, path in PUBLIC_PATHS.items() if name in sys.modules]
    return spaces + [("torch.Tensor", Tensor)]


_LISTED = {}  # GENERATION -> _listing()'s answer


def _listing():
    """The overridable functions by namespace, the ignored ones, and the name of each function
    (also private and ignored ones), as :func:`get_overridable_functions` and :func:`resolve_name`
    give them: made again after the wrappers were rebound (see ``GENERATION``)."""
    enable()  # (the wrappers, as after this module's import: ember's test suite takes them off after each test)
    listed = _LISTED.get(GENERATION[0])
    if listed is None:
        _LISTED.clear()
        listed = _LISTED[GENERATION[0]] = _list()
    return listed


def _list():
    overridable, ignored = {}, {Tensor.as_subclass}
    names = {Tensor.as_subclass: "torch.Tensor.as_subclass"}
    for path, space in _namespaces():
        if space is Tensor:
            # (a method before the operator that is the same function: ``add_`` is ``__iadd__``)
            for name, value in sorted(tensor_attributes(), key=lambda item: item[0].startswith("__")):
                function = value.__get__ if isinstance(value, property) else value
                names.setdefault(function, f"{path}.{name}" + (".__get__" if isinstance(value, property) else ""))
                if name in _IGNORED_TENSOR:
                    ignored.add(function)
                else:
                    overridable.setdefault(value if isinstance(value, property) else Tensor, []).append(function)
            continue
        for name, value in vars(space).items():
            if not callable(value) or isinstance(value, type) or name.startswith("__") \
                    or not isinstance(value, (_tensor_subclass.Overridable, type(_namespaces))):
                continue
            names.setdefault(value, f"{path}.{name}")
            if name in NOT_WRAPPED or name in _FACTORIES:
                ignored.add(value)
            elif not (name.startswith("_") or name.endswith("_") or not name[0].islower()):
                overridable.setdefault(space, []).append(value)
    return overridable, ignored, names


def get_overridable_functions():
    """``torch.overrides.get_overridable_functions``: ``{namespace: [functions]}`` of the functions
    a ``__torch_function__`` is handed (the modules ``ember`` (torch), ``ember.nn.functional``,
    ``ember.special``, ``ember.linalg``, ``ember.fft`` once loaded, and ``Tensor`` for its methods
    and operators; each property under itself, by its ``__get__``)."""
    return {space: list(functions) for space, functions in _listing()[0].items()}


def get_ignored_functions():
    """``torch.overrides.get_ignored_functions``: the public functions no subclass argument can
    override (factories, global settings, type checks, ``Tensor.as_subclass``, ``Tensor.new_*``)."""
    return set(_listing()[1])


def resolve_name(f):
    """``torch.overrides.resolve_name``: the name of a function handed to ``__torch_function__``
    as torch writes it (``"torch.add"``, ``"torch.Tensor.add"``, ``"torch.Tensor.shape.__get__"``),
    evaluating to it under ``import ember as torch``; None for any other callable."""
    return _listing()[2].get(f)


def is_tensor_method_or_property(func):
    """``torch.overrides.is_tensor_method_or_property``: ``func`` (as handed to
    ``__torch_function__``) is a Tensor method or a property's ``__get__``: its first argument is
    the tensor."""
    overridable = _listing()[0]
    return any(func in functions for space, functions in overridable.items() if not isinstance(space, type(sys)))


def _dummy(function):
    """A function with ``function``'s signature that checks its arguments and returns -1."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # (a property's __get__: the tensor)
        signature = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)])

    def dummy(*args, **kwargs):
        signature.bind(*args, **kwargs)
        return -1
    dummy.__signature__, dummy.__name__ = signature, getattr(function, "__name__", "dummy")
    return dummy


def get_testing_overrides():
    """``torch.overrides.get_testing_overrides``: ``{function: dummy}`` for each overridable
    function, the dummy taking the function's arguments (``inspect.signature`` of both agree) and
    returning -1, as torch's table of lambdas (to test that a ``__torch_function__`` is handed each)."""
    return {f: _dummy(f) for functions in get_overridable_functions().values() for f in functions}
