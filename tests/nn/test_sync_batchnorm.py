"""nn.SyncBatchNorm in one process (no process group: it is BatchNorm) against torch 2.13's,
its synchronised formula with a one-rank reduction against F.batch_norm, and
convert_sync_batchnorm. The 2-rank MPI check is tests/distributed/test_sync_batchnorm.py."""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, assert_same_error
from ember.nn.functional.norm import _sync_batch_norm


def _pair(shape, dtype="float32", seed=0):
    x = np.random.default_rng(seed).standard_normal(shape) * 3 + 1
    return (ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True),
            torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True))


@pytest.mark.parametrize("shape, kwargs", [
    ((6, 4), {}), ((3, 4, 5), {"momentum": None}), ((2, 4, 3, 5), {"affine": False}),
    ((2, 4, 2, 3, 3), {"track_running_stats": False}), ((2, 4, 3, 5), {"bias": False, "eps": 1e-3}),
])
def test_values_gradients_running_stats_as_torchs(shape, kwargs):
    ex, tx = _pair(shape)
    e, t = ember.nn.SyncBatchNorm(4, **kwargs), torch.nn.SyncBatchNorm(4, **kwargs)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    g = np.random.default_rng(1).standard_normal(shape)
    for step in range(2):  # two steps: the running statistics move twice (momentum None: 1/k)
        ey, ty = e(ex), t(tx)
        assert_close(ey, ty, rtol=1e-5, atol=1e-5)
        assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
        ey.backward(ember.tensor(g, dtype=ember.float32))
        ty.backward(torch.tensor(g, dtype=torch.float32))
    assert_close(ex.grad, tx.grad, rtol=1e-4, atol=1e-4)
    for p, q in zip(e.parameters(), t.parameters()):
        assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)
    for b, c in zip(e.buffers(), t.buffers()):
        assert_close(b, c, rtol=1e-5, atol=1e-6)
    e.eval(), t.eval()
    assert_close(e(ex), t(tx), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(3,), (2, 0, 4), (1, 4)])
def test_errors_as_torchs(shape):
    e, t = ember.nn.SyncBatchNorm(shape[1] if len(shape) > 1 else 4), torch.nn.SyncBatchNorm(shape[1] if len(shape) > 1 else 4)
    assert_same_error(lambda: e(ember.zeros(shape)), lambda: t(torch.zeros(shape)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_synchronised_formula_on_one_rank_is_batch_norm(dtype):
    """The two-reduction form (sum and count, then squared deviations) that ranks share, with a
    reduction over one rank: values, running statistics, first and second derivatives as
    F.batch_norm's; its node is torch's SyncBatchNormBackward."""
    x, _ = _pair((5, 3, 4, 2), dtype, seed=2)
    w, b = (ember.tensor(np.random.default_rng(s).standard_normal(3), dtype=x.dtype, requires_grad=True)
            for s in (3, 4))
    means, variances = (ember.zeros(3, dtype=x.dtype), ember.zeros(3, dtype=x.dtype)), \
        (ember.ones(3, dtype=x.dtype), ember.ones(3, dtype=x.dtype))
    reduced = []
    y = _sync_batch_norm(x, means[0], variances[0], w, b, 0.3, 1e-5, lambda t: reduced.append(t.shape) or t)
    z = ember.nn.functional.batch_norm(x, means[1], variances[1], w, b, True, 0.3, 1e-5)
    assert reduced == [(4,), (3,)] and type(y.grad_fn).__name__ == "SyncBatchNormBackward"
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, c in ((y, z), means, variances):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=tol, atol=tol)
    g = ember.tensor(np.random.default_rng(5).standard_normal(x.shape), dtype=x.dtype)
    first = [ember.autograd.grad((out * g).sum(), (x, w, b), create_graph=True) for out in (y, z)]
    for a, c in zip(*first):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=50 * tol, atol=50 * tol)
    second = [ember.autograd.grad((gx ** 2).sum(), (x, w)) for gx, _, _ in first]
    for a, c in zip(*second):
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=500 * tol, atol=500 * tol)


def test_convert_sync_batchnorm_replaces_every_batch_norm_keeping_tensors_and_mode():
    def build(nn):
        torch.manual_seed(0)
        inner = nn.Sequential(nn.BatchNorm1d(3, affine=False, momentum=None), nn.ReLU())
        return nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2).eval(), inner,
                             nn.BatchNorm3d(5, bias=False), nn.SyncBatchNorm(2), nn.InstanceNorm2d(2))
    e, t = build(ember.nn), build(torch.nn)
    e[1].running_mean.fill_(2.0)
    originals = list(e.modules())
    ce, ct = ember.nn.SyncBatchNorm.convert_sync_batchnorm(e, "group"), torch.nn.SyncBatchNorm.convert_sync_batchnorm(t)
    assert repr(ce) == repr(ct)
    assert [type(m).__name__ for m in ce.modules()] == [type(m).__name__ for m in ct.modules()]
    assert [m.training for m in ce.modules()] == [m.training for m in ct.modules()] != [True] * 9
    assert ce[0] is originals[1] and ce[1] is not originals[2] and ce[1].process_group == "group"
    assert ce[1].weight is originals[2].weight and ce[1].running_mean is originals[2].running_mean
    assert ce[1].num_batches_tracked is originals[2].num_batches_tracked
    assert ce[3].bias is None and ce[2][0].weight is None and ce[2][0].momentum is None
    assert list(ce.state_dict()) == list(ct.state_dict())
    single = ember.nn.SyncBatchNorm.convert_sync_batchnorm(ember.nn.BatchNorm1d(4))
    assert type(single) is ember.nn.SyncBatchNorm
