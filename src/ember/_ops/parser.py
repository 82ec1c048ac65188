"""PyTorch's argument parser, for the calls it refuses: an op's signatures written as torch
prints them (``"Tensor input, int dim, bool keepdim = False, *, Tensor out = None"``), and
the TypeError torch raises when a call matches none of them, in its words (a missing
argument, one too many, an unknown keyword, a wrong type, or "received an invalid
combination of arguments" listing the signatures).

The check runs only after the op failed: :func:`parsed` wraps a public function so that a
call torch's parser refuses raises torch's TypeError instead of whatever the op's body hit,
and a call torch accepts keeps the op's own error. Tensor methods take the same signatures
without ``input`` and ``out`` (the ``method`` attribute, which the Tensor table binds).
"""
import functools
import inspect
import numbers

import numpy as np

from .. import _dtype
from .._size import type_name
from .._tensor import Tensor

__all__ = ["parsed", "refusal", "method_refusal", "method_form"]

# torch's signatures of the ops whose refusals are worded here (``~`` marks a hidden one: it
# accepts calls but is not listed in messages, as torch's deprecated overloads; ``@`` one the
# Tensor method lacks; a type ending in ``?`` takes None, unprinted; ``int[]``, printed "tuple of
# ints", is torch's list without a length, which takes one int only as the sole positional
# argument of a method (``x.flip(0)``; ``torch.flip(x, 0)`` and ``dims=0`` are refused), where
# "tuple of ints" (torch's ``int[1]``) takes an int anywhere).
_TENSOR_OR_NUMBER = ("Tensor input, Tensor other, *, Tensor out = None", "Tensor input, Number other, *, Tensor out = None")
SIGNATURES = {
    "logsumexp": ("Tensor input, tuple of ints dim, bool keepdim = False, *, Tensor out = None",),
    "cat": ("tuple of Tensors tensors, int dim = 0, *, Tensor out = None",),
    "stack": ("tuple of Tensors tensors, int dim = 0, *, Tensor out = None",),
    "concat": ("tuple of Tensors tensors, int dim = 0, *, Tensor out = None",),
    "concatenate": ("tuple of Tensors tensors, int dim = 0, *, Tensor out = None",),
    **{name: ("tuple of Tensors tensors, *, Tensor out = None",) for name in ("hstack", "vstack", "dstack",
                                                                             "column_stack", "row_stack")},
    "clamp": ("Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None",
              "Tensor input, Number min = None, Number max = None, *, Tensor out = None"),
    "add": ("Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None",
            "~Tensor input, Number alpha, Tensor other, *, Tensor out = None"),
    "sub": ("Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None",
            "~Tensor input, Number alpha, Tensor other, *, Tensor out = None"),
    "mul": ("Tensor input, Tensor other, *, Tensor out = None",),
    "max": ("Tensor input, *, Tensor out = None", "Tensor input, Tensor other, *, Tensor out = None",
            "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None"),
    "min": ("Tensor input, *, Tensor out = None", "Tensor input, Tensor other, *, Tensor out = None",
            "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None"),
    "softmax": ("Tensor input, int dim, torch.dtype dtype = None, *, Tensor out = None",),
    "log_softmax": ("Tensor input, int dim, torch.dtype dtype = None, *, Tensor out = None",),
    "transpose": ("Tensor input, int dim0, int dim1",),
    "matmul": ("Tensor input, Tensor other, *, Tensor out = None",),
    "mm": ("Tensor input, Tensor mat2, *, Tensor out = None",
           "@Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None"),
    "bmm": ("Tensor input, Tensor mat2, *, Tensor out = None",
            "@Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None"),
    "gather": ("Tensor input, int dim, Tensor index, *, bool sparse_grad = False, Tensor out = None",),
    "cumsum": ("Tensor input, int dim, *, torch.dtype dtype = None, Tensor out = None",),
    "cumprod": ("Tensor input, int dim, *, torch.dtype dtype = None, Tensor out = None",),
    "argmax": ("Tensor input, int dim = None, bool keepdim = False, *, Tensor out = None",),
    "argmin": ("Tensor input, int dim = None, bool keepdim = False, *, Tensor out = None",),
    **{name: ("Tensor input, *, Tensor out = None",
              "Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None",
              "Tensor input, int dim, bool keepdim = False, *, Tensor out = None") for name in ("all", "any")},
    **{name: ("Tensor input, tuple of ints dim = (), bool keepdim = False, *, Tensor out = None",)
       for name in ("amax", "amin")},
    **{name: ("Tensor input, tuple of ints? dim = None, bool keepdim = False, *, torch.dtype dtype = None, "
              "Tensor out = None",) for name in ("nansum", "nanmean")},
    "unsqueeze": ("Tensor input, int dim",),
    "select": ("Tensor input, int dim, int index",),
    "index_select": ("Tensor input, int dim, Tensor index, *, Tensor out = None",),
    "maximum": ("Tensor input, Tensor other, *, Tensor out = None",),
    "masked_fill": ("Tensor input, Tensor mask, Tensor value", "Tensor input, Tensor mask, Number value"),
    "narrow": ("Tensor input, int dim, Tensor start, int length", "Tensor input, int dim, int start, int length"),
    "outer": ("Tensor input, Tensor vec2, *, Tensor out = None",),
    "dot": ("Tensor input, Tensor tensor, *, Tensor out = None",),
    "trace": ("Tensor input",),
    "lerp": ("Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
             "Tensor input, Tensor end, Number weight, *, Tensor out = None"),
    **{name: _TENSOR_OR_NUMBER for name in ("eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal",
                                             "greater", "greater_equal")},
    "addmm": ("Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, Tensor out = None",
              "@Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, "
              "Number alpha = 1, Tensor out = None",
              "~Tensor input, Number beta, Tensor mat1, Tensor mat2, *, Tensor out = None"),
    "median": ("Tensor input", "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None"),
    "nanmedian": ("Tensor input", "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None"),
    "sum": ("Tensor input, *, torch.dtype dtype = None",
            "Tensor input, tuple of ints? dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None"),
    "mean": ("Tensor input, *, torch.dtype dtype = None, Tensor out = None",
             "Tensor input, tuple of ints? dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None"),
    "prod": ("Tensor input, *, torch.dtype dtype = None",
             "Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None"),
    "movedim": ("Tensor input, int source, int destination",
                "Tensor input, tuple of ints source, tuple of ints destination"),
    "squeeze": ("Tensor input", "Tensor input, int dim", "Tensor input, tuple of ints dim"),
    "index_add": ("Tensor input, int dim, Tensor index, Tensor source, *, Number alpha = 1, Tensor out = None",),
    "flip": ("Tensor input, int[] dims, *, Tensor out = None",),
    "permute": ("Tensor input, int[] dims",),
    "reshape": ("Tensor input, int[] shape",),
    "tile": ("Tensor input, int[] dims",),
    "broadcast_to": ("Tensor input, int[] size",),
    "tril": ("Tensor input, int diagonal = 0, *, Tensor out = None",),
    "normal": ("Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
               "Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None",
               "float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
               "float mean, float std, int[] size, *, torch.Generator generator = None, Tensor out = None, "
               "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
               "bool pin_memory = False, bool requires_grad = False"),
    "as_strided": ("Tensor input, int[] size, int[] stride, int? storage_offset = None",),
    "where": ("Tensor condition", "Tensor condition, Tensor input, Tensor other, *, Tensor out = None",
              "Tensor condition, Number self, Tensor other", "Tensor condition, Tensor input, Number other",
              "Tensor condition, Number self, Number other"),
    "sort": ("Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None",
             "Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None"),
    "randint": tuple(f"{low}int high, int[] size, *, {generator}Tensor out = None, torch.dtype dtype = None, "
                     "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
                     "bool requires_grad = False" for low in ("", "int low, ")
                     for generator in ("torch.Generator generator, ", "")),
}

