"""The losses of ``ember.nn.functional`` that are primitives, each one fused node as PyTorch's.

``binary_cross_entropy`` and ``mse_loss`` are one elementwise pass each, reduced, with
PyTorch's derivative at the clamped ends. The negative log-likelihood family (``NllLoss``,
``CrossEntropy``) sits on the training hot path, where composing smaller ops would cost
several dispatches per step. The negative log-likelihood is linear in the log-probabilities,
so ``NllLoss`` and ``NllLossBackward`` are each other's adjoint: each one's derivative is the
other. Every derivative is written in ember ops, so gradients of gradients come free."""
import math

import numpy as np

from .._backend import namespace
from .core import Op, apply, elementwise_rule, zero_link


class BinaryCrossEntropy(Op):
    """Elementwise ``-weight * (t log(x) + (1 - t) log(1 - x))`` with each log clamped at -100,
    as in PyTorch, so that x = 0 or 1 gives a finite loss. The derivative is PyTorch's
    ``(x - t) / max(x (1 - x), 1e-12)``, finite at 0 and 1 too. RuntimeError for an ``x``
    outside [0, 1] (NaN passes, as in PyTorch): checked here, so a compiled graph checks it too."""
    promote = None
    infer = classmethod(elementwise_rule)

    @staticmethod
    def forward(x, target, weight=None):
        xp = namespace(x)
        if x.size and bool(((x < 0) | (x > 1)).any()):
            raise RuntimeError("all elements of input should be between 0 and 1")
        with np.errstate(divide="ignore"):
            loss = (target - 1) * xp.maximum(xp.log1p(-x), -100) - target * xp.maximum(xp.log(x), -100)
        return loss if weight is None else loss * weight

    @staticmethod
    def backward(ctx, g):
        x, target = ctx.input(0), ctx.input(1)
        needs = ctx.needs_input_grad
        if len(needs) == 3:
            g = g * ctx.input(2)
        gx = g * (x - target) / (x * (1 - x)).clamp_min(1e-12) if needs[0] else None
        gt = g * ((-x).log1p() - x.log()) if needs[1] else None
        return (gx, gt) + ((None,) if len(needs) == 3 else ())


class MseLoss(Op):
    """``(x - target)^2`` reduced by ``reduction`` ('mean' | 'sum' | 'none'), one node as
    PyTorch's ``MseLossBackward0``, whose inputs are the (broadcast) input and target; the
    derivative is ``2 (x - target) g``, divided by the element count for the mean."""
    infer = classmethod(lambda op, x, target, reduction="mean": (
        elementwise_rule(op, x, target)[0] if reduction == "none" else (), elementwise_rule(op, x, target)[1]))

    @staticmethod
    def forward(x, target, reduction="mean"):
        diff = x - target
        return _reduce(diff * diff, reduction, diff.size, x.dtype)

    @staticmethod
    def backward(ctx, g):
        diff = ctx.input(0) - ctx.input(1)
        if ctx.attrs.get("reduction", "mean") == "mean":
            g = g / diff.numel()
        grad = 2 * diff * g
        needs = ctx.needs_input_grad
        return (grad if needs[0] else None), (-grad if needs[1] else None)


# ---- negative log-likelihood --------------------------------------------------------------------
# Shared by NllLoss, NllLossBackward and CrossEntropy. ``logp`` is (N, C, d1, ...); ``target`` is
# (N, d1, ...) int64 class indices, or (N, C, d1, ...) floating probabilities. The loss of sample
# i is -sum_c A[i, c] * logp[i, c] with a coefficient array A fixed by the target, the class
# weights and the label smoothing; the reduction then divides by a constant (the target weight
# total for class indices, the sample count for probabilities).
def _class_view(array, ndim):
    """A (C,) array shaped to broadcast along axis 1 of an ``ndim``-dimensional array."""
    return array.reshape((1, -1) + (1,) * (ndim - 2))


