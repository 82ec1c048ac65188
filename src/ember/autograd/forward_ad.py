"""Forward-mode automatic differentiation (``torch.autograd.forward_ad``): inside a
:class:`dual_level`, a dual tensor carries a tangent beside its value, and every op on dual
tensors also gives its result the tangent ``J t`` (the Jacobian-vector product).

One op, one derivative: the tangent comes from the op entry's own ``backward``. For an op
``y = f(x)`` with tangents ``t``, the vector-Jacobian product ``u -> J^T u`` is linear in ``u``,
and its vector-Jacobian product with cotangent ``t`` is ``J t`` (reverse mode twice, on this
one op: https://j-towns.github.io/2017/06/12/A-new-trick.html). Views take the same view of
their input's tangent, so a write in place through a view reaches its base's tangent, as in
PyTorch. The dispatcher tells this module about each op and each in-place write through its
observer list while a level is open; outside one, ops pay nothing.

Source: PyTorch 2.13, https://pytorch.org/docs/stable/autograd.html#forward-mode-automatic-differentiation
"""
import re
from typing import NamedTuple, Optional

from .._tensor import Tensor
from .._ops.core import OBSERVERS, Observer, record, replay
from .._ops.names import torch_name
from .engine import grad
from .grad_mode import DUAL, STATE, Tangents
from .graph import _saved_hooks

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor", "custom_function", "moved"]


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the ``primal`` value (a view of the dual tensor) and its
    ``tangent`` (None when it has none)."""
    primal: Tensor
    tangent: Optional[Tensor]


def enter_dual_level():
    """Opens the dual level and returns it (0). RuntimeError when one is open already: forward
    mode does not nest, as in PyTorch 2.13."""
    if DUAL.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    DUAL.level = 0
    DUAL.tangents = Tangents()
    OBSERVERS.append(_OBSERVER)
    return 0


def exit_dual_level(*, level=None):
    """Closes the dual level: every tangent made inside it is dropped."""
    if DUAL.level is None or level not in (None, DUAL.level):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    OBSERVERS.remove(_OBSERVER)
    DUAL.level = None
    DUAL.tangents = None


class dual_level:
    """Context manager (and decorator) for a dual level: dual tensors made inside it with
    :func:`make_dual` carry their tangents until it closes; ``__enter__`` returns the level."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        wrapper.__wrapped__ = fn
        return wrapper


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` whose tangent is ``tangent`` (kept as it is: in-place ops on the dual
    tensor update it), for the open dual level.

    Args:
        tensor: the primal, floating point or complex, any shape.
        tangent: the direction, the same shape, floating point or complex.

    Raises:
        RuntimeError: no dual level is open, or the shapes differ.
        ValueError: ``tensor`` or ``tangent`` is neither floating point nor complex.
    """
    if DUAL.level is None or level not in (None, DUAL.level):
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not t.dtype.is_inexact:
            raise ValueError(f"Expected {name} to be floating point or complex, but got: {t.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    dual = tensor._alias_with_history()
    DUAL.tangents[dual] = tangent
    return dual


def unpack_dual(tensor, *, level=None):
    """``UnpackedDualTensor(primal, tangent)`` of ``tensor``: its value as a view without the
    tangent, and the tangent (None for a tensor that is not dual, or outside a dual level)."""
    tangent = tangent_of(tensor) if DUAL.level is not None and level in (None, DUAL.level) else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    primal = tensor._alias_with_history()
    return UnpackedDualTensor(primal, tangent)


def tangent_of(x):
    """``x``'s tangent at the open level: its own, or for a view of a dual tensor, the same view
    of that tensor's tangent. None when it has none."""
    tangents = DUAL.tangents
    t = tangents.get(x)
    if t is None and x._base is not None and x._view_chain is not None:
        base = tangents.get(x._base)
        if base is not None:
            t = _quietly(replay, base, x._view_chain)
    return t


def custom_function(cls, ctx, args, forward):
    """``forward()`` (a custom Function's), and the tangents of its outputs from the Function's
    own ``jvp(ctx, *input_tangents)`` (zeros for inputs without one) when it defines one and an
    argument is dual; the ops inside ``forward`` then go unwatched. Returns the outputs."""
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args] if DUAL.level is not None else ()
    if getattr(cls, "jvp", None) is None or all(t is None for t in tangents):
        return forward()
    outputs = _quietly(forward)
    given = [a.new_zeros(a.shape) if t is None and isinstance(a, Tensor) and a.dtype.is_inexact else t
             for a, t in zip(args, tangents)]
    results = cls.jvp(ctx, *given)
    for o, t in zip(outputs if isinstance(outputs, tuple) else (outputs,),
                    results if isinstance(results, tuple) else (results,)):
        if isinstance(o, Tensor) and t is not None:
            DUAL.tangents[o] = t
    return outputs


def moved(old, new):
    """``new`` (an alias a custom Function returns for its output ``old``) takes ``old``'s tangent."""
    if DUAL.level is not None:
        tangent = DUAL.tangents.get(old)
        if tangent is not None:
            DUAL.tangents[new] = tangent


class _Observer(Observer):
    """The dispatcher's observer while a dual level is open: after each op on dual tensors,
    gives the results their tangents; after each in-place write, updates the written tensor's."""
    busy = False  # computing a tangent: the ops that takes are not themselves watched

    def op_exit(self, op, inputs, attrs, out):
        if self.busy or out is None or not op.differentiable:
            return
        tangents = [tangent_of(x) if isinstance(x, Tensor) and x.dtype.is_inexact else None for x in inputs]
        if all(t is None for t in tangents):
            return
        outs = out if type(out) is tuple else (out,)
        if op.is_view and len(outs) == 1 and outs[0]._base is not None:  # the same view of the tangent
            results = (_quietly(replay, tangents[0], ((op, attrs),)),)
        else:  # a result's own tangent, never one an input's shares (a write in place would reach it)
            results = _quietly(_jvp, op, inputs, attrs, outs, tangents)
            shared = {id(t._versions) for t in tangents if t is not None}
            results = [t if t is None or id(t._versions) not in shared else _quietly(t.clone) for t in results]
        for o, t in zip(outs, results):
            if o is not None and t is not None:
                DUAL.tangents[o] = t

    def op_write(self, tensor, value):
        if self.busy:
            return
        _quietly(_write_tangent, tensor, tangent_of(value))


_OBSERVER = _Observer()


def _quietly(fn, *args):
    """``fn(*args)`` unwatched by this module, without recording or saved-tensor hooks."""
    hooks, _saved_hooks.stack = _saved_hooks.stack, ()
    _OBSERVER.busy = True
    try:
        return fn(*args)
    finally:
        _OBSERVER.busy = False
        _saved_hooks.stack = hooks


def _jvp(op, inputs, attrs, outs, tangents):
    """The tangents of ``op``'s results ``outs``: the op recorded once more onto leaves for the
    dual inputs, its vector-Jacobian product taken with a cotangent ``u`` that requires grad,
    and that product differentiated with respect to ``u`` along the tangents."""
    differentiable = STATE.enabled and any(
        t is not None and t.requires_grad or isinstance(x, Tensor) and x.requires_grad
        for x, t in zip(inputs, tangents))
    recording, STATE.enabled = STATE.enabled, True
    try:
        xs = [x if not isinstance(x, Tensor) or differentiable and x.requires_grad
              else x.detach().requires_grad_(t is not None) for x, t in zip(inputs, tangents)]
        ys = tuple(None if o is None else o._alias() for o in outs)
        record(op, xs, attrs, ys if len(ys) > 1 else ys[0])
        live = [y for y in ys if y is not None and y.requires_grad]
        if not live:
            return (None,) * len(ys)
        cotangents = [y.new_zeros(y.shape).requires_grad_(True) for y in live]
        pairs = list({id(x): (x, t) for x, t in zip(xs, tangents) if t is not None}.values())  # x * x: once
        try:
            vjps = grad(live, [x for x, _ in pairs], cotangents, create_graph=True, allow_unused=True)
            used = [(g, t.to(g.dtype)) for g, (_, t) in zip(vjps, pairs) if g is not None and g.requires_grad]
            STATE.enabled = recording
            products = grad([g for g, _ in used], cotangents, [t for _, t in used], create_graph=differentiable,
                            allow_unused=True) if used else (None,) * len(live)
        except NotImplementedError:
            raise NotImplementedError(
                f"Trying to use forward AD with {_aten_name(op, inputs, attrs)} that does not support it because it "
                "has not been implemented yet.\nPlease file an issue to ember so that we can prioritize its "
                "implementation.") from None
    finally:
        STATE.enabled = recording
    found = iter(products)
    return tuple(None if y is None or not y.requires_grad else _or_zeros(next(found), y) for y in ys)


def _aten_name(op, inputs, attrs):
    """PyTorch's name of the op, as its error messages write it (``special_zeta``)."""
    name = torch_name(op, inputs, attrs).removesuffix("Backward0")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _or_zeros(t, y):
    return y.new_zeros(y.shape) if t is None else t


def _write_tangent(tensor, value_tangent):
    """After ``tensor`` was written in place with a value whose tangent is ``value_tangent``:
    the region's tangent becomes that one (zeros for a value without one), in the tangent of
    ``tensor``'s base when it is a view, so that the base and its other views see it."""
    tangents = DUAL.tangents
    base, chain = tensor._base, tensor._view_chain
    if base is None or chain is None:
        base, chain = tensor, ()
    current = tangents.get(base)
    if current is None:
        if value_tangent is None:
            tangents.pop(tensor)
            return
        current = tangents[base] = base.new_zeros(base.shape, dtype=value_tangent.dtype)
    region = replay(current, chain) if chain else current
    region.copy_(value_tangent if value_tangent is not None else region.new_zeros(()))
    if chain:
        tangents[tensor] = region
