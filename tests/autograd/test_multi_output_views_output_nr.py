"""``output_nr`` of the views ``unbind``, ``split``, ``chunk`` return: torch counts them 0..n-1
(the outputs of one node); ``tensor_split``'s pieces are slices (SliceBackward0, each 0) that
may be written in place, as torch's."""
import pytest

import ember
from torchcompare import assert_close, to_torch, torch

SPLITS = {
    "unbind": lambda x: x.unbind(0), "unbind-1": lambda x: ember.unbind(x, 1) if isinstance(x, ember.Tensor)
    else torch.unbind(x, 1),
    "split": lambda x: x.split(2), "split-sizes": lambda x: x.split([1, 3], 0), "chunk": lambda x: x.chunk(3, 1),
    "tensor_split-sections": lambda x: x.tensor_split(3, 1), "tensor_split-indices": lambda x: x.tensor_split([1, 3]),
    "hsplit": lambda x: x.hsplit(2), "of-a-non-leaf": lambda x: (x * 2).split(2),
}


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("case", list(SPLITS))
def test_output_nr_and_node_names_are_torchs(case, requires_grad):
    x = ember.randn(4, 6)
    e = SPLITS[case](x.detach().requires_grad_(requires_grad))
    t = SPLITS[case](to_torch(x, requires_grad))
    assert [p.output_nr for p in e] == [p.output_nr for p in t]
    assert [type(p.grad_fn).__name__ for p in e] == [type(p.grad_fn).__name__ for p in t]


def test_tensor_split_sections_may_be_written_in_place_as_torchs():
    x = ember.randn(4, 6)
    results = []
    for module, leaf in ((ember, x.detach().requires_grad_(True)), (torch, to_torch(x, True))):
        pieces = (leaf * 1).tensor_split(3, 1)
        pieces[1].mul_(3)
        (pieces[0].sum() + pieces[1].sum()).backward()
        results.append(leaf.grad)
    assert_close(*results)
