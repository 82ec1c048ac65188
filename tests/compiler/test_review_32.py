"""Adversarial checks of session 32's changes against torch 2.13 (issue 10, REVIEW32): what the
review found wrong, each fixed where it was made."""
from graph_counts import graph_counts

import torch

import ember


def _two_slices_of_one_float(x, lr):
    return x[int(lr):] + x[:int(lr * 2)].sum()


def test_two_ints_of_one_float_as_slice_bounds():
    """Two ints Python makes of ``lr`` (``int(lr)``, ``int(lr * 2)``) read as slice bounds: at the
    third call they became derived ints while the float recording had swapped the function's code
    (``float_constants``), and ``put_cells`` looked them up under the swapped code: an IndexError
    of ember's own (was: ``tuple index out of range`` at ``lr = 3.0``). torch's values."""
    lrs = [(v,) for v in (1.4, 2.6, 3.0, -1.6)]
    _, want = graph_counts(_two_slices_of_one_float, torch, lrs)
    _, got = graph_counts(_two_slices_of_one_float, ember, lrs)
    assert repr(got) == repr(want)