def _index_parts(num_classes, dtype, target, weight, ignore_index):
    """(target with ignored samples sent to class 0, per-sample weight with ignored samples
    zeroed, bool mask of the samples kept). The weight is None when every sample weighs 1 and
    the mask None when none is ignored. IndexError for a class index outside [0, C) other
    than ``ignore_index``."""
    # Read as unsigned, negative indices are huge: one comparison finds both kinds of bad index.
    suspect = target.view(np.uint64) >= num_classes
    if not suspect.any() and not 0 <= ignore_index < num_classes:
        return target, (None if weight is None else weight[target]), None
    keep = target != ignore_index
    bad = suspect & keep
    if bad.any():
        raise IndexError(f"Target {int(target[bad].flat[0])} is out of bounds.")
    safe = namespace(target).where(keep, target, 0)
    return safe, (keep.astype(dtype) if weight is None else weight[safe] * keep), keep


def _pick(logp, index):
    """``logp[n, index[n, ...], ...]``: each sample's value at its class."""
    xp = namespace(logp)
    if logp.ndim == 2:
        return logp[xp.arange(logp.shape[0]), index]
    return xp.take_along_axis(logp, xp.expand_dims(index, 1), 1).squeeze(1)


def _place(out, index, values):
    """``out[n, index[n, ...], ...] = values[n, ...]`` (``values`` may be a scalar)."""
    xp = namespace(out)
    if out.ndim == 2:
        out[xp.arange(out.shape[0]), index] = values
    else:
        values = values if getattr(values, "ndim", 0) == 0 else xp.expand_dims(values, 1)
        xp.put_along_axis(out, xp.expand_dims(index, 1), values, 1)


def _coefficients(logp_shape, dtype, target, weight, ignore_index, label_smoothing):
    """(A, denominator of the mean, mask of kept samples or None) for the loss
    ``-sum_c A * logp``."""
    ndim = len(logp_shape)
    num_classes = logp_shape[1]
    xp = namespace(target)
    if target.dtype.kind == "f":
        probs = target
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / num_classes
        coef = probs if weight is None else probs * _class_view(weight, ndim)
        count = math.prod(logp_shape) // num_classes if num_classes else 0
        return coef.astype(dtype, copy=False), (count if count else float("nan")), None
    safe, sample_weight, keep = _index_parts(num_classes, dtype, target, weight, ignore_index)
    if sample_weight is None:
        sample_weight = xp.ones(safe.shape, dtype)
    coef = xp.zeros(logp_shape, dtype)
    _place(coef, safe, sample_weight * (1 - label_smoothing) if label_smoothing else sample_weight)
    if label_smoothing:
        # PyTorch's smoothing term weights class c by weight[c], not by the target's weight.
        spread = xp.ones((num_classes,), dtype) if weight is None else weight
        kept = 1 if keep is None else xp.expand_dims(keep, 1)
        coef += _class_view(spread, ndim) * kept * (label_smoothing / num_classes)
    return coef, sample_weight.sum(), keep


def _nll_forward(logp, target, weight, ignore_index, label_smoothing, reduction):
    if target.dtype.kind != "f" and not label_smoothing:
        # The hot path: one gathered value per sample, no dense coefficient array.
        safe, sample_weight, _ = _index_parts(logp.shape[1], logp.dtype, target, weight, ignore_index)
        losses = -_pick(logp, safe)
        if sample_weight is not None:
            losses *= sample_weight
        denominator = losses.size if sample_weight is None else sample_weight.sum()
    else:
        coef, denominator, _ = _coefficients(logp.shape, logp.dtype, target, weight, ignore_index,
                                             label_smoothing)
        losses = -(coef * logp).sum(axis=1)
    return _reduce(losses, reduction, denominator, logp.dtype)


