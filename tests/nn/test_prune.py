"""nn.utils.prune against torch.nn.utils.prune: same masks (deterministic methods) on the same
weights, same state_dict keys, same composition and removal; random methods by counts and
statistics; errors of PyTorch's classes."""
import math

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import prune
from torchcompare import assert_close, to_torch, torch

tprune = pytest.importorskip("torch.nn.utils.prune")


def pair(make_ember, make_torch):
    """An ember module and a torch module holding the same parameter values."""
    e = make_ember()
    t = make_torch()
    with torch.no_grad():
        for (name, p), (tname, tp) in zip(e.named_parameters(), t.named_parameters()):
            assert name == tname
            tp.copy_(to_torch(p.detach()))
    return e, t


def linears(i=6, o=5):
    return pair(lambda: nn.Linear(i, o), lambda: torch.nn.Linear(i, o))


def convs():
    return pair(lambda: nn.Conv2d(3, 4, 3), lambda: torch.nn.Conv2d(3, 4, 3))


def assert_same_pruning(e, t, name="weight"):
    assert list(e.state_dict()) == list(t.state_dict())
    assert_close(getattr(e, name + "_mask"), getattr(t, name + "_mask"))
    assert_close(getattr(e, name).detach(), getattr(t, name).detach())


@pytest.mark.parametrize("amount", [0, 7, 0.3, 0.5, 1.0, 30])
def test_l1_unstructured_matches_torch(amount):
    e, t = linears()
    prune.l1_unstructured(e, "weight", amount=amount)
    tprune.l1_unstructured(t, "weight", amount=amount)
    assert_same_pruning(e, t)
    assert isinstance(e.weight_orig, nn.Parameter) and not isinstance(e.weight, nn.Parameter)
    assert [n for n, _ in e.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in e.named_buffers()] == ["weight_mask"]


def test_l1_importance_scores_and_hook_recomputes_weight():
    e, t = linears()
    scores = ember.randn(5, 6)
    prune.l1_unstructured(e, "weight", amount=0.4, importance_scores=scores)
    tprune.l1_unstructured(t, "weight", amount=0.4, importance_scores=to_torch(scores))
    assert_same_pruning(e, t)
    with ember.no_grad():
        e.weight_orig.fill_(2.0)
    x = ember.randn(3, 6)
    e(x)  # the forward pre-hook refreshes the masked weight
    assert_close(e.weight.detach(), to_torch(e.weight_mask) * 2.0)


@pytest.mark.parametrize("n,dim", [(1, 0), (2, 1), (float("inf"), -1), (3, 0), (-math.inf, 1)])
def test_ln_structured_matches_torch(n, dim):
    e, t = convs()
    prune.ln_structured(e, "weight", amount=0.5, n=n, dim=dim)
    tprune.ln_structured(t, "weight", amount=0.5, n=n, dim=dim)
    assert_same_pruning(e, t)