# torch's Tensor-method signatures of ops whose functions are not parsed here: no method takes
# ``out``, and a method given it raises the parser's TypeError, worded from these
_OTHER = ("Tensor other", "Number other")
METHOD_SIGNATURES = {
    **{name: _OTHER for name in ("true_divide", "floor_divide", "remainder", "fmod", "xlogy", "copysign", "bitwise_and",
                                 "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")},
    "multiply": _OTHER, "pow": ("Tensor exponent", "Number exponent"), "float_power": ("Tensor exponent", "Number exponent"),
    "clamp_min": ("Tensor min", "Number min"), "clamp_max": ("Tensor max", "Number max"),
    "div": ("Tensor other", "Tensor other, *, str rounding_mode", "Number other, *, str rounding_mode",
            "~Number other"),
    "divide": ("Tensor other", "Tensor other, *, str rounding_mode", "Number other", "Number other, *, str rounding_mode"),
    "subtract": ("Tensor other, *, Number alpha = 1", "Number other, Number alpha = 1"),
    "clip": ("Tensor min = None, Tensor max = None", "Number min = None, Number max = None"),
    **{name: ("tuple of ints dim, bool unbiased = True, bool keepdim = False",
              "tuple of ints dim = None, *, Number correction = None, bool keepdim = False", "bool unbiased = True")
       for name in ("var", "std")},
    "round": ("", "*, int decimals"),
}

