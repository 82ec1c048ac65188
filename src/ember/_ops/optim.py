"""Optimizer updates as ops: one entry per algorithm, so a compiled training step captures
``optimizer.step()`` as graph nodes (and a code generator can fuse the update into the loop or
the GEMM that makes the gradient), while eager steps run the same kernels.

Each forward is functional: it returns the new parameter and the new state arrays, and the
optimizer writes them back in place (``write_into``, which the compiler records as mutations).
Results equal the in-place NumPy updates they replaced bit for bit: the same operations in the
same order on the same dtypes.
"""
import math

import numpy as np

from .core import Op

__all__ = ["SgdUpdate", "AdamUpdate"]


class SgdUpdate(Op):
    """``(param, grad, momentum_buffer or None) -> (param', momentum_buffer')`` (the buffer
    only when ``momentum != 0``); the equations are :class:`ember.optim.SGD`'s."""
    promote = None
    differentiable = False
    save_inputs = False

    @staticmethod
    def forward(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize):
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum == 0:
            return (param - lr * grad,)
        if buf is None:
            # np.array, not .copy(): arithmetic on 0-d arrays yields NumPy scalars.
            buf = np.array(grad, dtype=param.dtype)
        else:
            buf = buf * momentum
            buf += (1 - dampening) * grad
        step = grad + momentum * buf if nesterov else buf
        return param - lr * step, buf


class AdamUpdate(Op):
    """``(param, grad, exp_avg, exp_avg_sq, step[, max_exp_avg_sq]) -> the same, updated``; the
    equations are :class:`ember.optim.Adam`'s (AdamW with ``decoupled_weight_decay``). ``step``
    is the 0-d step counter, so bias corrections follow it without recompiling."""
    promote = None
    differentiable = False
    save_inputs = False

    @staticmethod
    def forward(param, grad, m, v, step, max_v=None, *, lr, beta1, beta2, eps, weight_decay,
                decoupled_weight_decay, maximize):
        if maximize:
            grad = -grad
        step = step + 1
        t = float(step)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param = param * (1 - lr * weight_decay)
            else:
                grad = grad + weight_decay * param
        m = np.subtract(grad, m, out=np.empty_like(m)) * (1 - beta1) + m
        v = v * beta2
        scratch = np.multiply(grad, grad, out=np.empty_like(v))
        scratch *= 1 - beta2
        v += scratch
        if max_v is not None:
            max_v = np.maximum(max_v, v)
        denom = np.sqrt(v if max_v is None else max_v, out=scratch)
        denom /= math.sqrt(1 - beta2 ** t)
        denom += eps
        update = np.divide(m, denom, out=scratch)
        update *= lr / (1 - beta1 ** t)
        param = param - update
        return (param, m, v, step) if max_v is None else (param, m, v, step, max_v)
