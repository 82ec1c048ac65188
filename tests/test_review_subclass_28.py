"""Programs that define no Tensor subclass of their own but run after one turned
``__torch_function__`` overrides on (process-wide), against torch 2.13: Tensor methods still
pickle (``pickle.dumps(torch.Tensor.view)``), and the seeding functions torch never hands to
``__torch_function__`` stay the one object of ``torch.random`` (``torch.manual_seed is
torch.random.manual_seed``)."""
import pickle

import pytest
import torch
import torch.overrides
from torchcompare import overriding_subclass

import ember
import ember.random


@pytest.mark.parametrize("name", ["view", "item", "reshape", "__getitem__"])
def test_tensor_methods_pickle_after_a_subclass(name):
    overriding_subclass(torch), overriding_subclass(ember)
    assert pickle.loads(pickle.dumps(getattr(torch.Tensor, name))) is getattr(torch.Tensor, name)
    method = pickle.loads(pickle.dumps(getattr(ember.Tensor, name)))
    assert method is getattr(ember.Tensor, name)
    x, t = ember.arange(6.0), torch.arange(6.0)
    args = {"view": (2, 3), "item": (), "reshape": (3, 2), "__getitem__": (1,)}[name]
    got, want = method(x[:1] if name == "item" else x, *args), getattr(torch.Tensor, name)(
        t[:1] if name == "item" else t, *args)
    assert (got.tolist() if isinstance(got, ember.Tensor) else got) == \
        (want.tolist() if isinstance(want, torch.Tensor) else want)


def test_seeding_functions_stay_torch_random_s_after_a_subclass():
    overriding_subclass(torch), overriding_subclass(ember)
    # (torch's own identity is no check: importing torch._dynamo rebinds torch.manual_seed)
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"):
        assert getattr(torch, name) not in torch.overrides.get_overridable_functions().get(torch, [])
        assert getattr(ember, name) is getattr(ember.random, name), name
    ember.manual_seed(5)
    assert ember.random.initial_seed() == 5
