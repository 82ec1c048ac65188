"""Argument handling shared by the public op functions: PyTorch's ``dim``, ``dtype=``,
``out=`` and ``*shape`` conventions, its C type names in messages, and the
``(values, indices)`` result of ``max``, ``sort``, ``topk``...; and the calls PyTorch's
argument parser refuses with a TypeError before any kernel runs (a number where a signature
takes only a Tensor, ``dim=None`` where it takes an int, ``x.permute()``), in its words.

Nothing here runs a kernel; each helper turns one argument convention into what the op
entries expect, with PyTorch's error when it cannot.
"""
import collections
import functools
import os
import sys
import warnings

from .._creation import tensor
from .._size import sizes_arg
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import STATE
from .core import write_into
from .outs import resize_out
from .parser import _type_word

__all__ = ["tensor_arg", "tensor_args", "tensor_input", "invalid_combination", "ALL_DIMS", "int_dim",
           "stable_by_keyword", "dims_arg", "dtype_arg", "shape_arg", "product", "with_out", "resize_out", "c_type_name",
           "values_indices", "result_type"]


def tensor_arg(x):
    """``x`` as a Tensor (Python numbers become 0-dim tensors of their own dtype)."""
    return x if isinstance(x, Tensor) else tensor(x)


def tensor_args(name, *values, names=("input", "other")):
    """TypeError naming the first of ``values`` (arguments ``names``, in order: their
    positions) that is not a Tensor, as PyTorch's argument parser words it for an op with one
    ``(Tensor, Tensor)`` signature (``maximum``, ``atan2``, ``logical_and``...):
    ``maximum(): argument 'other' (position 2) must be Tensor, not int``."""
    for position, value in enumerate(values, 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{names[position - 1]}' (position {position}) must be "
                            f"Tensor, not {_type_word(value)}")


_TENSOR_OR_NUMBER = (" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                     " * (Tensor input, Number other, *, Tensor out = None)\n")


def tensor_input(name, input, other):
    """TypeError unless ``input`` is a Tensor, for PyTorch's ops whose signatures are
    ``(Tensor input, Tensor other)`` and ``(Tensor input, Number other)`` only (comparisons,
    ``fmod``): a number comes second or not at all, in the parser's words."""
    if not isinstance(input, Tensor):
        raise TypeError(invalid_combination(name, (input, other), _TENSOR_OR_NUMBER))


def invalid_combination(name, args, signatures, **kwargs):
    """PyTorch's message for a call matching none of ``signatures`` (lines ``" * (...)\n"``):
    ``f() received an invalid combination of arguments - got (int, Tensor), but expected one
    of: ...``; ``kwargs`` show as ``name=type``."""
    got = [_type_word(a) for a in args] + [f"{k}={_type_word(v)}" for k, v in kwargs.items()]
    return (f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), "
            f"but expected one of:\n{signatures}")


class _AllDims:
    __slots__ = ()

    def __repr__(self):
        return "<all dims>"


# The default ``dim`` of the reductions whose PyTorch signatures take one int dim or none
# (``max``, ``min``, ``prod``, ``median``, ``nanmedian``): leaving it out reduces every element,
# while an explicit ``dim=None`` (or a tuple) is refused by PyTorch's parser, see int_dim.
ALL_DIMS = _AllDims()


def int_dim(name, dim, signatures=None):
    """``dim`` when it is an int (or ALL_DIMS); TypeError as PyTorch's parser words it for None
    or a tuple: ``median(): argument 'dim' must be int, not NoneType``, or, for an op with
    several ``signatures``, its "invalid combination" message."""
    if dim is ALL_DIMS or hasattr(dim, "__index__"):  # (ints, NumPy ints, 0-d integer tensors)
        return dim
    if signatures:
        raise TypeError(invalid_combination(name, (), signatures, dim=dim))
    raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")


def dims_arg(dim, ndim):
    """``dim`` (None, int, or sequence) as a sorted tuple of non-negative axes, or None for
    every axis. IndexError for an axis out of range, RuntimeError for a repeated one."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        wrapped = [_wrap_dim(d, ndim) for d in dim]
        for i, d in enumerate(wrapped):
            if d in wrapped[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        axes = tuple(sorted(wrapped))
        return tuple(a for a in axes if a < ndim) if ndim else ()
    d = _wrap_dim(dim, ndim)
    return (d,) if ndim else ()


def dtype_arg(input, dtype):
    """``input`` cast to the ``dtype=`` argument of a reduction, when one is given."""
    return input if dtype is None else input.to(dtype)


def shape_arg(shape, required=None, names=("view", "size"), given=None, symbolic=True):
    """``f(2, 3)`` and ``f((2, 3))`` alike: the sizes as a tuple of ints, TypeError as torch's
    parser words it for what is no int (:func:`ember._size.sizes_arg`). ``required`` names
    the call and the argument, ``("permute", "dims")``, where giving none is PyTorch's TypeError
    (``x.permute()``; ``x.permute(())`` is an empty shape); ``names`` where none is required.
    ``given``: the sizes given by the argument's name (``x.view(size=(2, 3))``), or None: a
    sequence starting with an int, as torch's parser takes no lone int by name. ``symbolic``:
    sizes (:func:`ember._size.sizes_arg`), not dims."""
    if given is not None:
        name, arg = required or names
        if shape:
            raise TypeError(f"{name}() got multiple values for argument '{arg}'")
        try:
            if not isinstance(given, (tuple, list)) or given and sizes_arg(given[:1], name, arg, symbolic=symbolic) is None:
                raise TypeError
        except TypeError:
            raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not {_type_word(given)}") from None
        shape = (given,)
    if required and not shape:
        raise TypeError(f'{required[0]}() missing 1 required positional arguments: "{required[1]}"')
    return sizes_arg(shape, *(required or names), symbolic=symbolic) if shape else ()


def product(sizes):
    """The product of ``sizes`` (1 for none): an element count."""
    n = 1
    for s in sizes:
        n *= s
    return n


def with_out(result, out, name=None):
    """``result``, or ``result`` written into the ``out=`` tensor (resized when its shape
    differs, as PyTorch does). RuntimeError when either requires grad, naming the op as torch
    does: ``name``, else the function that called this one (``cat()`` for ``hstack``, as torch's)."""
    if out is None:
        return result
    if STATE.enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name or sys._getframe(1).f_code.co_name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")
    resize_out(out, result.shape)
    write_into(out, result)
    return out


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>", "bfloat16": "c10::BFloat16"}


def c_type_name(dtype):
    """The C++ name PyTorch's messages use for ``dtype`` ("float", "long int", ...)."""
    return _C_NAMES[dtype.name]


class ValuesIndices(tuple):
    """The ``(values, indices)`` named tuple of ``max``, ``min``, ``sort``, ``topk``..."""
    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        return f"{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def values_indices(name, values, indices):
    """``(values, indices)`` printed as ``ember.return_types.<name>``."""
    r = ValuesIndices((values, indices))
    r._name = f"ember.return_types.{name}"
    return r


def result_type(name, fields):
    """A named-tuple class printed as torch's ``torch.return_types.<name>(field=..., ...)``."""
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"ember.return_types.{name}(\n{body})"
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "ember.return_types"})


