"""bfloat16 across DLPack, both ways, sharing memory as torch's (NumPy has no bfloat16, so its
DLPack moves the bits as uint16 and ember relabels them)."""
import pytest
import torch

import ember


@pytest.mark.parametrize("view", [lambda x: x, lambda x: x.t(), lambda x: x[:, ::2], lambda x: x[1:]],
                         ids=["whole", "transposed", "stepped", "offset"])
def test_a_torch_bfloat16_tensor_is_shared_with_its_strides(view):
    source = view(torch.tensor([[1.5, 2.25, -3.0], [0.1, 65280.0, -0.0]], dtype=torch.bfloat16))
    for got in (ember.from_dlpack(source), ember.from_dlpack(torch.utils.dlpack.to_dlpack(source))):
        assert got.dtype is ember.bfloat16 and got.shape == source.shape and got.stride() == source.stride()
        assert got.float().tolist() == source.float().tolist()
    written = ember.from_dlpack(source)
    written[(0,) * source.dim()] = 11.0
    assert source[(0,) * source.dim()].item() == 11.0


def test_an_ember_bfloat16_tensor_is_shared_with_torch():
    e = ember.tensor([[1.5, 2.0], [3.0, -4.0]], dtype=ember.bfloat16)
    t = torch.from_dlpack(e.t())
    assert t.dtype == torch.bfloat16 and t.stride() == (1, 2) and t.tolist() == [[1.5, 3.0], [2.0, -4.0]]
    t[0, 1] = 9.0
    assert e[1, 0].item() == 9.0
    again = torch.from_dlpack(ember.utils.dlpack.to_dlpack(e))
    assert again.tolist() == [[1.5, 2.0], [9.0, -4.0]]
    assert ember.from_dlpack(e).dtype is ember.bfloat16


def test_a_consumed_bfloat16_capsule_raises_torchs_error():
    capsule = torch.utils.dlpack.to_dlpack(torch.ones(2, dtype=torch.bfloat16))
    ember.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="consumed only once"):
        ember.from_dlpack(capsule)
