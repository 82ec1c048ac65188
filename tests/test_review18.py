"""Review of session 17's additions against torch 2.13 (review18): each case failed before its fix."""
import numpy as np
import pytest
import torch

import ember


def test_from_dlpack_of_an_ember_tensor_is_a_new_tensor_as_torch():
    base = ember.arange(24.).reshape(4, 6)[:, 1::2]
    tbase = torch.arange(24.).reshape(4, 6)[:, 1::2]
    e, t = ember.from_dlpack(base), torch.from_dlpack(tbase)
    assert e is not base
    assert (e.storage_offset(), e.stride(), e.shape) == (t.storage_offset(), t.stride(), tuple(t.shape))
    e[0, 0] = 100.
    assert base[0, 0].item() == 100.
    with pytest.raises(BufferError, match="require gradient"):
        torch.from_dlpack(torch.ones(2, requires_grad=True))
    with pytest.raises(BufferError, match="require gradient"):
        ember.from_dlpack(ember.ones(2, requires_grad=True))


@pytest.mark.parametrize("make", [lambda m: 5, lambda m: [1, 2]])
def test_from_dlpack_of_no_capsule_raises_runtime_error(make):
    with pytest.raises(RuntimeError, match="invalid capsule"):
        torch.from_dlpack(make(torch))
    with pytest.raises(RuntimeError, match="invalid capsule"):
        ember.from_dlpack(make(ember))


def test_from_dlpack_of_a_consumed_capsule_raises_runtime_error():
    for m in (torch, ember):
        capsule = m.utils.dlpack.to_dlpack(m.ones(2))
        m.from_dlpack(capsule)
        with pytest.raises(RuntimeError, match="consumed only once"):
            m.from_dlpack(capsule)