# torch's signatures of Tensor methods without a function form, whose bodies word their refusals
# with them (:func:`method_refusal`)
_TO_REST = "bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None"
METHOD_ONLY_SIGNATURES = {
    "view": ("torch.dtype dtype", "int[] size"),
    "where": ("Tensor condition, Tensor other", "Tensor condition, Number other"),
    "to": (f"torch.device device = None, torch.dtype dtype = None, {_TO_REST}", f"torch.dtype dtype, {_TO_REST}",
           f"Tensor tensor, {_TO_REST}"),
}

# torch's methods that take no argument at all (its "takes no keyword arguments"), and the ones
# written in Python (their messages name ``Tensor.``)
NO_ARGUMENTS = {
    "frexp", "neg", "negative", "abs", "absolute", "sign", "sgn", "angle", "conj_physical", "exp", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "tanh", "sigmoid", "erf", "floor", "ceil", "trunc", "fix", "frac", "relu",
    "square", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not", "det", "inverse", "geqrf", "asinh", "acosh",
    "atanh", "arcsinh", "arccosh", "arctanh", "exp2", "erfc", "erfinv", "sinc", "lgamma", "digamma", "i0", "deg2rad",
    "rad2deg", "signbit", "isposinf", "isneginf", "trace", "logdet", "matrix_exp", "msort", "adjoint", "argwhere",
    "corrcoef", "fliplr", "flipud", "is_signed", "isreal", "positive", "dense_dim", "sparse_dim"}
PYTHON_METHODS = {"norm", "lu"}

# the ops whose Tensor parameters take a Python number too, as torch's parser lets them
NUMBERS_AS_TENSORS = {"add", "sub", "mul", "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal",
                      "greater", "greater_equal"}


class _Parameter:
    """One parameter of a signature: its type as torch prints it, name, default text (None
    when required) and whether only a keyword reaches it."""
    __slots__ = ("type", "name", "default", "keyword_only", "numbers", "takes_none", "no_int")

    def __init__(self, text, keyword_only, numbers=False):
        declaration, _, default = text.partition(" = ")
        written, _, self.name = declaration.rpartition(" ")
        self.no_int = written == "int[]"
        self.type, self.default = "tuple of ints" if self.no_int else written.rstrip("?"), default or None
        self.takes_none = default == "None" or written.endswith("?")
        self.keyword_only = keyword_only
        self.numbers = numbers and self.type == "Tensor"

    def accepts(self, value):
        """Whether ``value`` passes this parameter's type check."""
        if self.no_int:
            return _int_sequence(value)
        return ((value is None and self.takes_none) or _CHECKS.get(self.type, _anything)(value)
                or (self.numbers and _CHECKS["Number"](value)))


