"""Optimizer updates in C: the equations of the update ops (``SgdUpdate``, ``AdamUpdate``,
``RmspropUpdate``, ``AdagradUpdate`` of ``ember._ops.optim``) as C expressions, one per result,
fused into the loop that also computes the gradient (the elementwise kernels of :mod:`.kernels`). The hyperparameters are graph inputs (0-d
float64 placeholders read at each call) or constants; a constant 0 leaves its term out.
Sources: ``torch.optim.SGD``, ``Adam``/``AdamW``, ``RMSprop`` and ``Adagrad`` (their documented algorithms).
"""
import operator

import numpy as np

__all__ = ["UPDATES", "STEPS", "update_attrs", "update_of", "joins_updates"]


def _sgd(a, k, d, index):
    """SGD's equations (ember.optim.SGD): param, grad, momentum buffer, then the
    hyperparameters (double scalars, or constants) -> param', buffer'. ``k["zero"]`` names the
    hyperparameters that are the constant 0: their terms are left out."""
    h = _scalar(d)
    p, g, buf, lr, momentum, dampening, weight_decay = a
    if k["maximize"]:
        g = f"(-{g})"
    if "weight_decay" not in k["zero"]:
        g = f"({g} + {h(weight_decay)} * {p})"
    if "momentum" in k["zero"]:
        return f"({p} - {h(lr)} * {g})"
    kept = g if "dampening" in k["zero"] else f"{h(f'1.0 - {dampening}')} * {g}"
    new_buf = g if buf is None else f"({buf} * {h(momentum)} + {kept})"
    if index == 1:
        return new_buf
    step = f"({g} + {h(momentum)} * {new_buf})" if k["nesterov"] else new_buf
    return f"({p} - {h(lr)} * {step})"


def _adam(a, k, d, index):
    """Adam's equations (ember.optim.Adam; AdamW with decoupled weight decay): param, grad,
    exp_avg, exp_avg_sq, step, max_exp_avg_sq or None, then the hyperparameters -> param,
    exp_avg, exp_avg_sq, step[, max_exp_avg_sq], updated. The bias corrections are computed
    in double from the step count, as eagerly (Python floats), then rounded to ``d``."""
    h = _scalar(d)
    p, g, m, v, step, max_v, lr, beta1, beta2, eps, weight_decay = a
    if index == 3:
        return f"({step} + 1)"
    f = "f" if d == np.float32 else ""
    t = f"((double)({step} + 1))"
    if k["maximize"]:
        g = f"(-{g})"
    if "weight_decay" not in k["zero"]:
        if k["decoupled_weight_decay"]:
            p = f"({p} * {h(f'1.0 - {lr} * {weight_decay}')})"
        else:
            g = f"({g} + {h(weight_decay)} * {p})"
    new_m = f"(({g} - {m}) * {h(f'1.0 - {beta1}')} + {m})"
    new_v = f"({v} * {h(beta2)} + {g} * {g} * {h(f'1.0 - {beta2}')})"
    new_max = None if max_v is None else f"({max_v} > {new_v} ? {max_v} : {new_v})"
    if index == 1:
        return new_m
    if index == 2:
        return new_v
    if index == 4:
        return new_max
    denom = f"(sqrt{f}({new_max or new_v}) / {h(f'sqrt(1.0 - pow({beta2}, {t}))')} + {h(eps)})"
    return f"({p} - {new_m} / {denom} * {h(f'{lr} / (1.0 - pow({beta1}, {t}))')})"


