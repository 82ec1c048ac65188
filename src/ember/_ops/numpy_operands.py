"""NumPy arrays given to ops. torch's Tensor operators decline one (NotImplemented: ``x + nd`` is
then NumPy's ``add`` of ``x.__array__()``, wrapped back as a tensor; ``nd + x`` and ``x < nd`` are
Python's TypeError, ``x != nd`` its identity test) but for ``x == nd`` (elementwise); its functions
refuse one with its argument parser's TypeError (``torch.add(x, nd)``: "add(): argument 'other'
(position 2) must be Tensor, not numpy.ndarray").

The slots :func:`operator_slot` makes decline an array (``_declining_arrays``; ``+ - *`` and the
reflected ones in ``_tensor.py``). ember's ``==`` is its function (``Tensor.__eq__`` runs ``eq``),
so only when an array reaches the dispatcher's promoting path (``core._cast_inputs``, never the tensor-and-tensor or tensor-and-number fast paths)
does :func:`operand_array` ask Python how the op was called: through an operator in the frames
between the dispatcher and the caller's code, or from outside ember into a function only Tensor's
operator slots run (``operator.eq(x, nd)``), or not. The plain paths pay nothing for the check.
"""
import dis
import sys
import types

from numpy import ndarray

__all__ = ["operand_array", "operator_slot", "OPERATOR_CODES"]

# the code of the functions only Tensor's operator slots run (``add``'s body, the reflected and
# comparison operators, the copies :func:`operator_slot` makes), registered by ``ember._tensor``
OPERATOR_CODES = set()

# the instructions that run a binary operator's method (``x + nd``, ``x += nd``, ``x == nd``), by
# name, as they differ between Python versions; indexing (``x[nd]``) is no operator here
_OPERATORS = frozenset(code for name, code in dis.opmap.items() if name == "COMPARE_OP" or name.startswith("INPLACE_")
                       or name.startswith("BINARY_") and name not in ("BINARY_SUBSCR", "BINARY_SLICE"))


def operand_array(array):
    """``array`` (a NumPy array among an op's inputs) when a Python operator made the call;
    else TypeError in torch's words, naming the argument of the outermost ember function that
    was given it (the function the caller called), its position when given by position."""
    frame, named, below = sys._getframe(1), None, None
    while frame is not None:
        if 0 <= frame.f_lasti < len(frame.f_code.co_code) and frame.f_code.co_code[frame.f_lasti] in _OPERATORS:
            return array
        module = frame.f_globals.get("__name__", "")
        if module != "ember" and not module.startswith("ember."):
            if below in OPERATOR_CODES:
                return array
            break
        below = frame.f_code
        code, values = frame.f_code, frame.f_locals
        for k, name in enumerate(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]):
            if values.get(name) is array:
                named = code.co_name, name, f" (position {k + 1})" if k < code.co_argcount else ""
        frame = frame.f_back
    function, argument, where = named or ("apply", "input", "")
    raise TypeError(f"{function}(): argument '{argument}'{where} must be Tensor, not numpy.ndarray")


def operator_slot(name, function):
    """``function`` as Tensor's operator slot ``name`` (``__truediv__``), its code registered in
    :data:`OPERATOR_CODES`: a copy of a public function or method (``div``, ``add_``) under the
    slot's name, so that ``operator.truediv(x, nd)`` takes an array as ``x / nd`` does while
    ``torch.div(x, nd)`` and ``x.div(nd)`` refuse it, as torch's; no extra call."""
    if getattr(sys.modules[function.__module__], function.__name__, None) is function or name.startswith("__i"):
        copy = types.FunctionType(function.__code__.replace(co_name=name), function.__globals__, name,
                                  function.__defaults__, function.__closure__)
        copy.__kwdefaults__, copy.__doc__, copy.__module__ = function.__kwdefaults__, function.__doc__, function.__module__
        copy.__dict__.update(function.__dict__)
        copy.__qualname__ = f"Tensor.{name}"
        function = copy
    OPERATOR_CODES.add(function.__code__)
    if name in _DECLINING or name.startswith("__i") and name != "__invert__":
        return _declining_arrays(name, function)
    return function


# the binary slots declining an array as torch's (its Python wrapper turns the parser's TypeError into
# NotImplemented) here; ``+ - *`` and the reflected ones decline in ``_tensor.py`` (``_arithmetic``,
# ``_reflected``: one call), ``__rtruediv__`` multiplies by the reciprocal through ``*``, ``__eq__``
# compares elementwise and the other comparisons decline in ``compare.operator_form``
_DECLINING = frozenset(f"__{n}__" for n in ("truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
                                            "lshift", "rshift"))


def _declining_arrays(name, function):
    """The operator slot ``name`` (``__truediv__``, ``__iadd__``) running ``function`` but declining a
    NumPy array (NotImplemented), as torch's does. Python then asks the array, and NumPy computes
    ``x / nd`` from ``x.__array__()`` (RuntimeError for a tensor that requires grad) with NumPy's
    promotion (``int64 / int64`` is float64), its result wrapped as a tensor (``__array_wrap__``);
    NumPy declines ``nd + x`` in turn (Tensor's ``__array_priority__``): TypeError. ``x += nd`` makes
    ``x = x + nd``, a new tensor, the old one unchanged (``p -= nd`` leaves a parameter as it was)."""
    def slot(self, other):
        if isinstance(other, ndarray):
            return NotImplemented
        return function(self, other)
    slot.__name__, slot.__qualname__, slot.__doc__ = name, f"Tensor.{name}", function.__doc__
    return slot