def _reduce(losses, reduction, denominator, dtype):
    if reduction == "none":
        return losses
    total = losses.sum()
    xp = namespace(losses)
    if reduction == "sum":
        return xp.asarray(total, dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return xp.asarray(total / xp.asarray(denominator, dtype), dtype)


def _nll_backward(g, logp_shape, target, weight, ignore_index, label_smoothing, reduction):
    """-A * (the reduction's adjoint applied to ``g``): the gradient w.r.t. ``logp``."""
    xp = namespace(g)
    if target.dtype.kind != "f" and not label_smoothing:
        # The hot path: one nonzero per sample, at its class.
        safe, sample_weight, keep = _index_parts(logp_shape[1], g.dtype, target, weight, ignore_index)
        if reduction == "mean":
            denominator = safe.size if sample_weight is None else sample_weight.sum()
            with np.errstate(invalid="ignore", divide="ignore"):
                g = g / xp.asarray(denominator, g.dtype)
        values = -g if sample_weight is None else -g * sample_weight
        if keep is not None:
            # Ignored samples get no gradient at all, even where the mean divides by a zero weight.
            values = xp.where(keep, values, g.dtype.type(0))
        grad = xp.zeros(logp_shape, g.dtype)
        _place(grad, safe, values)
        return grad
    coef, denominator, keep = _coefficients(logp_shape, g.dtype, target, weight, ignore_index,
                                            label_smoothing)
    if reduction == "none":
        per_sample = xp.expand_dims(g, 1)
    elif reduction == "sum":
        per_sample = g
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            per_sample = g / xp.asarray(denominator, g.dtype)
    with np.errstate(invalid="ignore"):
        grad = -(coef * per_sample)
    if keep is not None:
        grad = xp.where(xp.expand_dims(keep, 1), grad, grad.dtype.type(0))
    return grad


def _nll_rule(op, logp, target, weight, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """A 0-d loss, or with ``reduction="none"`` one per sample: (N, d1, ...)."""
    if reduction != "none":
        return (), logp.dtype
    return tuple(target.shape[:1] + target.shape[2:] if target.is_floating_point() else target.shape), logp.dtype


class NllLoss(Op):
    """Negative log-likelihood of ``logp`` (N, C, d1, ...) at ``target``; see
    :func:`ember.nn.functional.nll_loss` for the argument rules. ``weight`` is (C,) or None."""
    promote = None
    infer = classmethod(_nll_rule)

    @staticmethod
    def forward(logp, target, weight, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
        return _nll_forward(logp, target, weight, ignore_index, label_smoothing, reduction)

    @staticmethod
    def backward(ctx, g):
        target, weight = ctx.input(1), ctx.input(2)
        grad_logp = zero_link(apply(NllLossBackward, g, target, weight, num_classes=ctx.shapes[0][1], **ctx.attrs),
                              ctx.input(0)) if ctx.needs_input_grad[0] else None
        return grad_logp, _probability_grad(ctx, g, ctx.input(0)), None


class NllLossBackward(Op):
    """The gradient of :class:`NllLoss` w.r.t. its log-probabilities, as a function of the
    loss's gradient ``g`` (linear in ``g``; its own derivative is ``NllLoss`` again)."""
    promote = None

    @classmethod
    def infer(cls, g, target, weight, num_classes, **attrs):
        shape = target.shape if target.is_floating_point() else target.shape[:1] + (num_classes,) + target.shape[1:]
        return tuple(shape), g.dtype

    @staticmethod
    def forward(g, target, weight, num_classes, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
        shape = target.shape if target.dtype.kind == "f" else \
            target.shape[:1] + (num_classes,) + target.shape[1:]
        return _nll_backward(g, shape, target, weight, ignore_index, label_smoothing, reduction)

    @staticmethod
    def backward(ctx, h):
        attrs = {k: v for k, v in ctx.attrs.items() if k != "num_classes"}
        grad_g = apply(NllLoss, h, ctx.input(1), ctx.input(2), **attrs) if ctx.needs_input_grad[0] else None
        return grad_g, _probability_grad(ctx, ctx.input(0), h), None


def _log_softmax(x):
    """log_softmax along axis 1, shifted by the max so it never overflows."""
    if not x.size:
        return x.copy()
    logp = x - x.max(axis=1, keepdims=True)
    xp = namespace(x)
    logp -= xp.log(xp.exp(logp).sum(axis=1, keepdims=True))
    return logp


def _softmax(x):
    if not x.size:
        return x.copy()
    e = namespace(x).exp(x - x.max(axis=1, keepdims=True))
    e /= e.sum(axis=1, keepdims=True)
    return e


class CrossEntropy(Op):
    """``NllLoss(log_softmax(input, 1), ...)`` in one pass; ``input`` is (N, C, d1, ...)."""
    promote = None
    infer = classmethod(_nll_rule)

    @staticmethod
    def forward(x, target, weight, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
        return _nll_forward(_log_softmax(x), target, weight, ignore_index, label_smoothing, reduction)

    @staticmethod
    def backward(ctx, g):
        x, target, weight = ctx.input(0), ctx.input(1), ctx.input(2)
        grad_x = apply(CrossEntropyBackward, g, target, weight, x, **ctx.attrs) if ctx.needs_input_grad[0] else None
        logp = x.log_softmax(1) if ctx.needs_input_grad[1] or ctx.needs_input_grad[2] else None
        grad_target = _probability_grad(ctx, g, logp) if ctx.needs_input_grad[1] else None
        return grad_x, grad_target, _probability_weight_grad(ctx, g, logp)


class CrossEntropyBackward(Op):
    """The gradient of :class:`CrossEntropy` w.r.t. its logits ``x`` given the loss gradient
    ``g``: ``G - softmax(x) * G.sum(1)`` with ``G = NllLossBackward(g)``, in one pass."""
    promote = None
    infer = classmethod(lambda op, g, target, weight, x, **attrs: (tuple(x.shape), x.dtype))

    @staticmethod
    def forward(g, target, weight, x, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
        grad_logp = _nll_backward(g, x.shape, target, weight, ignore_index, label_smoothing, reduction)
        return grad_logp - _softmax(x) * grad_logp.sum(axis=1, keepdims=True)

    @staticmethod
    def backward(ctx, h):
        g, target, weight, x = ctx.inputs
        needs = ctx.needs_input_grad
        attrs = ctx.attrs
        probs = x.softmax(1)
        # The result is linear in G (its adjoint maps h to h - sum_c(h * softmax)) and depends on
        # x through softmax only, scaled by k = G.sum(1).
        h_through_g = h - (h * probs).sum(1, keepdim=True)
        grad_g = apply(NllLoss, h_through_g, target, weight, **attrs) if needs[0] else None
        grad_x = None
        if needs[3]:
            k = apply(NllLossBackward, g, target, weight, num_classes=x.shape[1], **attrs).sum(1, keepdim=True)
            u = -h * k
            grad_x = probs * (u - (u * probs).sum(1, keepdim=True))
        return grad_g, _probability_grad(ctx, g, h_through_g), None, grad_x


def _probability_grad(ctx, g, factor):
    """The derivative w.r.t. probability targets of ``reduce(-sum_c A * factor)`` with loss
    gradient ``g``: A depends on the target ``y`` as ``(1 - smoothing) * weight * y`` + const."""
    if not ctx.needs_input_grad[1]:
        return None
    target, weight = ctx.input(1), ctx.input(2)
    grad = factor * _reduction_adjoint(ctx, g, target) * -(1 - ctx.attrs.get("label_smoothing", 0.0))
    if weight is not None:
        grad = grad * weight.reshape((1, -1) + (1,) * (target.ndim - 2))
    return grad


def _probability_weight_grad(ctx, g, factor):
    """The derivative w.r.t. ``weight`` (C) of ``reduce(-sum_c A * factor)`` for probability
    targets ``y``: A = weight * ((1 - smoothing) * y + smoothing / C). None for class indices
    (torch refuses a weight that requires grad there)."""
    target = ctx.input(1)
    if not ctx.needs_input_grad[2] or not target.dtype.is_floating_point:
        return None
    smoothing = ctx.attrs.get("label_smoothing", 0.0)
    smoothed = target * (1 - smoothing) + smoothing / target.shape[1]
    per_element = -_reduction_adjoint(ctx, g, target) * factor * smoothed
    return per_element.sum(tuple(d for d in range(target.ndim) if d != 1))


def _reduction_adjoint(ctx, g, target):
    """The loss gradient ``g`` spread back over the samples of ``target`` (N, C, d1, ...), with
    a singleton class dim: the adjoint of the 'none', 'sum' or 'mean' reduction."""
    reduction = ctx.attrs.get("reduction", "mean")
    if reduction == "none":
        return g.unsqueeze(1)
    if reduction == "mean":
        return g / (target.numel() // target.shape[1] if target.numel() else float("nan"))
    return g
