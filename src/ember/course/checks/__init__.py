"""Graded checks: one per exercise (region id), comparing the student's ember with PyTorch.

A check is a function registered with :func:`check`; it runs in the grading process, where
``import ember`` loads the student's files (:mod:`ember.course.child`), and raises
:class:`Mismatch` with the input and both values when the student's answer differs. The
comparisons are the ones ember's own test suite makes: forward values, gradients, edge values
and errors, against torch 2.13 where torch has the feature, else a closed form.
"""
import importlib
from dataclasses import dataclass

import numpy as np

import ember

__all__ = ["Mismatch", "check", "for_module", "CHECKS", "same", "close", "raises_like", "differential"]

CHECKS = {}


@dataclass(frozen=True)
class Item:
    id: str
    fn: object
    points: int


class Mismatch(AssertionError):
    """The student's value differs from the reference: the message names what was computed,
    the input, torch's (or the closed form's) value and the student's."""


def check(exercise_id, points=1):
    """Registers the decorated function as the check of ``exercise_id``."""
    def register(fn):
        CHECKS[exercise_id] = Item(exercise_id, fn, points)
        return fn
    return register


def for_module(number):
    """The checks of module ``number``, in exercise order."""
    importlib.import_module(f"{__name__}.m{number}")
    return [item for key, item in sorted(CHECKS.items()) if key.startswith(f"{number}/")]


def _array(x):
    if hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


def _short(x):
    text = np.array2string(_array(x), precision=5, threshold=12, edgeitems=3)
    return " ".join(text.split())


def close(what, got, expected, *, rtol=1e-5, atol=1e-6, input=None):
    """``got`` (the student's) equals ``expected`` in shape and values (nan == nan).

    Raises:
        Mismatch: naming ``what``, the ``input`` (when given), the shapes or both values.
    """
    g, e = _array(got), _array(expected)
    shown = f" for input {_short(input)}" if input is not None else ""
    if g.shape != e.shape:
        raise Mismatch(f"{what}{shown}: shape {tuple(g.shape)}, expected {tuple(e.shape)}")
    if g.dtype.kind in "biu" and e.dtype.kind in "biu":
        ok = np.array_equal(g, e)
    else:
        ok = np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    if not ok:
        raise Mismatch(f"{what}{shown}: got {_short(g)}, expected {_short(e)}")


def same(what, got, expected, input=None):
    """``got == expected`` for plain Python values (lists, numbers, strings)."""
    if got != expected:
        shown = f" for input {input!r}" if input is not None else ""
        raise Mismatch(f"{what}{shown}: got {got!r}, expected {expected!r}")


def raises_like(what, fn, exception):
    """``fn()`` raises ``exception`` (the class torch raises for the same bad input)."""
    try:
        fn()
    except exception:
        return
    except NotImplementedError:
        raise
    except Exception as exc:
        raise Mismatch(f"{what}: raised {type(exc).__name__}, expected {exception.__name__}") from None
    raise Mismatch(f"{what}: raised nothing, expected {exception.__name__}")


def differential(what, fn, *arrays, grad=True, rtol=1e-5, atol=1e-6, seed=0):
    """``fn(lib, *tensors)`` in ember and in torch on the same ``arrays``: the values, and for
    float inputs the gradients of a random projection of the output, must agree.

    Raises:
        Mismatch: naming ``what``, the first input and the differing value or gradient.
    """
    import torch  # the oracle, needed by the grading process only (not by the ``ember`` command)
    wants = [grad and np.asarray(a).dtype.kind == "f" for a in arrays]
    e_in = [ember.tensor(np.array(a), requires_grad=w) for a, w in zip(arrays, wants)]
    t_in = [torch.tensor(np.array(a), requires_grad=w) for a, w in zip(arrays, wants)]
    e_out, t_out = fn(ember, *e_in), fn(torch, *t_in)
    close(f"{what}: value", e_out, t_out, rtol=rtol, atol=atol, input=arrays[0])
    if not any(wants):
        return
    upstream = np.random.default_rng(seed).standard_normal(tuple(t_out.shape)).astype(_array(t_out).dtype)
    t_grads = torch.autograd.grad(t_out, [t for t, w in zip(t_in, wants) if w], torch.tensor(upstream),
                                  allow_unused=True)
    e_grads = ember.autograd.grad(e_out, [e for e, w in zip(e_in, wants) if w], ember.tensor(upstream),
                                  allow_unused=True)
    for k, (e, t) in enumerate(zip(e_grads, t_grads)):
        if t is None and e is None:
            continue
        if e is None or t is None:
            raise Mismatch(f"{what}: gradient of input {k} is {'missing' if e is None else 'not expected'}")
        close(f"{what}: gradient of input {k}", e, t, rtol=rtol, atol=atol, input=arrays[0])
