"""Optimizer updates as ops: one entry per algorithm, so a compiled training step captures
``optimizer.step()`` as graph nodes (and a code generator can fuse the update into the loop or
the GEMM that makes the gradient), while eager steps run the same kernels.

The optimizers call them with ``inplace=True``: the parameter and state arrays are updated in
place (no temporaries beyond one scratch array per parameter) and returned. ``mutates`` names
the inputs written, in order; the results are those of them given (not None), so the compiler
records the call as the functional op (``inplace=False``: fresh arrays, the inputs untouched)
followed by mutations.

The numbers an LR scheduler may change (``hyperparameters``, the op's last inputs) are inputs,
not attributes: eagerly Python numbers, in a compiled graph 0-d float64 arrays read from the
parameter group at each call, so a scheduler never makes it recompile. The kernels read them
as Python floats (``float``), the same numbers either way.
"""
import math

import numpy as np  # noqa: F401  (a student's answer to the course's exercises may use it)

from .._backend import namespace
from .core import Op

__all__ = ["SgdUpdate", "AdamUpdate", "RmspropUpdate", "AdagradUpdate"]


def _numbers(*values):
    """The hyperparameters as Python floats (they may be 0-d arrays in a compiled graph)."""
    return tuple(map(float, values))


class _Update:
    """What every update entry shares (a mixin, not an :class:`Op`: an Op subclass is registered as
    an entry of its own): no type promotion, no derivative, no saved inputs, and, unless the entry
    has its own, the shape rule of an update whose results are its ``mutates`` inputs that are
    given (not None)."""
    promote = None
    differentiable = False
    save_inputs = False

    @classmethod
    def infer(cls, *inputs, **attrs):
        return tuple((tuple(inputs[i].shape), inputs[i].dtype) for i in cls.mutates if inputs[i] is not None)


def _fresh(inplace, *arrays):
    return arrays if inplace else tuple(None if a is None else namespace(a).array(a) for a in arrays)


class SgdUpdate(_Update, Op):
    """``(param, grad, momentum_buffer or None, lr, momentum, dampening, weight_decay) ->
    (param', momentum_buffer')`` (the buffer only when ``momentum != 0``; a new one when none is
    given); :class:`ember.optim.SGD`'s equations."""
    mutates = (0, 2)
    hyperparameters = ("lr", "momentum", "dampening", "weight_decay")

    @classmethod
    def infer(cls, param, grad, buf, lr, momentum, *hyperparameters, **attrs):
        like_param = tuple(param.shape), param.dtype
        return (like_param,) if float(momentum) == 0 else (like_param, like_param)

    @staticmethod
    def forward(param, grad, buf, lr, momentum, dampening, weight_decay, *, nesterov, maximize, inplace=False):
        xp = namespace(param)
        lr, momentum, dampening, weight_decay = _numbers(lr, momentum, dampening, weight_decay)
        param, buf = _fresh(inplace, param, buf)
        # course:begin 06/sgd-update
        # hint: the equations in ember.optim.SGD's docstring: negate grad if maximize, add weight decay,
        # hint: momentum buffer (the first step copies grad), Nesterov, then param -= lr * grad, in place
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            if buf is None:
                # xp.array, not .copy(): arithmetic on 0-d arrays yields NumPy scalars.
                buf = xp.array(grad, dtype=param.dtype)
            else:
                buf *= momentum
                buf += (1 - dampening) * grad
            grad = grad + momentum * buf if nesterov else buf
        param -= lr * grad
        return (param,) if momentum == 0 else (param, buf)
        # course:end 06/sgd-update


