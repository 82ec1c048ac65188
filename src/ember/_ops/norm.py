"""Normalisation: statistics over some axes, then a fused normalise-and-scale.

Batch, instance, group, layer and RMS norm are all ``(x - mean) / sqrt(var + eps) * weight
+ bias`` with the statistics taken over different axes (RMS norm: no mean, and the mean
square in place of the variance). :class:`NormStats` computes them once, so the public
functions can also update running statistics from them; :class:`Normalize` applies them.

``Normalize``'s derivative treats the statistics as the functions of ``x`` that they are
(the usual batch-norm backward, e.g. Ioffe & Szegedy, 2015, section 3). It is an op of its
own, :class:`NormalizeBackward`: one fused array computation from the saved statistics,
faster than the same formula in ember ops (1.9x for a (64, 512) layer norm, 3.5x for a
(32, 64, 16, 16) batch norm, float32, measured on an AMD EPYC). Its
derivative in turn is that formula in ember ops, which recompute the statistics from ``x``,
so second derivatives see that dependence too.
"""
import math

from .. import _backend
from .._backend import namespace
from .._memory_format import contiguous_format, suggested
from .._result_layout import channels_last_like, pointwise, row_major
from ..autograd.engine import grad
from ..autograd.grad_mode import STATE, enable_grad
from . import core
from .core import Op


def _kept(shape, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _dot_over(a, b, axes):
    """``sum(a * b)`` over ``axes`` (kept as size 1) in one pass: the trailing run of
    ``axes`` is flattened into rows for the backend's dot product, the rest summed after."""
    tail = 0
    while tail < a.ndim and a.ndim - 1 - tail in axes:
        tail += 1
    if not tail:
        return (a * b).sum(axis=axes, keepdims=True)
    lead = a.shape[:a.ndim - tail]
    row = math.prod(a.shape[a.ndim - tail:])
    sums = _backend.row_dot(a.reshape(lead + (row,)), b.reshape(lead + (row,)))
    rest = tuple(axis for axis in axes if axis < a.ndim - tail)
    if rest:
        sums = sums.sum(axis=rest)
    return sums.reshape(_kept(a.shape, axes))


class NormStats(Op):
    """``(mean, var)`` of ``x`` over ``axes`` (both of the kept shape: size 1 along ``axes``),
    the variance biased (divided by the count); with ``centered=False`` the mean is 0 and the
    mean square stands for the variance (RMS norm). The gradient of ``var`` is
    ``2 (x - mean) / M`` and that of ``mean`` ``1 / M``, for M elements per statistic."""
    promote = None
    num_outputs = 2

    @classmethod
    def infer(cls, x, axes, centered=True):
        kept = (_kept(x.shape, axes), x.dtype)
        return kept, kept

    @staticmethod
    def forward(x, axes, centered=True):
        kept = _kept(x.shape, axes)
        xp = namespace(x)
        mean, var = xp.empty(kept, x.dtype), xp.empty(kept, x.dtype)
        _moments(x, axes, centered, mean, var)
        return mean, var

    @staticmethod
    def backward(ctx, g_mean, g_var):
        x, axes, centered = ctx.input(0), ctx.attrs["axes"], ctx.attrs.get("centered", True)
        count = max(math.prod([x.shape[a] for a in axes]), 1)
        grad = None
        if g_var is not None:
            centred = x - x.mean(axes, keepdim=True) if centered else x
            grad = centred * (g_var * (2 / count))
        if g_mean is not None and centered:
            from_mean = (g_mean / count).expand(ctx.shapes[0])
            grad = from_mean if grad is None else grad + from_mean
        return (grad,)


def _moments(x, axes, centered, mean, var):
    """Writes the mean (0 unless ``centered``) and the biased variance (the mean square)
    of ``x`` over ``axes`` into ``mean`` and ``var``, arrays of the kept shape."""
    # course:begin 10/moments
    # hint: write the mean over axes (0 when not centered) into mean and the biased variance (mean of
    # hint: the squared deviations; of x itself when not centered) into var: arrays of the kept shape
    count = max(math.prod([x.shape[a] for a in axes]), 1)
    if centered:
        namespace(x).add.reduce(x, axis=axes, keepdims=True, out=mean)
        mean /= count
        centred = x - mean
    else:
        mean.fill(0)
        centred = x
    var[...] = _dot_over(centred, centred, axes)
    var /= count
    # course:end 10/moments


def _layer_norm_rows(x, weight, bias, eps):
    """Normalize over the last axis with an elementwise weight and bias (a layer norm that
    records nothing): the arithmetic of :func:`_moments` and Normalize's general branch, so
    bit-equal to them, in half the NumPy calls (a decoder normalises one row at a time). The
    ufuncs are called with ``out=``: the in-place operators cost twice as much on small rows."""
    count, xp = x.shape[-1], namespace(x)
    mean = xp.add.reduce(x, axis=-1, keepdims=True)
    if x.size == count and x.dtype.itemsize >= 4:
        # One row: its statistics as NumPy scalars, whose arithmetic is the same IEEE
        # operations in the same dtype at a tenth of a ufunc call's cost.
        mean = mean.reshape(-1)[0] / count
        out = xp.subtract(x, mean)
        var = _backend.row_dot(out, out).reshape(-1)[0] / count
        invstd = 1 / xp.sqrt(var + x.dtype.type(eps))
        xp.multiply(out, invstd, out=out)
        xp.multiply(out, weight, out=out)
        xp.add(out, bias, out=out)
        return out
    xp.divide(mean, count, out=mean)
    out = xp.subtract(x, mean)
    var = _backend.row_dot(out, out)[..., None]
    xp.divide(var, count, out=var)
    xp.add(var, x.dtype.type(eps), out=var)
    xp.sqrt(var, out=var)
    xp.divide(1, var, out=var)
    xp.multiply(out, var, out=out)
    xp.multiply(out, weight, out=out)
    xp.add(out, bias, out=out)
    return out


def _constant_along(array, axes, ndim):
    """True when ``array`` (or None), broadcast to ``ndim`` dims, has size 1 along every
    axis in ``axes``: it then folds into per-statistic scale and shift arrays."""
    if array is None:
        return True
    offset = ndim - array.ndim
    return all(a < offset or array.shape[a - offset] == 1 for a in axes)


def _sum_to(array, shape):
    """``array`` summed over the axes that broadcasting added to ``shape``."""
    lead = array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1
                                      and array.shape[lead + i] != 1)
    return array.sum(axis=axes, keepdims=True).reshape(shape) if axes else array


