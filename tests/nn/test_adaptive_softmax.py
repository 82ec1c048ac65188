"""nn.AdaptiveLogSoftmaxWithLoss against torch 2.13 with the same state_dict: forward's
(output, loss), gradients of input and every weight, log_prob, predict, the module's structure
and repr, and the errors torch raises."""
import warnings

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, assert_same_error, to_ember


def pair(in_features=8, n_classes=11, cutoffs=(3, 7), **kwargs):
    torch.manual_seed(0)
    with warnings.catch_warnings():  # a zero-width tail projection: torch's and ember's init warn alike
        warnings.simplefilter("ignore")
        t = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs), **kwargs).double()
        e = ember.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs), **kwargs).double()
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    return t, e


@pytest.mark.parametrize("kwargs, target", [
    ({}, [0, 5, 10, 2, 7, 7, 3, 1]),  # every part: shortlist, both clusters
    ({"head_bias": True, "div_value": 2.0}, [1, 1, 2, 0]),  # the shortlist only
    ({"cutoffs": (2,), "n_classes": 6}, [5, 4, 3]),  # one cluster only
    ({}, [9]),  # a batch of one
    ({}, []),  # an empty batch: loss nan
])
def test_forward_and_gradients(kwargs, target):
    t, e = pair(**kwargs)
    x = np.random.default_rng(1).standard_normal((len(target), 8))
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tt, et = torch.tensor(target, dtype=torch.long), ember.tensor(target, dtype=ember.long)
    tout, eout = t(tx, tt), e(ex, et)
    assert type(eout).__name__ == "_ASMoutput" and eout._fields == ("output", "loss")
    assert type(eout.output.grad_fn).__name__ == type(tout.output.grad_fn).__name__
    assert_close(eout.output, tout.output, rtol=1e-12, atol=1e-12)
    assert_close(eout.loss, tout.loss, rtol=1e-12, atol=1e-12)
    if not target:
        return
    (tout.loss + tout.output[0]).backward()
    (eout.loss + eout.output[0]).backward()
    assert_close(ex.grad, tx.grad, rtol=1e-10, atol=1e-12)
    tparams = dict(t.named_parameters())
    for name, p in e.named_parameters():  # an unused cluster's weights: no gradient, as torch
        if tparams[name].grad is None:
            assert p.grad is None, name
        else:
            assert_close(p.grad, tparams[name].grad, rtol=1e-10, atol=1e-12)


def test_unbatched_log_prob_predict_and_structure():
    t, e = pair()
    x = np.random.default_rng(2).standard_normal((40, 8)) * 3
    tx, ex = torch.tensor(x), ember.tensor(x)
    tout, eout = t(tx[0], torch.tensor(8)), e(ex[0], ember.tensor(8))
    assert tuple(eout.output.shape) == () and abs(eout.output.item() - tout.output.item()) < 1e-12
    assert_close(e.log_prob(ex), t.log_prob(tx), rtol=1e-12, atol=1e-12)
    assert_close(e.predict(ex), t.predict(tx))
    assert len(set(t.predict(tx).tolist())) > 3  # rows predicted from the shortlist and from clusters
    assert repr(e) == repr(t)
    for name in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "div_value", "head_bias"):
        assert getattr(e, name) == getattr(t, name)


@pytest.mark.parametrize("cutoffs", [[], [7, 3], [0, 3], [3, 11], [3, 3], [2.5]])
def test_bad_cutoffs(cutoffs):
    assert_same_error(lambda: ember.nn.AdaptiveLogSoftmaxWithLoss(8, 11, cutoffs),
                      lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(8, 11, cutoffs))


@pytest.mark.parametrize("shape, target", [
    ((3, 8), [0, 11, 2]), ((3, 8), [-1, 4, 2]), ((3, 8), [0, 1]), ((3, 2, 8), [0, 1, 2]),
    ((3, 8), [[0, 1, 2]]), ((8,), [[1]]), ((2, 8), 3),
])
def test_forward_errors(shape, target):
    t, e = pair()
    x = np.zeros(shape)
    assert_same_error(lambda: e(ember.tensor(x), ember.tensor(target)),
                      lambda: t(torch.tensor(x), torch.tensor(target)))
