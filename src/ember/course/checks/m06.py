"""Module 06, optimizers: SGD's and Adam's update equations, as trajectories of the parameters
over several steps against torch's optimizers with the same options."""
import numpy as np
import torch

import ember

from . import check, close


def _trajectory(lib, make, w0, grads):
    w = lib.nn.Parameter(lib.tensor(w0))
    opt = make(lib, [w])
    for g in grads:
        w.grad = lib.tensor(g)
        opt.step()
    return w.detach()


def _compare(what, make, rng):
    w0 = rng.standard_normal((3, 4))
    grads = [rng.standard_normal((3, 4)) for _ in range(5)]
    close(f"{what}: parameters after 5 steps", _trajectory(ember, make, w0, grads),
          _trajectory(torch, make, w0, grads), rtol=1e-10, atol=1e-12, input=w0)


@check("06/sgd-update", points=3)
def sgd_update():
    rng = np.random.default_rng(6)
    for kw in (dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, nesterov=True),
               dict(lr=0.1, momentum=0.5, dampening=0.3, weight_decay=0.01), dict(lr=0.1, maximize=True)):
        _compare(f"SGD({kw})", lambda L, p, kw=kw: L.optim.SGD(p, **kw), rng)


@check("06/adam-update", points=3)
def adam_update():
    rng = np.random.default_rng(7)
    for cls, kw in (("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1)),
                    ("Adam", dict(lr=0.01, amsgrad=True)), ("AdamW", dict(lr=0.01, weight_decay=0.1)),
                    ("Adam", dict(lr=0.01, maximize=True))):
        _compare(f"{cls}({kw})", lambda L, p, cls=cls, kw=kw: getattr(L.optim, cls)(p, **kw), rng)