def test_repeated_pruning_composes_like_torch_pruning_container():
    e, t = convs()
    for mod, p in ((e, prune), (t, tprune)):
        p.l1_unstructured(mod, "weight", amount=0.2)
        p.ln_structured(mod, "weight", amount=1, n=2, dim=0)
        p.l1_unstructured(mod, "weight", amount=10, importance_scores=None)
        p.ln_structured(mod, "weight", amount=0.34, n=1, dim=1)
    assert_same_pruning(e, t)
    hooks = list(e._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 4
    assert [type(m).__name__ for m in hooks[0]] == ["L1Unstructured", "LnStructured", "L1Unstructured",
                                                   "LnStructured"]
    # the second L1 pass pruned 10 more of the entries the first two passes had kept
    assert int((e.weight_mask == 0).sum()) == int((t.weight_mask == 0).sum())


@pytest.mark.parametrize("amount", [0.5, 37])
def test_global_unstructured_matches_torch(amount):
    e = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 4))
    t = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(), torch.nn.Linear(6, 4))
    t.load_state_dict({k: to_torch(v) for k, v in e.state_dict().items()})
    prune.l1_unstructured(e[2], "weight", amount=3)
    tprune.l1_unstructured(t[2], "weight", amount=3)
    scores = {(e[0], "weight"): ember.randn(6, 8)}
    tscores = {(t[0], "weight"): to_torch(scores[(e[0], "weight")])}
    prune.global_unstructured([(e[0], "weight"), (e[2], "weight"), (e[2], "bias")],
                              pruning_method=prune.L1Unstructured, importance_scores=scores, amount=amount)
    tprune.global_unstructured([(t[0], "weight"), (t[2], "weight"), (t[2], "bias")],
                               pruning_method=tprune.L1Unstructured, importance_scores=tscores, amount=amount)
    assert list(e.state_dict()) == list(t.state_dict())
    for k, v in e.state_dict().items():
        assert_close(v, t.state_dict()[k])
    for i in (0, 2):
        prune.remove(e[i], "weight")
        tprune.remove(t[i], "weight")
    prune.remove(e[2], "bias")
    tprune.remove(t[2], "bias")
    assert list(e.state_dict()) == list(t.state_dict())
    for k, v in e.state_dict().items():
        assert_close(v, t.state_dict()[k])
    assert not prune.is_pruned(e)


def test_remove_makes_pruning_permanent_and_gradients_reach_only_kept_entries():
    e, t = linears()
    prune.l1_unstructured(e, "weight", amount=0.5)
    tprune.l1_unstructured(t, "weight", amount=0.5)
    assert prune.is_pruned(nn.Sequential(e))
    x = ember.randn(4, 6)
    e(x).sum().backward()
    t(to_torch(x)).sum().backward()
    assert_close(e.weight_orig.grad, t.weight_orig.grad)
    assert float((e.weight_orig.grad * (1 - e.weight_mask)).abs().sum()) == 0.0
    prune.remove(e, "weight")
    tprune.remove(t, "weight")
    assert isinstance(e.weight, nn.Parameter) and e.weight.requires_grad
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert_close(e.weight.detach(), t.weight.detach())
    assert not e._forward_pre_hooks and not prune.is_pruned(e)


def test_random_unstructured_counts_and_uniformity():
    ember.manual_seed(0)
    hits = np.zeros((10, 10))
    trials = 200
    method, weight, ones = prune.RandomUnstructured(amount=0.3), ember.randn(10, 10), ember.ones(10, 10)
    for _ in range(trials):
        mask = method.compute_mask(weight, default_mask=ones).numpy()
        assert (mask == 0).sum() == 30
        hits += mask == 0
    # each entry is pruned with probability 0.3: 200 trials give mean 60, sd ~6.5
    assert abs(hits.mean() - 60) < 1e-9
    assert np.abs(hits - 60).max() < 6 * math.sqrt(trials * 0.3 * 0.7)
    m = nn.Linear(10, 10)
    prune.random_unstructured(m, "weight", amount=50)
    assert int((m.weight_mask == 0).sum()) == 50 and int((m.weight == 0).sum()) == 50
    before = m.weight_mask.numpy().copy()
    prune.random_unstructured(m, "weight", amount=0.2)  # 20% of the 50 still kept, by count
    after = m.weight_mask.numpy()
    assert (after[before == 0] == 0).all() and (after == 0).sum() == 60


def test_random_structured_prunes_whole_channels():
    ember.manual_seed(1)
    counts = np.zeros(4)
    method, weight, ones = prune.RandomStructured(amount=0.5, dim=0), ember.randn(4, 3, 2), ember.ones(4, 3, 2)
    for _ in range(200):
        per_channel = method.compute_mask(weight, default_mask=ones).numpy().reshape(4, -1)
        assert ((per_channel == 0).all(1) | (per_channel == 1).all(1)).all()
        assert (per_channel == 0).all(1).sum() == 2
        counts += (per_channel == 0).all(1)
    assert np.abs(counts - 100).max() < 6 * math.sqrt(200 * 0.25)
    m = nn.Conv2d(3, 4, 3)
    prune.random_structured(m, "weight", amount=1, dim=1)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert (m.weight_mask.numpy().reshape(4, 3, -1).sum(axis=(0, 2)) == 0).sum() == 1


