"""Module 16, pruning: L1 and random unstructured masks, against torch.nn.utils.prune on the
same weights (random: the count and that kept entries stay)."""
import numpy as np
import torch
import torch.nn.utils.prune as torch_prune

import ember
import ember.nn.utils.prune as prune

from . import check, close, same


@check("16/zero-top-k", points=3)
def zero_top_k():
    rng = np.random.default_rng(16)
    for shape, amount in (((4, 5), 0.3), ((6,), 2), ((3, 4), 0.0), ((2, 3), 1.0)):
        w = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32) - 3.3  # no ties in |w|
        ours, theirs = ember.nn.Linear(1, 1), torch.nn.Linear(1, 1)
        ours.weight, theirs.weight = ember.nn.Parameter(ember.tensor(w)), torch.nn.Parameter(torch.tensor(w))
        prune.l1_unstructured(ours, "weight", amount)
        torch_prune.l1_unstructured(theirs, "weight", amount)
        close(f"l1_unstructured(amount={amount}) mask", ours.weight_mask, theirs.weight_mask, input=w)
        if amount == 1.0:
            continue  # nothing left to prune again
        prune.l1_unstructured(ours, "weight", 1)  # composes with the mask in place
        torch_prune.l1_unstructured(theirs, "weight", 1)
        close(f"a second l1_unstructured(amount=1) after amount={amount}", ours.weight_mask,
              theirs.weight_mask, input=w)
    m = ember.nn.Linear(4, 5)
    prune.random_unstructured(m, "weight", 7)
    same("entries zeroed by random_unstructured(amount=7) of 20", int((m.weight_mask == 0).sum()), 7)