def _rmsprop(a, k, d, index):
    """RMSprop's equations (ember.optim.RMSprop): param, grad, square_avg, step, momentum buffer
    or None, grad_avg or None (centered), then the hyperparameters -> the param, square_avg,
    step, buffer and grad_avg given, updated."""
    h = _scalar(d)
    p, g, sq, step, buf, grad_avg, lr, alpha, eps, weight_decay, momentum = a
    role = [r for r, x in zip(("param", "square_avg", "step", "buf", "grad_avg"), (p, sq, step, buf, grad_avg))
            if x is not None][index]
    if role == "step":
        return f"({step} + 1)"
    if k["maximize"]:
        g = f"(-{g})"
    if "weight_decay" not in k["zero"]:
        g = f"({g} + {h(weight_decay)} * {p})"
    f = "f" if d == np.float32 else ""
    new_sq = f"({sq} * {h(alpha)} + {h(f'1.0 - {alpha}')} * {g} * {g})"
    new_avg = None if grad_avg is None else f"({grad_avg} + {h(f'1.0 - {alpha}')} * ({g} - {grad_avg}))"
    if role == "square_avg":
        return new_sq
    if role == "grad_avg":
        return new_avg
    avg = f"(sqrt{f}({new_sq}) + {h(eps)})" if new_avg is None else \
        f"(sqrt{f}({new_sq} - {new_avg} * {new_avg}) + {h(eps)})"
    if buf is None:
        return f"({p} - {h(lr)} * {g} / {avg})"
    new_buf = f"({buf} * {h(momentum)} + {g} / {avg})"
    return new_buf if role == "buf" else f"({p} - {h(lr)} * {new_buf})"


def _adagrad(a, k, d, index):
    """Adagrad's equations (ember.optim.Adagrad): param, grad, sum, step, then the
    hyperparameters -> param, sum, step, updated; the decayed learning rate computed in double
    from the step count, as eagerly (Python floats), then rounded to ``d``."""
    h = _scalar(d)
    p, g, state_sum, step, lr, lr_decay, weight_decay, eps = a
    if index == 2:
        return f"({step} + 1)"
    if k["maximize"]:
        g = f"(-{g})"
    if "weight_decay" not in k["zero"]:
        g = f"({g} + {h(weight_decay)} * {p})"
    new_sum = f"({state_sum} + {g} * {g})"
    if index == 1:
        return new_sum
    f = "f" if d == np.float32 else ""
    clr = lr if "lr_decay" in k["zero"] else f"{lr} / (1.0 + ((double)({step} + 1) - 1.0) * {lr_decay})"
    return f"({p} - {h(clr)} * {g} / (sqrt{f}({new_sum}) + {h(eps)}))"


def _scalar(d):
    """A scalar C expression computed in double, rounded to the ``d`` of the arrays (as eager
    NumPy rounds a Python float operand)."""
    ctype = "float" if d == np.float32 else "double"
    return lambda e: f"(({ctype})({e}))"


# Optimizer updates: several results, each picked by a getitem node that becomes a loop member.
UPDATES = {"SgdUpdate": _sgd, "AdamUpdate": _adam, "RmspropUpdate": _rmsprop, "AdagradUpdate": _adagrad}
STEPS = {"AdamUpdate": 4, "RmspropUpdate": 3, "AdagradUpdate": 3}  # where an update's 0-d step count is


def update_attrs(update):
    """An update node's attrs with ``zero``: the names of its hyperparameters that are the
    constant 0 (a capture keeps zeros as constants, see group_replay.hyperparameter_inputs)."""
    names = update.target.hyperparameters
    values = update.args[len(update.args) - len(names):]
    return dict(update.kwargs, zero={n for n, v in zip(names, values) if not hasattr(v, "meta") and v == 0})


def update_of(node):
    """The update op a ``getitem`` node picks a result of, or None."""
    if node.op == "call_op" and node.target is operator.getitem and hasattr(node.args[0], "target"):
        source = node.args[0]
        if getattr(source.target, "name", None) in UPDATES:
            return source
    return None


def joins_updates(nodes, node):
    """Whether ``node`` may join the loop computing ``nodes`` (an open loop of its shape, with
    elements): a result of an optimizer update joins no loop holding another update's. Fused,
    the tiny GPT step's 14 updates of its [128] parameters were one loop that took a quarter
    second of gcc -O3 and ran in microseconds; apart, its updates are loops that differ only in
    their slots and lengths, which :mod:`.shared` compiles once."""
    source = update_of(node)
    return source is None or all(update_of(n) in (None, source) for n in nodes)