class Normalize(Op):
    """``(x - mean) * rsqrt(var + eps) * weight + bias`` with ``mean`` and ``var`` from
    :class:`NormStats` over ``axes``. ``weight`` and ``bias`` (or None) broadcast to ``x``
    once reshaped to ``affine_shape`` (e.g. (C, 1, 1) for per-channel parameters).

    ``layout`` and ``grad_layout`` say how torch's kernel lays out the result and the input
    gradient (:func:`_laid_out`; ``layout_shape`` the shape whose memory format counts).

    ``mean`` and ``var`` None computes them here: one dispatch instead of two where no
    gradient is recorded (the backward needs them as inputs). The derivative is the total one
    in ``x`` (the statistics as the functions of ``x`` they are), so none goes to them.
    """
    promote = None
    infer = classmethod(core.like_input)

    @staticmethod
    def forward(x, mean, var, weight, bias, axes, eps, centered=True, affine_shape=None, layout=None,
                grad_layout=None, layout_shape=None):
        return _laid_out(Normalize._values(x, mean, var, weight, bias, axes, eps, centered, affine_shape),
                         x, layout, layout_shape)

    @staticmethod
    def _values(x, mean, var, weight, bias, axes, eps, centered, affine_shape):
        if mean is None and centered and affine_shape is None and weight is not None \
                and bias is not None and axes == (x.ndim - 1,) and x.shape[-1] > 1 \
                and weight.shape == bias.shape == x.shape[-1:]:
            return _layer_norm_rows(x, weight, bias, eps)
        weight, bias = _affine(weight, affine_shape), _affine(bias, affine_shape)
        if mean is None:
            xp = namespace(x)
            mean, var = xp.empty(_kept(x.shape, axes), x.dtype), xp.empty(_kept(x.shape, axes), x.dtype)
            _moments(x, axes, centered, mean, var)
        invstd = 1 / namespace(var).sqrt(var + x.dtype.type(eps))
        if _constant_along(weight, axes, x.ndim) and _constant_along(bias, axes, x.ndim):
            # One multiply-add over x with small per-statistic arrays.
            scale = invstd if weight is None else invstd * weight
            shift = -mean * scale if centered else None
            if bias is not None:
                shift = bias if shift is None else shift + bias
            out = x * scale
            if shift is not None:
                out += shift
            return out
        out = x - mean if centered else x.copy()
        out *= invstd
        if weight is not None:
            out *= weight
        if bias is not None:
            out += bias
        return out

    @staticmethod
    def backward(ctx, g):
        x, mean, var, weight, bias = ctx.inputs
        attrs = ctx.attrs
        return core.apply(NormalizeBackward, g, x, mean, var, weight, bias, axes=attrs["axes"],
                          eps=attrs["eps"], centered=attrs.get("centered", True),
                          needs=tuple(ctx.needs_input_grad), affine_shape=attrs.get("affine_shape"),
                          shapes=tuple(ctx.shapes), layout=attrs.get("grad_layout"),
                          layout_shape=attrs.get("layout_shape"))


