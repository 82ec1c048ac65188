"""``assert_close``: tensors, numbers, and sequences or mappings of them, equal within
tolerances, with PyTorch's checks, defaults and failure messages.
Source: https://pytorch.org/docs/stable/testing.html#torch.testing.assert_close
"""
import collections.abc
import cmath
import math
import warnings
from numbers import Number

import numpy as np

from .. import _dtype
from .._creation import tensor
from .._tensor import Tensor

__all__ = ["assert_close", "assert_allclose"]

# (rtol, atol) when neither is given, by dtype (PyTorch's table); other dtypes compare exactly.
_DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raises AssertionError unless ``actual`` and ``expected`` are close: tensors (or NumPy
    arrays) of the same shape, dtype and device with ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise (nan equal only with ``equal_nan``), numbers likewise, bools
    and integers exactly, sequences and mappings item by item. Without ``rtol``/``atol`` the
    tolerances are the dtype's (float32: 1.3e-6 and 1e-5; float64: 1e-7 each; exact for
    integers). ``msg`` (a string, or a function of the generated message) replaces the
    message. TypeError for inputs that cannot be compared; ValueError if only one of
    ``rtol``/``atol`` is given."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    try:
        _compare(actual, expected, [], dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                                            check_dtype=check_dtype, check_stride=check_stride))
    except AssertionError as error:
        message = str(error)
        if msg is not None:
            message = msg if isinstance(msg, str) else msg(message)
        raise AssertionError(message) from None


# assert_allclose's own tolerances for these dtypes (the old function's); others as assert_close
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated ``torch.testing.assert_allclose`` (FutureWarning, as torch's):
    :func:`assert_close` with dtypes not compared, nan equal by default and the old tolerances
    (float16: 1e-3 each; float32: rtol 1e-4, atol 1e-5; float64: 1e-5 and 1e-8; other dtypes
    assert_close's; the larger of the two tensors')."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    actual = actual if isinstance(actual, Tensor) else tensor(actual)
    expected = expected if isinstance(expected, Tensor) else tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = (max(t) for t in zip(*(_ALLCLOSE_TOLERANCES.get(d.dtype.name) or _DEFAULT_TOLERANCES.get(
            d.dtype.name, (0.0, 0.0)) for d in (actual, expected))))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
                 check_stride=False, msg=msg or None)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _compare(actual, expected, path, options):
    try:
        if _is_sequence(actual) and _is_sequence(expected):
            if len(actual) != len(expected):
                raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
            for i, (a, e) in enumerate(zip(actual, expected)):
                _compare(a, e, path + [i], options)
            return
        if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
            missing = [k for k in expected if k not in actual]
            extra = [k for k in actual if k not in expected]
            if missing or extra:
                raise AssertionError(f"The keys of the mappings do not match:\nMissing keys in the actual "
                                     f"mapping: {sorted(missing)}\nAdditional keys in the actual mapping: "
                                     f"{sorted(extra)}")
            for key in actual:
                _compare(actual[key], expected[key], path + [key], options)
            return
        if isinstance(actual, bool) and isinstance(expected, bool):
            if actual is not expected:
                raise AssertionError(f"Booleans mismatch: {actual} is not {expected}")
            return
        tensors = tuple(isinstance(x, (Tensor, np.ndarray)) for x in (actual, expected))
        if tensors == (True, True):
            return _compare_tensors(*(x if isinstance(x, Tensor) else Tensor._make(x) for x in (actual, expected)),
                                    options)
        if tensors == (False, False) and all(isinstance(x, Number) for x in (actual, expected)):
            return _compare_numbers(actual, expected, options)
        raise TypeError(f"No comparison pair was able to handle inputs of type {_type_text(actual)} and "
                        f"{_type_text(expected)}.")
    except AssertionError as error:
        if path and "The failure occurred for item" not in str(error):
            where = "".join(f"[{k!r}]" for k in path)
            raise AssertionError(f"{error}\n\nThe failure occurred for item {where}") from None
        raise


def _type_text(x):
    return "<class 'ember.Tensor'>" if isinstance(x, Tensor) else str(type(x))