class _Signature:
    """One of an op's signatures, parsed from torch's text."""

    def __init__(self, text, numbers=False):
        self.hidden, self.function_only = text.startswith("~"), text.startswith("@")
        self.text = text.lstrip("~@").replace("?", "").replace("int[]", "tuple of ints")
        self.items = text.lstrip("~@").split(", ")  # (torch's reading: "()" has one item, "*" is one)
        star = self.items.index("*") if "*" in self.items else len(self.items) if self.text else 0
        self.params = [_Parameter(t, i > star, numbers) for i, t in enumerate(self.items) if t not in ("*", "")]
        self.numbers = numbers
        self.min_args = sum(p.default is None for p in self.params)
        self.max_positional = star
        self.varargs_ints = star == 1 and self.params[0].type == "tuple of ints"

    def method(self):
        """The Tensor method's form: without ``input`` and ``out`` (None when the function's
        first parameter is not the input)."""
        if self.function_only or self.items[0] != "Tensor input":
            return None
        items = [t for t in self.items[1:] if not t.endswith(" out = None")]
        return _Signature(("~" * self.hidden) + ", ".join(items[:-1] if items[-1:] == ["*"] else items), self.numbers)

    def refusal(self, name, args, kwargs):
        """None when the call matches; else torch's message naming what does not."""
        kwargs = {_NUMPY_NAMES.get(k, k): v for k, v in kwargs.items()}
        if len(args) > self.max_positional and not self._varargs(args):
            return self._extra_args(name, len(args))
        position = 0
        for index, param in enumerate(self.params):
            keyword = position >= len(args)
            if not keyword and param.keyword_only:
                return self._extra_args(name, len(args))
            if keyword and param.name not in kwargs:
                if param.default is None:
                    missing = [f'"{p.name}"' for p in self.params[index:] if p.default is None]
                    return (f"{name}() missing {len(missing)} required positional argument"
                            f"{'s' * (len(missing) == 1)}: {', '.join(missing)}")
                continue
            value = kwargs[param.name] if keyword else args[position]
            if not param.accepts(value):
                if not keyword and position == 0 and self._varargs(args):
                    position = len(args)
                    continue
                where = "" if keyword else f" (position {position + 1})"
                if not keyword and param.type == "tuple of ints" and isinstance(value, (tuple, list)):
                    return (f"{name}(): argument '{param.name}'{where} must be tuple of ints, but found element of "
                            f"type {_type_word(value[0])} at pos 0")
                return f"{name}(): argument '{param.name}'{where} must be {param.type}, not {_type_word(value)}"
            position += not keyword
        names = {p.name for p in self.params}
        for key in kwargs:
            if key not in names:
                return f"{name}() got an unexpected keyword argument '{key}'"
            if [p.name for p in self.params].index(key) < len(args):
                return f"{name}() got multiple values for argument '{key}'"
        return None

    def unpacked(self, name, args, kwargs):
        """torch's message for a matched call whose sequence holds a wrong element (its type
        check reads the first element only), or None."""
        kwargs = {_NUMPY_NAMES.get(k, k): v for k, v in kwargs.items()}
        for index, param in enumerate(self.params):
            value = args[index] if index < len(args) else kwargs.get(param.name)
            if param.type in _ELEMENTS and isinstance(value, (tuple, list)) and not self._varargs(args):
                check, message = _ELEMENTS[param.type]
                for at, item in enumerate(value):
                    if not check(item):
                        return message.format(name=name, param=param.name, index=index, at=at, pos=at + 1,
                                              type=_type_word(item))
        return None

    def _varargs(self, args):
        return self.varargs_ints and args and _int_element(args[0])  # (the rest: unpacked)

    def _extra_args(self, name, given):
        most = self.max_positional
        if self.min_args != most:
            return f"{name}() takes from {self.min_args} to {most} positional arguments but {given} were given"
        return (f"{name}() takes {most} positional argument{'s' * (most != 1)} but {given} "
                f"{'was' if given == 1 else 'were'} given")

    def marked(self, args, kwargs):
        """The call's types with the ones this signature's text does not take as ``!type!``:
        torch's reading of its own text counts ``*`` as an item and no item with a default."""
        words = []
        for i, value in enumerate(args):
            item = self.items[i] if i < len(self.items) else "*"
            param = _Parameter(item, False)
            ok = item not in ("*", "") and " = " not in item and param.accepts(value)
            words.append(_type_word(value) if ok else f"!{_type_word(value)}!")
        for key in reversed(kwargs):
            param = next((p for p in self.params if p.name == key), None)
            ok = param is not None and param.accepts(kwargs[key])
            words.append(f"{key}={_type_word(kwargs[key])}" if ok else f"!{key}={_type_word(kwargs[key])}!")
        return ", ".join(words + [""] * (bool(kwargs) and not args))  # (as torch's "got" list)


