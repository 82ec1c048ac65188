"""Normalisation: statistics over some axes, then a fused normalise-and-scale.

Batch, instance, group, layer and RMS norm are all ``(x - mean) / sqrt(var + eps) * weight
+ bias`` with the statistics taken over different axes (RMS norm: no mean, and the mean
square in place of the variance). :class:`NormStats` computes them once, so the public
functions can also update running statistics from them; :class:`Normalize` applies them.

``Normalize``'s derivative treats the statistics as the functions of ``x`` that they are
(the usual batch-norm backward). When a graph of the gradient is being built
(``create_graph``), it recomputes them from ``x`` in ember ops so that second derivatives
see that dependence too; otherwise it reuses the saved ones.
"""
import numpy as np

from ..autograd.grad_mode import STATE
from .core import Op


class NormStats(Op):
    """(2, *kept) array of ``mean`` and biased ``var`` of ``x`` over ``axes`` (kept as size
    1); with ``centered=False`` the mean is 0 and the mean square stands for the variance."""
    promote = None
    differentiable = False

    @staticmethod
    def forward(x, axes, centered=True):
        if not centered:
            mean_square = np.mean(np.square(x), axis=axes, keepdims=True)
            return np.stack([np.zeros_like(mean_square), mean_square])
        mean = np.mean(x, axis=axes, keepdims=True)
        centred = x - mean
        return np.stack([mean, np.mean(np.square(centred, out=centred), axis=axes, keepdims=True)])


class Normalize(Op):
    """``(x - mean) * rsqrt(var + eps) * weight + bias`` with ``stats`` from
    :class:`NormStats` over ``axes``; ``weight`` and ``bias`` (or None) broadcast to ``x``."""
    promote = None

    @staticmethod
    def forward(x, stats, weight, bias, axes, eps, centered=True):
        scale = 1 / np.sqrt(stats[1] + np.asarray(eps, x.dtype))
        if weight is not None:
            scale = scale * weight
        out = x - stats[0] if centered else x * 1
        out *= scale
        if bias is not None:
            out += bias
        return out

    @staticmethod
    def backward(ctx, g):
        x, stats, weight = ctx.input(0), ctx.input(1), ctx.input(2)
        axes, eps, centered = ctx.attrs["axes"], ctx.attrs["eps"], ctx.attrs.get("centered", True)
        needs = ctx.needs_input_grad
        if STATE.enabled:
            mean = x.mean(axes, keepdim=True) if centered else 0
            var = x.var(axes, correction=0, keepdim=True) if centered else (x * x).mean(axes, keepdim=True)
        else:
            mean, var = stats[0], stats[1]
        invstd = (var + eps).rsqrt()
        xhat = (x - mean) * invstd if centered else x * invstd
        grad_x = grad_weight = None
        if needs[0]:
            g_xhat = g if weight is None else g * weight
            inner = g_xhat - xhat * (g_xhat * xhat).mean(axes, keepdim=True)
            if centered:
                inner = inner - g_xhat.mean(axes, keepdim=True)
            grad_x = inner * invstd
        if needs[2]:
            grad_weight = g * xhat
        grad_bias = g if needs[3] else None
        return grad_x, None, grad_weight, grad_bias