def _tolerances(dtypes, options):
    if options["rtol"] is not None:
        return options["rtol"], options["atol"]
    pairs = [_DEFAULT_TOLERANCES.get(d.name, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _compare_tensors(actual, expected, options):
    for name, a, e, check in (("shape", actual.shape, expected.shape, True),
                              ("device", actual.device, expected.device, options["check_device"]),
                              ("dtype", actual.dtype, expected.dtype, options["check_dtype"]),
                              ("stride()", actual.stride(), expected.stride(), options["check_stride"])):
        if check and a != e:
            raise AssertionError(f"The values for attribute '{name}' do not match: {a} != {e}.")
    rtol, atol = _tolerances((actual.dtype, expected.dtype), options)
    dtype = _dtype.promote_types(actual.dtype, expected.dtype)
    a, e = actual.detach()._data.astype(dtype.np), expected.detach()._data.astype(dtype.np)
    if dtype is _dtype.bool:
        a, e = a.astype(np.int64), e.astype(np.int64)
    close = _close(a, e, rtol, atol, options["equal_nan"])
    if close.all():
        return
    if actual.ndim == 0:  # reported as numbers, with Python's arithmetic
        _fail_numbers(actual.item(), expected.item(), rtol, atol)
    abs_diff, rel_diff = _differences(a, e, ~close)
    worst_abs, worst_rel = (np.unravel_index(int(np.argmax(np.isnan(d)) if np.isnan(d).any() else np.argmax(d)),
                                             d.shape) for d in (abs_diff, rel_diff))  # nan is the greatest
    exact = rtol == 0 and atol == 0
    total, wrong = close.size, int((~close).sum())
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {wrong} / {total} ({100 * wrong / total:.1f}%)",
             f"Greatest absolute difference: {abs_diff[worst_abs].item()} at index "
             f"{tuple(int(i) for i in worst_abs)}" + ("" if exact else f" (up to {atol} allowed)"),
             f"Greatest relative difference: {rel_diff[worst_rel].item()} at index "
             f"{tuple(int(i) for i in worst_rel)}" + ("" if exact else f" (up to {rtol} allowed)")]
    raise AssertionError("\n".join(lines))


def _close(a, e, rtol, atol, equal_nan):
    with np.errstate(invalid="ignore", over="ignore"):
        if a.dtype.kind == "b":
            return a == e
        if a.dtype.kind in "iu":  # tolerances apply to integers too (exact by default)
            a, e = a.astype(np.float64), e.astype(np.float64)
        # a non-finite value is close only to itself
        close = (a == e) | (np.isfinite(a) & np.isfinite(e) & (np.abs(a - e) <= atol + rtol * np.abs(e)))
        return close | (equal_nan & np.isnan(a) & np.isnan(e)) if equal_nan else close


def _differences(a, e, mismatched):
    """Absolute and relative differences where ``mismatched`` (0 elsewhere), in the compared
    dtype (float32 for the relative difference of integers, as PyTorch divides)."""
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        if a.dtype.kind in "iub":
            rel_diff = abs_diff.astype(np.float32) / np.abs(e).astype(np.float32)
        else:
            rel_diff = abs_diff / np.abs(e)
    return (np.where(mismatched, abs_diff, 0).astype(abs_diff.dtype),
            np.where(mismatched, rel_diff, 0).astype(rel_diff.dtype))


def _compare_numbers(actual, expected, options):
    if isinstance(actual, bool) or isinstance(expected, bool) or not any(
            isinstance(x, (float, complex)) for x in (actual, expected)):
        rtol, atol = (0.0, 0.0) if options["rtol"] is None else (options["rtol"], options["atol"])
    else:
        rtol, atol = _tolerances((_dtype.float64,), options)
    finite = all(cmath.isfinite(x) for x in (actual, expected))
    if actual == expected or finite and abs(actual - expected) <= atol + rtol * abs(expected) or (
            options["equal_nan"] and all(isinstance(x, float) and math.isnan(x) for x in (actual, expected))):
        return
    _fail_numbers(actual, expected, rtol, atol)


def _fail_numbers(actual, expected, rtol, atol):
    abs_diff = abs(int(actual) - int(expected)) if isinstance(actual, bool) else abs(actual - expected)
    rel_diff = abs_diff / abs(expected) if expected else math.inf
    exact = rtol == 0 and atol == 0
    raise AssertionError(f"Scalars are not {'equal' if exact else 'close'}!\n\nExpected {expected} but got "
                         f"{actual}.\nAbsolute difference: {abs_diff}" + ("" if exact else f" (up to {atol} allowed)")
                         + f"\nRelative difference: {rel_diff}" + ("" if exact else f" (up to {rtol} allowed)"))