def refusal(name, signatures, args, kwargs):
    """torch's TypeError message for ``name(*args, **kwargs)`` against ``signatures`` (a
    list of :class:`_Signature`), or None when one of them takes the call."""
    if len(signatures) == 1:
        return signatures[0].refusal(name, args, kwargs) or signatures[0].unpacked(name, args, kwargs)
    for s in signatures:
        if s.refusal(name, args, kwargs) is None:
            return s.unpacked(name, args, kwargs)
    count = len(args) + len(kwargs)
    plausible = [s for s in signatures if not s.hidden and s.min_args <= count <= len(s.params)]
    if len(plausible) == 1:
        return plausible[0].refusal(name, args, kwargs)
    shown = [s for s in signatures if not s.hidden]
    head = f"{name}() received an invalid combination of arguments - got "
    got = [_type_word(a) for a in args] + [f"{k}={_type_word(kwargs[k])}" for k in reversed(kwargs)]
    got += [""] * (bool(kwargs) and not args)  # (torch's list then ends in ", ")
    if len(shown) == 1:  # (torch's reading of one signature's keywords finds none)
        if kwargs:
            return f"{head}unrecognized keyword arguments: {', '.join(reversed(kwargs))}"
        got = shown[0].marked(args, kwargs) if len(shown[0].items) == count else ", ".join(got)
        return f"{head}({got}), but expected ({shown[0].text})"
    lines = [f"{head}({', '.join(got)}), but expected one of:\n"]
    for s in shown:
        lines.append(f" * ({s.text})\n")
        if len(s.items) == count:
            # (torch's reading of its text finds no name with a default: such a keyword is "incorrect")
            known = {p.name for p in s.params if p.default is None}
            wrong = [k for k in reversed(kwargs) if _NUMPY_NAMES.get(k, k) not in known]
            lines.append(f"      didn't match because some of the keywords were incorrect: {', '.join(wrong)}\n"
                         if wrong else f"      didn't match because some of the arguments have invalid "
                         f"types: ({s.marked(args, kwargs)})\n")
    return "".join(lines)


def method_refusal(name, args, kwargs):
    """torch's TypeError message for the Tensor method ``name`` (in :data:`METHOD_ONLY_SIGNATURES`,
    or the method form of :data:`SIGNATURES`) called with ``args`` and ``kwargs`` (``self`` left
    out), or None when a signature takes it."""
    texts = METHOD_ONLY_SIGNATURES.get(name)
    forms = [_Signature(text) for text in texts] if texts else [_Signature(text).method() for text in SIGNATURES[name]]
    return refusal(name, [form for form in forms if form is not None], args, kwargs)


def parsed(function, name=None):
    """``function`` (a public op named as in :data:`SIGNATURES`, or ``name`` there: an alias
    torch names in its messages, ``concat``) raising torch's TypeError,
    in its words, when it fails on a call torch's parser refuses; its ``method`` attribute
    does the same for the Tensor method. Both take NumPy's spellings ``axis`` and
    ``keepdims``, as torch's parser does, and refuse up front ``keepdim`` without ``dim``
    where torch has no signature for it (``x.sum(keepdim=True)``: ember's ``dim`` has a
    default there), a ``keepdim`` that is no bool, and a method's ``out``."""
    name = name or function.__name__
    forms = [_Signature(text, name in NUMBERS_AS_TENSORS) for text in SIGNATURES[name]]
    methods = [m for m in (s.method() for s in forms) if m is not None]

    def checked(body, signatures, bound):
        @functools.wraps(body)
        def call(*args, **kwargs):
            given = kwargs
            if kwargs:
                if "axis" in kwargs or "keepdims" in kwargs:
                    kwargs = {_NUMPY_NAMES.get(k, k): v for k, v in kwargs.items()}
                keepdim = kwargs.get("keepdim", False)
                if ("keepdim" in kwargs and "dim" not in kwargs and len(args) <= bound + 1) or (bound and "out" in kwargs) \
                        or not isinstance(keepdim, bool):
                    message = refusal(name, signatures, args[bound:], given)
                    if message is not None:
                        raise TypeError(message)
            try:
                return body(*args, **kwargs)
            except Exception:
                message = refusal(name, signatures, args[bound:], given)
                if message is None:
                    raise
            raise TypeError(message)
        return call

    call = checked(function, forms, 0)
    at = next((i for i, p in enumerate(forms[0].params) if p.no_int), None)
    if at is not None and any(p.kind is p.VAR_POSITIONAL for p in _parameters(function).values()):
        # (the body takes ``*dims`` for the method: the function refuses ints there)
        unchecked = call

        @functools.wraps(function)
        def call(*args, **kwargs):
            if len(args) != at + 1 or not isinstance(args[at], (tuple, list)):
                message = refusal(name, forms, args, kwargs)
                if message is not None:
                    raise TypeError(message)
            return unchecked(*args, **kwargs)
    call.method = checked(function, methods, 1)
    return call


