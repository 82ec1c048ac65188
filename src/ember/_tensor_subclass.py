"""Tensor subclasses and tensor-like types: ``Tensor.as_subclass``, the default
``Tensor.__torch_function__`` and the hand-off of public functions and Tensor methods to
``__torch_function__`` (torch's "Extending torch Python API": "Extending torch with a
Tensor-like type" and "Subclassing torch.Tensor", https://pytorch.org/docs/stable/notes/extending.html).

torch checks every call of a public function for arguments that override
``__torch_function__``. ember's public functions are Python functions, so the check is a
wrapper, and a program that never has such an argument should not pay for it: nothing is
wrapped until overrides are turned on (:func:`enable`), which the first Tensor subclass whose
``__torch_function__`` is not :func:`disabled_torch_function_impl` does when its class is
made (as does importing ``ember.overrides``, for tensor-like types that are no subclass).
Then every function of the public namespaces (``ember``, ``ember.nn.functional``,
``ember.special``, ``ember.linalg``, ``ember.fft``) and every Tensor method, operator and
property is rebound to a wrapper (:class:`Overridable`, which compares and hashes equal to the
function it wraps, so ``HANDLED_FUNCTIONS[torch.mean]`` tables work whenever they were
filled). Names bound elsewhere (``from ember import mean``) stay plain, as with torch.fx.
A wrapped call whose arguments are all Tensors, numbers, strings or None pays one loop over
them (``x + y`` on small tensors: about 0.25 of 3.7 us); unwrapped, nothing.

``TorchFunctionMode`` objects (``ember.overrides``) sit on a per-thread stack here: entering one
turns the wrappers on too, and while any thread has a mode, every wrapped call looks at its own
thread's stack (:func:`_handle`: the innermost mode first, off the stack while it runs).
"""
import functools
import sys
import threading
import types

from ._ops.core import named

__all__ = ["TensorSubclassing", "Overridable", "enable", "enabled", "disable", "DisableTorchFunctionSubclass",
           "DisableTorchFunction", "disabled_torch_function_impl", "has_torch_function",
           "handle_torch_function", "is_tensor_like", "get_default_nowrap_functions", "is_torch_function_enabled",
           "push_mode", "pop_mode", "mode_stack", "is_torch_function_mode_enabled", "tensor_attributes",
           "wrap_namespace", "public_name", "NOT_WRAPPED", "PUBLIC_PATHS", "GENERATION",
           "converts_results", "custom_torch_function", "torch_function_state", "OwnReads",
           "CallersReads", "overloaded_args"]

_NAMESPACES = ("ember", "ember.nn.functional", "ember.special", "ember.linalg", "ember.fft")
PUBLIC_PATHS = {"ember": "torch", "ember.nn.functional": "torch.nn.functional", "ember.special": "torch.special",
                 "ember.linalg": "torch.linalg", "ember.fft": "torch.fft"}
# The Tensor dunders torch hands to ``__torch_function__`` (besides every public method and property).
# The binary operators: where every handler declines, they give NotImplemented, so that Python
# tries the other operand and raises its "unsupported operand type(s)" TypeError, as torch's.
_BINARY = {f"__{form}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
                                        "or", "xor", "lshift", "rshift") for form in ("", "r", "i")} | \
    {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}
# The Tensor dunders torch hands to ``__torch_function__`` (besides every public method and property).
_DUNDERS = _BINARY | {"__neg__", "__pos__", "__abs__", "__invert__", "__getitem__", "__setitem__", "__repr__",
                      "__str__", "__format__", "__len__", "__reversed__", "__contains__", "__float__", "__int__",
                      "__index__", "__bool__", "__complex__", "__array__"}
# The operators torch hands over as the method they run (``s + 1`` as ``Tensor.add``).
_OPERATOR_METHODS = {"__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_",
                     "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div",
                     "__itruediv__": "div_", "__ifloordiv__": "floor_divide_", "__mod__": "remainder",
                     "__imod__": "remainder_", "__pow__": "pow", "__ipow__": "pow_", "__matmul__": "matmul",
                     "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor", "__ne__": "ne",
                     "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__neg__": "neg",
                     "__pos__": "positive", "__abs__": "abs", "__str__": "__repr__"}
