"""Module 03, autograd: the engine's dependency count (a node runs only once every gradient
meant for it has arrived: seen in the order tensor hooks fire on a diamond) and the sum of the
gradients that reach one node (values against torch)."""
import numpy as np

import ember

from . import check, differential, same


def _hook_order(L, branches):
    x = L.tensor([0.3, -0.2, 0.5], requires_grad=True)
    y = x * 2
    outs = [f(y) for f in branches]
    fired = []
    y.register_hook(lambda g: fired.append("y"))
    for i, out in enumerate(outs):
        out.register_hook(lambda g, i=i: fired.append(f"branch {i}"))
    total = outs[0]
    for out in outs[1:]:
        total = total + out
    total.sum().backward()
    return fired


@check("03/count-dependencies", points=3)
def count_dependencies():
    for branches, what in (((lambda y: y.exp(), lambda y: y.sin()), "exp(y) + sin(y)"),
                           ((lambda y: y.exp(), lambda y: y.tanh(), lambda y: y * 3), "exp(y) + tanh(y) + 3y")):
        fired = _hook_order(ember, branches)
        same(f"y = 2x; backward of ({what}).sum(): y's gradient hook fires once, after every branch's",
             (fired.count("y"), fired[-1] if fired else None), (1, "y"))


@check("03/add-gradient", points=2)
def add_gradient():
    rng = np.random.default_rng(31)
    x = rng.standard_normal(4)
    differential("x * x (both gradients reach x's node)", lambda L, x: x * x, x, rtol=1e-12)
    differential("x + x", lambda L, x: x + x, x, rtol=1e-12)
    differential("cat([x, x, x]) (three gradients from one node)", lambda L, x: L.cat([x, x, x]), x, rtol=1e-12)
