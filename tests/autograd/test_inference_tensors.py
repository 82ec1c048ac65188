"""Inference tensors against torch 2.13: what ``inference_mode`` marks (``is_inference()``: the
tensors made inside and views of them, not views of other tensors), and what torch refuses of
them outside the mode (in-place writes, after the write as torch's check; ``requires_grad_``;
``_version``)."""
import numpy as np
import torch
from test_storage import outcome

import ember


def _marks(L):
    out = []
    x = L.arange(6.)
    with L.inference_mode():
        a = L.ones(2)
        out.append([a.is_inference(), a[0:1].is_inference(), (a + 1).is_inference(), x.is_inference(),
                    (x + 1).is_inference(), x.clone().is_inference(), x[1:].is_inference(), x.detach().is_inference(),
                    a.detach().is_inference(), L.is_inference_mode_enabled()])
        x.add_(1)  # a normal tensor written inside the mode stays normal
        a.add_(1)
        out.append([x.is_inference(), x._version, outcome(lambda: a._version)])
        with L.inference_mode(False):
            out.append([L.ones(1).is_inference(), (a + 1).is_inference(), L.is_inference_mode_enabled()])
        with L.no_grad():
            out.append(L.ones(1).is_inference())
        out.append([L.empty(2).is_inference(), L.from_numpy(np.zeros(2)).is_inference(),
                    L.tensor([1.0]).is_inference(), L.arange(3).is_inference(), L.randn(2).is_inference()])
        q = L.ones(2, requires_grad=True)
        p = L.nn.Parameter(L.ones(2))
        out.append([q.requires_grad, q.is_inference(), p.is_inference(), p.requires_grad,
                    L.nn.Linear(2, 2)(a).is_inference(), (L.ones(2, requires_grad=True) * 2).requires_grad])
    out.append([L.ones(1).is_inference(), L.is_inference(a), L.is_inference(x), (a + 1).is_inference(),
                a.view(2).is_inference(), a.clone().is_inference(), L.is_inference_mode_enabled()])

    @L.inference_mode()
    def doubled(t):
        return t * 2
    out.append([doubled(x).is_inference(), L.ones(1).is_inference()])
    return out


def test_inference_mode_marks_tensors_as_torch():
    assert _marks(ember) == _marks(torch)


def _refusals(L):
    out = []
    with L.inference_mode():
        made = [L.ones(2) for _ in range(9)]
    a, b, c, d, e, f, g, h, k = made
    out.append((outcome(lambda: a.add_(1)), a.tolist()))  # torch writes, then refuses
    out.append((outcome(lambda: b[0:1].mul_(3)), b.tolist()))
    out.append(outcome(lambda: c.zero_()))
    out.append(outcome(lambda: d.__setitem__(0, 5.0)))
    out.append(outcome(lambda: e.copy_(L.zeros(2))))
    with L.no_grad():
        out.append(outcome(lambda: f.add_(1)))
    out.append(outcome(lambda: L.add(L.zeros(2), 1, out=g)))
    out.append(outcome(lambda: h.resize_(3)))
    out.append(outcome(lambda: k.set_(L.zeros(3))))
    out.append([outcome(lambda: a.requires_grad_()), outcome(lambda: a.requires_grad_(False)) is a,
                a.clone().requires_grad_().is_inference(), outcome(lambda: a._version)])
    out.append(outcome(lambda: L.nn.Parameter(a)))
    w = L.ones(2, requires_grad=True)
    out.append(((w + a).sum().backward(), w.grad.tolist()))  # an add saves nothing
    with L.inference_mode():
        out.append([a.add_(1).tolist(), a.is_inference()])  # inside the mode, writes are fine
    return out


def test_inference_tensors_refuse_writes_outside_the_mode_as_torch():
    assert _refusals(ember) == _refusals(torch)