# (``grad``: the default returns it unconverted, and its non-leaf warning names the caller's line)
_NOT_OVERRIDABLE = {"as_subclass", "grad"}
# The functions torch hands to no ``__torch_function__`` nor mode: seeding (``torch.manual_seed is
# torch.random.manual_seed``), the global settings and the checks of a Python object's type.
NOT_WRAPPED = {"manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "is_tensor", "is_storage",
               "typename", "compile", "load", "save", "vmap", "cond", "set_printoptions", "get_default_dtype",
               "set_default_dtype", "get_default_device", "set_default_device", "set_default_tensor_type",
               "is_grad_enabled", "is_inference_mode_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
               "set_anomaly_enabled", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
               "is_deterministic_algorithms_warn_only_enabled", "get_deterministic_debug_mode",
               "set_deterministic_debug_mode", "get_num_threads", "set_num_threads", "get_num_interop_threads",
               "set_num_interop_threads", "get_float32_matmul_precision", "set_float32_matmul_precision",
               "set_warn_always", "is_warn_always_enabled", "is_autocast_enabled", "get_autocast_dtype"}
_ATOMS = (int, float, bool, str, type(None))
_PLAIN = set(_ATOMS)  # and Tensor: the argument types a wrapper looks no further into


class _State(threading.local):
    """This thread's depth of ``DisableTorchFunction[Subclass]`` regions (``all_disabled``: of
    ``DisableTorchFunction`` ones, which turn the modes off too) and its stack of
    ``TorchFunctionMode`` objects, innermost last (torch's state is per thread)."""

    def __init__(self):
        self.disabled = 0
        self.all_disabled = 0
        self.modes = []
        self.callers = []  # the depths outside each ember's own read (:class:`OwnReads`)


_STATE = _State()
# One entry per mode on any thread's stack: while empty, a wrapper looks at no thread's stack.
_ANY_MODE = []
_ON = []  # non-empty once the wrappers are bound
_TENSOR = []  # the Tensor class: the first class made from TensorSubclassing
_WRAPPERS = {}  # function -> its Overridable
_REBOUND = []  # (owner, name, what it held before: _MISSING where it inherited it), for disable()
_MISSING = object()
GENERATION = [0]  # counts the rebindings (enable, disable, a namespace wrapped): listings made before are stale


def disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """The ``__torch_function__`` of a subclass that opts out (``torch._C._disabled_torch_function_impl``,
    which ``nn.Parameter`` uses): its instances are not overriding arguments, and a call
    runs ``func`` as on a plain Tensor, its results not converted."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


class DisableTorchFunctionSubclass:
    """``torch._C.DisableTorchFunctionSubclass``: inside the ``with`` block (this thread),
    ``__torch_function__`` overrides are not called: functions run on subclasses as on plain
    Tensors (how the default ``Tensor.__torch_function__`` runs ``func``)."""

    def __enter__(self):
        _STATE.disabled += 1
        return self

    def __exit__(self, *exc):
        _STATE.disabled -= 1


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """``torch._C.DisableTorchFunction``: as :class:`DisableTorchFunctionSubclass`, and the
    ``TorchFunctionMode`` objects on this thread's stack are not called either."""

    def __enter__(self):
        _STATE.all_disabled += 1
        return super().__enter__()

    def __exit__(self, *exc):
        _STATE.all_disabled -= 1
        super().__exit__(*exc)


class OwnReads(DisableTorchFunction):
    """``DisableTorchFunction`` for ember's own reads of a call's tensors (a compiled call's
    guards read ``t.requires_grad``: no call a mode or subclass should see), inside which
    :func:`torch_function_state` still tells the caller's state."""

    def __enter__(self):
        _STATE.callers.append((_STATE.disabled, _STATE.all_disabled))
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        _STATE.callers.pop()


class CallersReads:
    """Inside :class:`OwnReads` (a compiled call's recording), the caller's overrides and modes
    on again while it runs: the user's function a recording runs is seen by them, as eagerly."""

    def __enter__(self):
        self.saved = _STATE.disabled, _STATE.all_disabled, _STATE.callers
        if _STATE.callers:
            (_STATE.disabled, _STATE.all_disabled), _STATE.callers = _STATE.callers[0], []
        return self

    def __exit__(self, *exc):
        _STATE.disabled, _STATE.all_disabled, _STATE.callers = self.saved