class NormalizeBackward(Op):
    """The gradients of :class:`Normalize`'s inputs (x, mean, var, weight, bias; None where
    not needed, and always for the statistics) from the saved statistics, in one fused array
    computation (:func:`_fused_grads`).

    Its own derivative is that of the same gradients written in ember ops
    (:func:`_grads_in_ops`, which recomputes the statistics from ``x``), taken by the engine:
    so second and higher derivatives of every normalisation come from this one entry."""
    promote = None
    num_outputs = 5

    @classmethod
    def infer(cls, g, x, mean, var, weight, bias, *, needs, shapes, **attrs):
        return tuple((tuple(shape), g.dtype) if need and i not in (1, 2) else None
                     for i, (need, shape) in enumerate(zip(needs, shapes)))

    @staticmethod
    def forward(g, x, mean, var, weight, bias, axes, eps, centered, needs, affine_shape, shapes, layout=None,
                layout_shape=None):
        grads = list(_fused_grads(g, x, mean, var, _affine(weight, affine_shape), _affine(bias, affine_shape),
                                  axes, eps, centered, needs))
        if grads[0] is not None:
            grads[0] = pointwise(grads[0], (g, x)) if layout == "grad" else _laid_out(grads[0], x, layout, layout_shape)
        return tuple(None if a is None else a.reshape(shape) for a, shape in zip(grads, shapes))

    @staticmethod
    def backward(ctx, gg_x, gg_mean, gg_var, gg_weight, gg_bias):
        create_graph = STATE.enabled
        inputs = list(ctx.inputs)
        # The gradients depend on g, x and weight (the statistics are functions of x, the
        # bias enters none of them). Each is differentiated through a fresh alias, so that
        # the engine finds the partial derivative even when g itself depends on x.
        wanted = [i for i in (0, 1, 4) if ctx.needs_input_grad[i]]
        with enable_grad():
            for i in wanted:
                inputs[i] = inputs[i].view_as(inputs[i])
            g, x, _, _, weight, _ = inputs
            first = _grads_in_ops(g, x, weight, **ctx.attrs)
            seeded = [(f, h) for f, h in zip(first, (gg_x, gg_weight, gg_bias))
                      if f is not None and h is not None and f.requires_grad]
            if not seeded or not wanted:
                return (None,) * len(inputs)
            found = iter(grad([f for f, _ in seeded], [inputs[i] for i in wanted],
                              grad_outputs=[h for _, h in seeded], retain_graph=True,
                              create_graph=create_graph, allow_unused=True))
        return tuple(next(found) if i in wanted else None for i in range(len(inputs)))


