"""Module 18, acceleration: memory planning in the compiler's code generator. A chain of
kernels compiled to C must give eager's results with its dead buffers reused."""
import numpy as np

import ember
from ember.compiler.backends import compile_graph

from . import Mismatch, check, close


def _chain(x, steps=6):
    h, outs = x, []
    for _ in range(steps):
        h = (h + h.sum(1, keepdim=True)).tanh()   # each sum ends a kernel: h lives on
        outs.append(h.sum())
    return outs


@check("18/reuse-buffers", points=3)
def reuse_buffers():
    x = ember.tensor(np.random.default_rng(18).standard_normal((32, 16)).astype(np.float32))
    graph = ember._dynamo.explain(_chain)(x).captured[0]
    compiled = compile_graph(graph, {})
    if not hasattr(compiled, "c_source"):
        raise Mismatch("no C compiler was found, so nothing was planned (install gcc or ember[compile])")
    got = compiled([x.numpy().copy()])
    # float32 sums of 512 tanh values (|h| <= 1): the compiled loops add in another order than
    # NumPy's pairwise sum, so the bound is absolute, 2e-7 of the largest possible sum
    close("the compiled chain's six sums", np.array(got), np.array([o.item() for o in _chain(x)]),
          rtol=1e-5, atol=1e-4, input=x)
    arrays = {line.split("p[")[1].split("]")[0] for line in compiled.c_source.splitlines() if "p[" in line}
    # Without reuse: the input, 6 loops, 6 row sums and 6 outputs = 19 arrays.
    if len(arrays) > 1 + 6 + 3:
        raise Mismatch(f"the compiled chain uses {len(arrays)} arrays; with dead buffers reused it needs "
                       f"at most 10 (the input, 6 outputs kept to the end, 3 recycled intermediates)")