def push_mode(mode):
    """``torch._C._push_on_torch_function_stack``: ``mode`` becomes this thread's innermost
    ``TorchFunctionMode`` (the public functions are wrapped from then on: :func:`enable`)."""
    enable()
    _STATE.modes.append(mode)
    _ANY_MODE.append(None)


def pop_mode():
    """``torch._C._pop_torch_function_stack``: removes and returns this thread's innermost mode.

    Raises:
        RuntimeError: the stack is empty (torch's words).
    """
    if not _STATE.modes:
        raise RuntimeError("trying to pop from empty mode stack")
    _ANY_MODE.pop()
    return _STATE.modes.pop()


def mode_stack():
    """This thread's ``TorchFunctionMode`` stack, outermost first (the list itself)."""
    return _STATE.modes


def is_torch_function_mode_enabled():
    """``torch._C._is_torch_function_mode_enabled()``: a mode is on this thread's stack, outside
    a ``DisableTorchFunction`` block."""
    return bool(_STATE.modes) and not _STATE.all_disabled


def is_torch_function_enabled():
    """``torch._C._is_torch_function_enabled()``: False inside a ``DisableTorchFunction[Subclass]`` block."""
    return not _STATE.disabled


def enabled():
    """Whether the public functions and Tensor methods are wrapped (see the module's page)."""
    return bool(_ON)


def _overrides(t):
    if t is _TENSOR[0] or getattr(t, "__torch_function__", disabled_torch_function_impl) is disabled_torch_function_impl:
        return False
    if any(c.__module__ == "torch._C" for c in t.__mro__):  # (a real torch tensor handed to ember: from_dlpack)
        _PLAIN.add(t)  # (its __torch_function__ would call the ember function back: no override of ember's)
        return False
    return True


def overloaded_args(values):
    """``torch.overrides._get_overloaded_args``: the arguments among ``values`` (and one level
    into lists and tuples) whose type overrides ``__torch_function__``, one per type, a subclass
    before its base, otherwise left to right."""
    found = []
    for v in values:
        for w in (v if type(v) in (list, tuple) else (v,)):
            t = type(w)
            if t in _ATOMS or t is _TENSOR[0] or not _overrides(t) or any(type(a) is t for a in found):
                continue
            at = next((i for i, a in enumerate(found) if issubclass(t, type(a))), len(found))
            found.insert(at, w)
    return found


def has_torch_function(relevant_args):
    """``torch.overrides.has_torch_function``: whether any of ``relevant_args`` (an iterable) has a
    type overriding ``__torch_function__`` (plain Tensors and Parameters do not), while enabled;
    while a mode is on, whether there is any argument (the mode sees the call)."""
    relevant_args = tuple(relevant_args)
    if is_torch_function_mode_enabled():
        return bool(relevant_args)
    return not _STATE.disabled and bool(overloaded_args(relevant_args))


def converts_results(cls):
    """Whether ``cls`` keeps the default ``Tensor.__torch_function__`` (each function run as on
    plain Tensors, its tensor results made ``cls`` instances): a compiled function's graph holds
    such a subclass's ops, and its results are converted as eager's (see ``ember.compile``)."""
    return getattr(cls.__torch_function__, "__func__", None) is TensorSubclassing.__torch_function__.__func__


def custom_torch_function(relevant_args):
    """Whether a call with ``relevant_args`` would be handed to a tensor-like type's
    ``__torch_function__`` (an overriding argument that is no Tensor: a compiled function runs
    such a call eagerly; a Tensor subclass's own and a mode's are traced, see ``ember.compile``)."""
    return not _STATE.disabled and any(not isinstance(a, _TENSOR[0]) for a in overloaded_args(tuple(relevant_args)))


def torch_function_state():
    """What a call's ops depend on of this thread's ``__torch_function__`` state: the types of its
    ``TorchFunctionMode`` objects, outermost first, and whether ``DisableTorchFunctionSubclass`` or
    ``DisableTorchFunction`` is on (torch's dynamo guards the mode stack's types, so a call under
    another mode, or none, is another graph; another object of the same mode class is not)."""
    state = _STATE
    if not (_ANY_MODE or state.disabled):  # (one look at this thread's state: a compiled call's guards read this)
        return ()
    disabled, all_disabled = state.callers[-1] if state.callers else (state.disabled, state.all_disabled)
    if not (state.modes or disabled):
        return ()
    return tuple(map(type, state.modes)), bool(disabled), bool(all_disabled)


