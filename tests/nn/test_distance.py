"""nn.PairwiseDistance and nn.CosineSimilarity against torch: values, gradients, repr, broadcasting."""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, to_ember, to_torch


@pytest.mark.parametrize("name,kwargs,shapes", [
    ("PairwiseDistance", {}, ((5, 4), (5, 4))),
    ("PairwiseDistance", {"p": 1.0, "keepdim": True}, ((5, 4), (1, 4))),
    ("PairwiseDistance", {"p": 3.0, "eps": 0.0}, ((4,), (4,))),
    ("CosineSimilarity", {}, ((5, 4), (5, 4))),
    ("CosineSimilarity", {"dim": 0}, ((3, 6), (3, 1))),
    ("CosineSimilarity", {"dim": -1, "eps": 1e-3}, ((2, 3, 4), (2, 3, 4))),
])
def test_matches_torch(name, kwargs, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    outs = []
    for lib in (torch, ember):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        module = getattr(lib.nn, name)(**kwargs)
        out = module(*inputs)
        out.sum().backward()
        outs.append((module, out, [x.grad for x in inputs]))
    (tm, tout, tgrads), (em, eout, egrads) = outs
    assert repr(em) == repr(tm)
    assert_close(eout, tout)
    for e, t in zip(egrads, tgrads):
        assert_close(e, t)


def test_shapes_that_do_not_broadcast_name_the_sizes():
    with pytest.raises(RuntimeError, match="size of tensor a \\(4\\) must match the size of tensor b \\(3\\)"):
        ember.nn.PairwiseDistance()(ember.ones(2, 4), ember.ones(2, 3))