def _grads_in_ops(g, x, weight, axes, eps, centered, needs, affine_shape, shapes, layout=None, layout_shape=None):
    """(grad x, grad weight, grad bias) of :class:`Normalize` (None where not ``needs``),
    written in ember ops with the statistics recomputed from ``x``: the formula of
    :func:`_fused_grads` in a form the engine can differentiate."""
    if affine_shape is not None and weight is not None:
        weight = weight.reshape(affine_shape)
    mean = x.mean(axes, keepdim=True) if centered else 0
    var = x.var(axes, correction=0, keepdim=True) if centered else (x * x).mean(axes, keepdim=True)
    invstd = (var + eps).rsqrt()
    xhat = (x - mean) * invstd if centered else x * invstd
    grad_x = grad_weight = grad_bias = None
    if needs[0]:
        g_xhat = g if weight is None else g * weight
        inner = g_xhat - xhat * (g_xhat * xhat).mean(axes, keepdim=True)
        if centered:
            inner = inner - g_xhat.mean(axes, keepdim=True)
        grad_x = inner * invstd
    if needs[3]:
        grad_weight = (g * xhat).sum_to_size(weight.shape).reshape(shapes[3])
    if needs[4]:
        grad_bias = g.sum_to_size(affine_shape or shapes[4]).reshape(shapes[4])
    return grad_x, grad_weight, grad_bias


def _laid_out(out, x, layout, shape=None):
    """``out``, a result shaped like ``x``, laid out as torch's kernel allocates it: ``layout``
    "row_major" (layer norm's kernels: ``LEGACY_CONTIGUOUS_MEMORY_FORMAT``), "suggested" (batch
    and group norm's: the ``suggest_memory_format`` of ``x`` seen as ``shape``, group norm's
    (N, C, *) input rather than its grouped view; channels-last, else row-major), None as
    NumPy made it; "grad" (rms norm's composite) is laid out by the caller."""
    if layout is None or layout == "grad" or not hasattr(out, "flags"):
        return out
    seen = x if shape is None else x.reshape(shape)
    if layout == "row_major" or suggested(seen) is contiguous_format:
        return row_major(out)
    return out if shape is None and out.strides == x.strides else \
        channels_last_like(out.reshape(seen.shape), seen).reshape(out.shape)


def _affine(array, shape):
    return array if array is None or shape is None else array.reshape(shape)


def _fused_grads(g, x, mean, var, weight, bias, axes, eps, centered, needs):
    """(grad x, None, None, grad weight, grad bias) as arrays, from the saved statistics; the
    weight and bias grads come in the (broadcastable) shapes of ``weight`` and ``bias``.

    With ``xhat = (x - mean) * invstd``, ``gh = g * weight`` and M elements per statistic,
    ``grad x = invstd * (gh - sum(gh) / M - xhat * sum(gh * xhat) / M)`` (sums over
    ``axes``); written as ``invstd * gh - x * k + c`` with per-statistic ``k`` and ``c`` so
    that ``xhat`` is never formed when the weight is constant along ``axes``.
    """
    count = 1
    for a in axes:
        count *= x.shape[a]
    if not centered:
        mean = x.dtype.type(0)
    invstd = 1 / namespace(var).sqrt(var + x.dtype.type(eps))
    grad_x = grad_weight = grad_bias = None
    if needs[4]:
        grad_bias = _sum_to(g.sum(axis=axes, keepdims=True) if _constant_along(bias, axes, x.ndim)
                            else g, bias.shape)
    if _constant_along(weight, axes, x.ndim):
        w = x.dtype.type(1) if weight is None else weight
        sum_g = g.sum(axis=axes, keepdims=True)
        sum_g_xhat = (_dot_over(g, x, axes) - mean * sum_g) * invstd
        if needs[0]:
            scale = invstd * w
            k = scale * invstd * sum_g_xhat / count
            grad_x = g * scale
            grad_x -= x * k
            if centered:
                grad_x += mean * k - scale * sum_g / count
        if needs[3]:
            grad_weight = _sum_to(sum_g_xhat, weight.shape)
        return grad_x, None, None, grad_weight, grad_bias
    xhat = (x - mean) if centered else x.copy()
    xhat *= invstd
    if needs[0]:
        g_xhat = g * weight
        grad_x = g_xhat - xhat * (_dot_over(g_xhat, xhat, axes) / count)
        if centered:
            grad_x -= g_xhat.sum(axis=axes, keepdims=True) / count
        grad_x *= invstd
    if needs[3]:
        grad_weight = _sum_to(g * xhat, weight.shape)
    return grad_x, None, None, grad_weight, grad_bias
