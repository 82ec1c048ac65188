"""The C a training step compiles to, made cheaper for the C compiler: each optimizer update is a
loop of its own (backends/plan.py, updates.joins_updates), and loops alike but for their lengths
share one copy of their code (backends/shared.py), compiled once and never cloned per length.
Checked on the text and against torch's AdamW."""
import re

import numpy as np
import pytest
import torch

import ember
from ember.compiler.backends import shared, toolchain

LOOP = """/* loop over [{n}]: Neg(neg_{i}) */
static EM_NO_CONTRACT void k{i}(void** restrict p, long r0, long r1) {{
    for (long i0 = r0; i0 < r1; i0++) ((float*)p[{b}])[i0] = -((float*)p[{a}])[i0];
}}
int kernel_{i}(void** restrict p) {{
    k{i}(p, 0, {n});
    return 0;
}}
"""


def test_loops_alike_but_for_their_lengths_share_one_copy_that_is_never_cloned():
    """Two loops of different lengths share (their trip counts are arguments), marked noclone so
    that GCC's constant propagation does not make a copy per length again; twins of one length
    keep their constants (noinline only)."""
    merged, = shared.share([LOOP.format(i=0, n=128, a=3, b=5), LOOP.format(i=1, n=512, a=7, b=2)])
    assert merged.count("void kd0(") == 1 and "__attribute__((noinline, noclone))" in merged
    assert "k0(p, 0, 128);" in merged and "k1(p, 0, 512);" in merged
    same, = shared.share([LOOP.format(i=0, n=128, a=3, b=5), LOOP.format(i=1, n=128, a=7, b=2)])
    assert "__attribute__((noinline)) void kd0(" in same and "noclone" not in same


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(6, 10), lib.nn.LayerNorm(10), lib.nn.GELU(), lib.nn.Linear(10, 3))


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_adamw_updates_are_a_loop_each_sharing_one_code_and_match_torch(c_builds):
    """A step with AdamW over parameters of four sizes ([10, 6], [10], [3, 10], [3]): each update
    is a loop of its own, the update loops are one shared code, and three compiled steps give
    torch's parameters."""
    model, reference = _model(ember), _model(torch)
    reference.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((5, 6)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    optimizers = [ember.optim.AdamW(model.parameters(), lr=0.05), torch.optim.AdamW(reference.parameters(), lr=0.05)]

    def step(lib, net, opt, x, y):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    compiled = ember.compile(lambda: step(ember, model, optimizers[0], ember.tensor(x), ember.tensor(y)), fullgraph=True)
    for _ in range(3):
        compiled()
        step(torch, reference, optimizers[1], torch.tensor(x), torch.tensor(y))
    source = "".join(f.c_source for f in c_builds if hasattr(f, "c_source"))
    loops = re.findall(r"^/\* loop over \[\d[^\]]*\]: (.*AdamUpdate.*) \*/$", source, re.M)
    assert len(loops) == 6 and all(line.count("AdamUpdate[0]") == 1 for line in loops)
    assert re.search(r"share this code.*\n(static )?EM_NO_CONTRACT __attribute__\(\(noinline, noclone\)\)", source)
    for name, value in model.state_dict().items():
        np.testing.assert_allclose(value.numpy(), reference.state_dict()[name].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