def is_tensor_like(inp):
    """``torch.overrides.is_tensor_like``: ``inp`` is a Tensor or its type has a ``__torch_function__``."""
    return isinstance(inp, _TENSOR[0]) or hasattr(type(inp), "__torch_function__")


def get_default_nowrap_functions():
    """``torch.overrides.get_default_nowrap_functions``: the functions whose results the default
    ``Tensor.__torch_function__`` hands back unconverted (the ``grad``, ``_grad`` and ``_base`` getters)."""
    tensor = _TENSOR[0]
    return {tensor.grad.__get__, tensor._grad.__get__, tensor._base.__get__}


def public_name(function):
    """The name torch gives ``function`` in its errors: ``torch.add``, ``torch.nn.functional.relu``,
    ``torch.Tensor.add`` (else its module's and its own)."""
    module = getattr(function, "__module__", "") or ""
    for space, path in PUBLIC_PATHS.items():
        if getattr(sys.modules.get(space), function.__name__, None) == function:
            return f"{path}.{function.__name__}"
    if getattr(_TENSOR[0], function.__name__, None) == function:
        return f"torch.Tensor.{function.__name__}"
    return f"{module}.{function.__name__}"


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """``torch.overrides.handle_torch_function``: calls the innermost ``TorchFunctionMode`` (taken
    off this thread's stack while it runs, so that the functions it calls go to the next one),
    then the ``__torch_function__`` of each overriding argument among ``relevant_args``
    (subclasses first), each with ``(public_api, types, args, kwargs)``, and returns the first
    result that is not ``NotImplemented``.

    Raises:
        TypeError: every handler returned ``NotImplemented`` (torch's words).
    """
    return _handle(public_api, overloaded_args(tuple(relevant_args)), args, kwargs)


def _handle(public_api, overloaded, args, kwargs, binary=False):
    kinds = tuple(type(a) for a in overloaded)
    mode = None
    if is_torch_function_mode_enabled():
        mode = pop_mode()
        try:
            result = mode.__torch_function__(public_api, kinds, args, kwargs)
        finally:
            _STATE.modes.append(mode)
            _ANY_MODE.append(None)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    if binary:  # (NotImplemented where every handler declines: Python's operator protocol)
        return NotImplemented
    name = public_name(public_api)
    if name.startswith("torch.nn.functional."):
        raise TypeError(f"no implementation found for '{name}' on types that implement "
                        f"__torch_function__: {list(kinds)}" + ("" if mode is None else f" nor in mode {mode}"))
    listed = ("" if mode is None else f"  - mode object {mode}\n") + \
        "".join(f"  - tensor subclass {t}\n" for t in kinds)
    raise TypeError(f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned "
                    f"NotImplemented:\n\n{listed}\nFor more information, try re-running with "
                    "TORCH_LOGS=not_implemented")


class Overridable:
    """A public function that hands a call with an overriding argument to ``__torch_function__``
    (:func:`handle_torch_function`, with itself as ``func``) and runs the function otherwise (a
    call whose arguments are all Tensors, numbers, strings or None pays one loop). It compares
    and hashes equal to the function (a ``HANDLED_FUNCTIONS`` table filled before overrides
    were on still matches) and pickles as the function."""

    def __init__(self, function):
        functools.update_wrapper(self, function)

    def __call__(self, *args, **kwargs):
        if _ANY_MODE:
            return _dispatch(self, self.__wrapped__, args, kwargs)
        for a in args:
            if type(a) not in _PLAIN:
                return _dispatch(self, self.__wrapped__, args, kwargs)
        if kwargs:
            for a in kwargs.values():
                if type(a) not in _PLAIN:
                    return _dispatch(self, self.__wrapped__, args, kwargs)
        return self.__wrapped__(*args, **kwargs)

    def __eq__(self, other):  # (NotImplemented: another wrapper of this one, fx's, decides)
        if other is self or other is self.__wrapped__ or getattr(other, "__wrapped__", None) is self.__wrapped__:
            return True
        return NotImplemented

    def __hash__(self):
        return hash(self.__wrapped__)

    def __repr__(self):
        return repr(self.__wrapped__)

    def __reduce__(self):
        return _same, (self.__wrapped__,)