def stable_by_keyword(function):
    """``function`` (``sort``, ``argsort``) refusing ``stable=`` after a positional ``dim``, as
    PyTorch's parser does: its signature with ``stable`` takes every argument but the input by
    keyword (``x.sort(dim=0, stable=True)``; ``x.sort(0, stable=True)`` is a TypeError)."""
    name = function.__name__

    @functools.wraps(function)
    def call(input, *args, **kwargs):
        if args and "stable" in kwargs:
            raise TypeError(invalid_combination(name, (input, *args), _STABLE_SIGNATURES, **kwargs))
        return function(input, *args, **kwargs)
    return call


_STABLE_SIGNATURES = (" * (Tensor input, *, bool stable, int dim = -1, bool descending = False)\n"
                      " * (Tensor input, int dim = -1, bool descending = False)\n")


def numpy_names(function):
    """``function`` also taking NumPy's spellings ``axis`` for ``dim`` and ``keepdims`` for
    ``keepdim``, as PyTorch's argument parser accepts them (``x.sum(axis=0, keepdims=True)``)."""
    @functools.wraps(function)
    def call(*args, **kwargs):
        if kwargs:
            _numpy_spellings(kwargs)
        return function(*args, **kwargs)
    return call


def _numpy_spellings(kwargs):
    if "axis" in kwargs:
        kwargs["dim"] = kwargs.pop("axis")
    if "keepdims" in kwargs:
        kwargs["keepdim"] = kwargs.pop("keepdims")


def scalar_first(name, keyword, positional, operands, scale=1, numbers=True):
    """PyTorch's deprecated overloads that put the scale first: ``x.add(alpha, other)``,
    ``x.sub(alpha, other)``, ``x.addcmul(value, tensor1, tensor2)``, ``x.addcdiv(...)``
    (old optimizers' ``exp_avg.add_(1 - beta1, grad)``, ``p.data.add_(-lr, p.grad)``).
    ``positional``: the arguments after the input, one more than the ``operands`` names;
    ``scale``: the keyword's value as called (its default 1 unless given); ``numbers``: whether
    an operand may be a number (add/sub's may, addcmul/addcdiv's may not). A 0-d tensor that
    records no gradient counts as the scale (torch's Scalar). Returns ``(scale, operands)``
    with torch's UserWarning; TypeError as torch's parser when the first is another tensor,
    an operand is not a tensor, the keyword is given too, or the count is off."""
    first = positional[0] if positional else None
    if isinstance(first, Tensor) and first.ndim == 0 and not first.requires_grad:
        first = first.item()
    if (len(positional) != len(operands) + 1 or isinstance(first, Tensor) or type(scale) is not int
            or scale != 1 or not (numbers or all(isinstance(o, Tensor) for o in positional[1:]))):
        raise TypeError(f"{name}() takes {len(operands)} positional argument{'s' * (len(operands) > 1)} but "
                        f"{len(positional)} were given")
    tensors = ", ".join(f"Tensor {o}" for o in operands)
    warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Number {keyword}, {tensors})\nConsider "
                  f"using one of the following signatures instead:\n\t{name}({tensors}, *, Number {keyword} = 1)",
                  UserWarning, stacklevel=caller_level())
    return first, positional[1:]


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def caller_level():
    """The ``stacklevel`` of the first frame outside ember, seen from the caller's ``warn``: a
    warning points at the user's line, however many ember calls lie between."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


WARNED_ONCE = set()  # the messages :func:`warn_once` gave (a test that wants one again removes it)


def warn_once(message, category=UserWarning):
    """torch's ``TORCH_WARN_ONCE``: warns ``message`` (``category``) at the user's line (the
    first frame outside ember) the first time only, per process (deprecations: ``TypedStorage``,
    ``set_default_tensor_type``, scatter's ``reduce``)."""
    if message not in WARNED_ONCE:
        WARNED_ONCE.add(message)
        warnings.warn(message, category, stacklevel=caller_level())