def method_form(name, function):
    """The Tensor method ``name`` calling ``function`` (the public op, ``self`` its input):
    refusing what torch's method refuses before the op runs, in torch's words (``out=``, which no
    method takes; any argument given to one taking none), else ``function`` itself."""
    if name in NO_ARGUMENTS:
        def method(self, *args, **kwargs):
            if kwargs:
                raise TypeError(f"TensorBase.{name}() takes no keyword arguments")
            if args:
                raise TypeError(f"TensorBase.{name}() takes no arguments ({len(args)} given)")
            return function(self)
    elif hasattr(function, "method") and name not in METHOD_SIGNATURES:  # (``multiply``: ``mul``'s)
        return function.method
    elif name in METHOD_SIGNATURES or "out" in _parameters(function):
        forms = [_Signature(text) for text in METHOD_SIGNATURES.get(name, ())]
        prefix = "Tensor." if name in PYTHON_METHODS else ""

        def method(self, *args, **kwargs):
            if "out" in kwargs:
                raise TypeError(refusal(name, forms, args, kwargs) if forms
                                else f"{prefix}{name}() got an unexpected keyword argument 'out'")
            return function(self, *args, **kwargs)
    else:
        if "<lambda>" in function.__qualname__ or "<locals>" in function.__qualname__:
            function.__name__ = function.__qualname__ = name  # (an adapter of its own: Python's errors name it)
        return function
    method.__name__ = method.__qualname__ = name
    method.__doc__ = function.__doc__
    method.__wrapped__ = function
    return method


def _parameters(function):
    try:
        return inspect.signature(function).parameters
    except (TypeError, ValueError):  # (a builtin without a signature)
        return {}


_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}  # (torch's parser takes NumPy's spellings too)


def _int(value):
    if isinstance(value, Tensor):
        return value.ndim == 0 and not value.dtype.is_floating_point and not value.dtype.is_complex \
            and value.dtype is not _dtype.bool
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def _int_element(value):
    """Whether torch's parser takes ``value`` in a list of ints: an int, or a bool tensor of no
    dims (its value decides later: 0 or 1 for dims, a RuntimeError for sizes)."""
    return _int(value) or isinstance(value, Tensor) and value.ndim == 0 and value.dtype is _dtype.bool


def _int_sequence(value):
    """Whether ``value`` is a tuple or list torch's parser reads as ints: it checks the first element."""
    return isinstance(value, (tuple, list)) and (not value or _int_element(value[0]))


def _type_word(x):
    """A type as torch's messages name it: the C type's name, dotted for NumPy's (``numpy.bool``)."""
    if isinstance(x, Tensor):
        return "Tensor"
    if isinstance(x, _dtype.dtype):
        return "torch.dtype"
    return type_name(x)


def _anything(value):
    return True


_ELEMENTS = {  # the element check and torch's message for a wrong element, by sequence type
    "tuple of ints": (_int_element, "{name}(): argument '{param}' failed to unpack the object at pos {pos} with error "
                            "\"type must be tuple of ints,but got {type}\""),
    "tuple of Tensors": (lambda v: isinstance(v, Tensor),
                         "expected Tensor as element {at} in argument {index}, but got {type}")}

_CHECKS = {
    "Tensor": lambda v: isinstance(v, Tensor),
    "Number": lambda v: (isinstance(v, (numbers.Number, np.bool_)) or (isinstance(v, Tensor) and v.ndim == 0)),
    "int": _int,
    "float": lambda v: isinstance(v, numbers.Real) or (isinstance(v, Tensor) and v.ndim == 0),
    "bool": lambda v: isinstance(v, bool),
    "tuple of ints": lambda v: _int(v) or _int_sequence(v),
    "tuple of Tensors": lambda v: isinstance(v, (tuple, list)),
    "torch.dtype": lambda v: isinstance(v, _dtype.dtype) or any(v is t for t in (float, int, bool, complex)),
    "str": lambda v: isinstance(v, str),
}