def _same(function):
    return function


def _method(function, name):
    """Tensor's method ``function`` as :class:`Overridable` does, as a function (so that it binds
    as a method at C speed) called ``name``; ``func`` is the method in its ``public`` attribute
    (itself, or the method torch hands over for an operator)."""
    binary = name in _BINARY

    def call(*args, **kwargs):
        if _ANY_MODE:
            return _dispatch(call.public, function, args, kwargs, binary)
        for a in args:
            if type(a) not in _PLAIN:
                return _dispatch(call.public, function, args, kwargs, binary)
        if kwargs:
            for a in kwargs.values():
                if type(a) not in _PLAIN:
                    return _dispatch(call.public, function, args, kwargs, binary)
        return function(*args, **kwargs)
    functools.update_wrapper(call, function)
    # named as Tensor's attribute, so that pickle finds it there (``pickle.dumps(Tensor.view)``)
    call.__name__, call.public, call.__module__ = name, call, _TENSOR[0].__module__
    call.__qualname__ = f"{_TENSOR[0].__qualname__}.{name}"
    return call


def _dispatch(public, function, args, kwargs, binary=False):
    values = args + tuple(kwargs.values()) if kwargs else args
    state = _STATE
    if state.modes and not state.all_disabled:  # (the mode sees every call; subclasses only while enabled)
        return _handle(public, () if state.disabled else overloaded_args(values), args, kwargs, binary)
    if not state.disabled:
        overloaded = overloaded_args(values)
        if overloaded:
            return _handle(public, overloaded, args, kwargs, binary)
    return function(*args, **kwargs)


def _overridable_getter(prop):
    """``prop`` with a getter that hands an overriding tensor to ``__torch_function__`` (``func``:
    the new property's ``__get__``, as torch's ``Tensor.shape.__get__``)."""
    tensor = _TENSOR[0]

    def get(self):
        if type(self) is not tensor or _ANY_MODE:
            return _dispatch(wrapped.__get__, prop.fget, (self,), {})
        return prop.fget(self)
    wrapped = property(get, prop.fset, prop.fdel, prop.__doc__)
    return wrapped


def enable():
    """Rebinds the public functions and Tensor's methods, operators and properties to
    :class:`Overridable` wrappers, once (see the module's page); later calls do nothing."""
    if _ON:
        return
    _ON.append(True)
    for name in _NAMESPACES:
        if name in sys.modules:
            wrap_namespace(sys.modules[name])
    tensor = _TENSOR[0]
    for name, value in tensor_attributes():
        _rebind(tensor, name, _tensor_wrapper(value, name))
    for operator, method in _OPERATOR_METHODS.items():
        if hasattr(vars(tensor).get(operator), "public") and hasattr(vars(tensor).get(method), "public"):
            vars(tensor)[operator].public = vars(tensor)[method]


def tensor_attributes():
    """``(name, value)`` of each Tensor method, operator and property (with a getter) handed to
    ``__torch_function__`` (its own or a base's, as Tensor's attribute lookup finds them)."""
    seen = set()
    for klass in _TENSOR[0].__mro__[:-1]:
        for name, value in list(vars(klass).items()):
            if name in seen or name in _NOT_OVERRIDABLE or (name.startswith("_") and name not in _DUNDERS):
                continue
            seen.add(name)
            if isinstance(value, property) and value.fget is not None or isinstance(value, types.FunctionType):
                yield name, value


def wrap_namespace(module):
    """Rebinds the public functions of ``module`` to :class:`Overridable` wrappers, while overrides
    are on (a namespace loaded later, ``ember.nn.functional``, calls this as it loads)."""
    if not _ON:
        return
    for name, value in list(vars(module).items()):
        if (not name.startswith("_") or name == "_assert") and isinstance(value, types.FunctionType) \
                and name not in NOT_WRAPPED:
            if value not in _WRAPPERS:  # one wrapper per function: its names in all namespaces stay one object
                _WRAPPERS[value] = Overridable(value)
            _rebind(module, name, _WRAPPERS[value])


