"""``checkpoint(use_reentrant=False)``: an output the segment detaches does not require grad
(torch's segment runs as eager would), while its other outputs still carry the gradient."""
import importlib

import numpy as np
import pytest

import ember
from torchcompare import assert_close, torch


class _Exp:  # a custom Function (made per library below): its output keeps its gradient
    @staticmethod
    def forward(ctx, a):
        out = a.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return g * ctx.saved_tensors[0]


_EXP = {m: type("Exp", (m.autograd.Function,), dict(vars(_Exp))) for m in (ember, torch)}


SEGMENTS = {
    "detached": lambda m, a, w: (a * 2).detach(),
    "pair": lambda m, a, w: (a * w, (a * 3).detach()),
    "argument-detached": lambda m, a, w: a.detach(),
    "data": lambda m, a, w: (a * 2).data,
    "op-on-detached": lambda m, a, w: (a * 2).detach() * 3,
    "closure": lambda m, a, w: (a * w).detach() + w,
    "indices": lambda m, a, w: (a.exp(), a.argmax()),
    "custom-function": lambda m, a, w: _EXP[m].apply(a) * w,
    "written-in-place": lambda m, a, w: (a * 2).detach().add_(a * w),
    "integer": lambda m, a, w: (a > 0).long(),
}


@pytest.mark.parametrize("case", list(SEGMENTS))
def test_checkpointed_outputs_require_grad_as_torchs(case):
    data = np.random.default_rng(1).standard_normal((2, 3))
    results = []
    for m in (ember, torch):
        checkpoint = importlib.import_module(m.__name__ + ".utils.checkpoint").checkpoint
        a, w = m.tensor(data, requires_grad=True), m.tensor(data[::-1].copy(), requires_grad=True)
        out = checkpoint(lambda a: SEGMENTS[case](m, a, w), a, use_reentrant=False)
        outs = out if isinstance(out, tuple) else (out,)
        live = [o for o in outs if o.requires_grad]
        if live:
            sum(o.sum() for o in live).backward()
        results.append(([o.requires_grad for o in outs], outs, a.grad, w.grad))
    (e_flags, e_outs, e_agrad, e_wgrad), (t_flags, t_outs, t_agrad, t_wgrad) = results
    assert e_flags == t_flags
    for e, t in zip(e_outs, t_outs):
        assert_close(e, t, rtol=1e-12, atol=1e-12)
    for e, t in ((e_agrad, t_agrad), (e_wgrad, t_wgrad)):
        assert (e is None) == (t is None)
        if e is not None:
            assert_close(e, t, rtol=1e-12, atol=1e-12)