def test_identity_and_custom_from_mask_match_torch():
    e, t = linears(3, 2)
    prune.identity(e, "bias")
    tprune.identity(t, "bias")
    assert_same_pruning(e, t, "bias")
    mask = ember.tensor([[1.0, 0, 1], [0, 0, 1]])
    prune.custom_from_mask(e, "weight", mask)
    tprune.custom_from_mask(t, "weight", to_torch(mask))
    prune.custom_from_mask(e, "weight", ember.tensor([[0.0, 1, 1], [1, 1, 1]]))
    tprune.custom_from_mask(t, "weight", torch.tensor([[0.0, 1, 1], [1, 1, 1]]))
    assert_same_pruning(e, t)
    assert_close(e.weight_mask, torch.tensor([[0.0, 0, 1], [0, 0, 1]]))


def test_state_dict_round_trip_of_a_pruned_model(tmp_path):
    e = nn.Sequential(nn.Linear(4, 3))
    prune.l1_unstructured(e[0], "weight", amount=0.5)
    ember.save(e.state_dict(), tmp_path / "pruned.pt")
    f = nn.Sequential(nn.Linear(4, 3))
    prune.identity(f[0], "weight")
    f.load_state_dict(ember.load(tmp_path / "pruned.pt"))
    f(ember.zeros(1, 4))
    assert_close(f[0].weight.detach(), to_torch(e[0].weight.detach()))


@pytest.mark.parametrize("amount,error", [(-1, ValueError), (1.5, ValueError), (-0.1, ValueError),
                                          ("half", TypeError), (31, ValueError)])
def test_bad_amount_raises_like_torch_and_leaves_module_unchanged(amount, error):
    e, t = linears()
    with pytest.raises(error):
        tprune.l1_unstructured(t, "weight", amount=amount)
    with pytest.raises(error, match="amount"):
        prune.l1_unstructured(e, "weight", amount=amount)
    assert list(e.state_dict()) == list(t.state_dict()) and isinstance(e.weight, nn.Parameter)
    assert not e._forward_pre_hooks


def test_other_errors():
    e, _ = linears()
    with pytest.raises(ValueError, match="has to be pruned"):
        prune.remove(e, "weight")
    with pytest.raises(ValueError, match="multidimensional"):
        prune.ln_structured(e, "bias", amount=1, n=2, dim=0)
    with pytest.raises(AssertionError, match="same shape"):
        prune.l1_unstructured(e, "weight", amount=1, importance_scores=ember.ones(6, 5))
    with pytest.raises(TypeError, match="unstructured"):
        prune.global_unstructured([(e, "weight")], pruning_method=prune.RandomStructured, amount=1)
    with pytest.raises(TypeError, match="Iterable"):
        prune.global_unstructured(3, pruning_method=prune.L1Unstructured, amount=1)
    with pytest.raises(TypeError, match="dict"):
        prune.global_unstructured([(e, "weight")], prune.L1Unstructured, importance_scores=[], amount=1)
    container = prune.PruningContainer()
    with pytest.raises(TypeError, match="BasePruningMethod"):
        container.add_pruning_method(object())
    assert list(e.state_dict()) == ["weight", "bias"]


def test_prune_on_the_function_outputs_masked_tensor():
    t = ember.tensor([[0.1, -3.0], [2.0, 0.5]])
    assert_close(prune.L1Unstructured(amount=2).prune(t), torch.tensor([[0.0, -3.0], [2.0, 0.0]]))


def test_docstring_example_runs():
    import doctest
    result = doctest.testmod(prune)
    assert result.attempted > 0 and result.failed == 0