def _tensor_wrapper(value, name):
    return _overridable_getter(value) if isinstance(value, property) else _method(value, name)


def rebase(owner, name, patched, original, inherited=False):
    """Where :func:`enable` wrapped ``owner.name`` while it held ``patched`` (a compiled call's
    recording patches Tensor's methods, and a mode entered inside the call enables the wrappers),
    makes the wrapper wrap ``original`` (what the patch replaced; ``inherited``: from a base class),
    and :func:`disable` put that back; returns whether it did (called as the recording ends)."""
    for k, (o, n, held) in enumerate(_REBOUND):
        if o is owner and n == name and held is patched:
            _REBOUND[k] = (o, n, _MISSING if inherited else original)
            setattr(owner, name, _tensor_wrapper(original, name) if owner is _TENSOR[0]
                    else _WRAPPERS.setdefault(original, Overridable(original)))
            GENERATION[0] += 1
            return True
    return False


def _rebind(owner, name, value):
    GENERATION[0] += 1
    _REBOUND.append((owner, name, vars(owner).get(name, _MISSING)))
    setattr(owner, name, value)


def disable():
    """Puts back what :func:`enable` rebound (the plain functions and Tensor's own methods), so
    that plain calls pay nothing again; subclasses made before then are no longer handed to
    ``__torch_function__`` until the next :func:`enable`. ember's test suite does this after each
    test, so that one test's subclass leaves no wrappers to the tests after it."""
    GENERATION[0] += 1
    while _REBOUND:
        owner, name, value = _REBOUND.pop()
        if value is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, value)
    _ON.clear()


def _convert(result, cls):
    """``result`` with its Tensors (also inside tuples and lists) made ``cls`` instances by
    ``as_subclass`` (torch's ``torch._tensor._convert``)."""
    if isinstance(result, _TENSOR[0]) and not isinstance(result, cls):
        return result.as_subclass(cls)
    if isinstance(result, (tuple, list)):
        items = [_convert(r, cls) for r in result]
        if hasattr(result, "_fields"):
            return type(result)(*items)
        converted = type(result)(items)
        if hasattr(result, "__dict__"):
            converted.__dict__.update(result.__dict__)
        return converted
    return result


class TensorSubclassing:
    """The subclassing part of :class:`~ember.Tensor`: ``as_subclass``, the default
    ``__torch_function__``, and the class hook that turns overrides on."""
    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not _TENSOR:
            _TENSOR.append(cls)
            _PLAIN.add(cls)
        elif getattr(cls, "__torch_function__", None) is not disabled_torch_function_impl:
            enable()
        else:  # (a Parameter: an argument a wrapper need not look into)
            _PLAIN.add(cls)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """``torch.Tensor.__torch_function__``: runs ``func(*args, **kwargs)`` with overrides
        disabled and returns its Tensors as ``cls`` instances (except for the functions of
        :func:`get_default_nowrap_functions`); ``NotImplemented`` when some type in ``types`` is
        not a base of ``cls`` (https://pytorch.org/docs/stable/notes/extending.html#subclassing-torch-tensor)."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
            if func in get_default_nowrap_functions():
                return result
            return _convert(result, cls)

    def as_subclass(self, cls):
        """``torch.Tensor.as_subclass``: a ``cls`` instance sharing this tensor's storage and
        version counter, attached to its autograd graph (an ``AliasBackward0`` node while
        gradients are recorded), https://pytorch.org/docs/stable/generated/torch.Tensor.as_subclass.html.

        Raises:
            TypeError: ``cls`` is not a subclass of Tensor (torch's words).
        """
        tensor = _TENSOR[0]
        if not (isinstance(cls, type) and issubclass(cls, tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        with DisableTorchFunctionSubclass():
            alias = named(self.view(self.shape), "AliasBackward0") if self.requires_grad else self.detach()
        result = object.__new__(cls)
        for slot in tensor.__slots__:
            if slot != "__weakref__":
                descriptor = tensor.__dict__[slot]
                try:
                    descriptor.__set__(result, descriptor.__get__(alias))
                except AttributeError:  # (a slot the alias never set: persistent, _is_buffer)
                    pass
        return result