class AdamUpdate(_Update, Op):
    """``(param, grad, exp_avg, exp_avg_sq, step, max_exp_avg_sq or None, lr, beta1, beta2, eps,
    weight_decay) -> (param, exp_avg, exp_avg_sq, step[, max_exp_avg_sq]), updated``;
    :class:`ember.optim.Adam`'s equations (AdamW with ``decoupled_weight_decay``). ``step`` is
    the 0-d step counter, so the bias corrections follow it without recompiling."""
    mutates = (0, 2, 3, 4, 5)
    hyperparameters = ("lr", "beta1", "beta2", "eps", "weight_decay")


    @staticmethod
    def forward(param, grad, m, v, step, max_v, lr, beta1, beta2, eps, weight_decay, *,
                decoupled_weight_decay, maximize, inplace=False):
        param, m, v, step, max_v = _fresh(inplace, param, m, v, step, max_v)
        lr, beta1, beta2, eps, weight_decay = _numbers(lr, beta1, beta2, eps, weight_decay)
        xp = namespace(param)
        # course:begin 06/adam-update
        # hint: step += 1; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2 (amsgrad: max_v = max(max_v, v));
        # hint: param -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps); AdamW decays param by lr * wd first
        if maximize:
            grad = -grad
        step += 1
        t = float(step)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        # One scratch array for every intermediate: no temporaries per parameter and step.
        scratch = xp.subtract(grad, m, out=xp.empty_like(m))
        scratch *= 1 - beta1
        m += scratch
        v *= beta2
        xp.multiply(grad, grad, out=scratch)
        scratch *= 1 - beta2
        v += scratch
        if max_v is not None:
            xp.maximum(max_v, v, out=max_v)
        denom = xp.sqrt(v if max_v is None else max_v, out=scratch)
        denom /= math.sqrt(1 - beta2 ** t)
        denom += eps
        update = xp.divide(m, denom, out=scratch)
        update *= lr / (1 - beta1 ** t)
        param -= update
        return (param, m, v, step) if max_v is None else (param, m, v, step, max_v)
        # course:end 06/adam-update


class RmspropUpdate(_Update, Op):
    """``(param, grad, square_avg, step, momentum_buffer or None, grad_avg or None, lr, alpha,
    eps, weight_decay, momentum) -> (param, square_avg, step[, momentum_buffer][, grad_avg])``,
    updated (the buffer where given: momentum > 0; grad_avg: ``centered``);
    :class:`ember.optim.RMSprop`'s equations."""
    mutates = (0, 2, 3, 4, 5)
    hyperparameters = ("lr", "alpha", "eps", "weight_decay", "momentum")


    @staticmethod
    def forward(param, grad, square_avg, step, buf, grad_avg, lr, alpha, eps, weight_decay, momentum, *,
                maximize, inplace=False):
        param, square_avg, step, buf, grad_avg = _fresh(inplace, param, square_avg, step, buf, grad_avg)
        lr, alpha, eps, weight_decay, momentum = _numbers(lr, alpha, eps, weight_decay, momentum)
        xp = namespace(param)
        if maximize:
            grad = -grad
        step += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if grad_avg is not None:
            grad_avg += (1 - alpha) * (grad - grad_avg)
            avg = xp.sqrt(square_avg - grad_avg * grad_avg) + eps
        else:
            avg = xp.sqrt(square_avg) + eps
        if buf is not None:
            buf *= momentum
            buf += grad / avg
            param -= lr * buf
        else:
            param -= lr * grad / avg
        return tuple(t for t in (param, square_avg, step, buf, grad_avg) if t is not None)


class AdagradUpdate(_Update, Op):
    """``(param, grad, sum, step, lr, lr_decay, weight_decay, eps) -> (param, sum, step)``,
    updated; :class:`ember.optim.Adagrad`'s equations (its learning rate decays with the 0-d
    step count, read at each call)."""
    mutates = (0, 2, 3)
    hyperparameters = ("lr", "lr_decay", "weight_decay", "eps")


    @staticmethod
    def forward(param, grad, state_sum, step, lr, lr_decay, weight_decay, eps, *, maximize, inplace=False):
        param, state_sum, step = _fresh(inplace, param, state_sum, step)
        lr, lr_decay, weight_decay, eps = _numbers(lr, lr_decay, weight_decay, eps)
        xp = namespace(param)
        if maximize:
            grad = -grad
        step += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        clr = lr / (1 + (float(step) - 1) * lr_decay)
        state_sum += grad * grad
        param -= clr * grad / (xp.sqrt(state_sum) + eps)
        return param, state_sum, step
