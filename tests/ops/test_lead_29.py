"""Session 29 (LEAD): ``x.T``'s deprecation warnings, once per process as torch's
``TORCH_WARN_ONCE`` (3-d and 0-d tensors; 1-d and 2-d none), and ``mT`` of a 0-d tensor."""
import warnings

import pytest
import torch

import ember
from ember._ops.args import WARNED_ONCE

_REVERSE = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
            "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
            "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
_IDENTITY = "Tensor.{} is deprecated on 0-D tensors. This function is the identity in these cases."


def _warnings(lib, shape, prop):
    """The UserWarning texts of reading ``prop`` twice from ``lib.ones(shape)``."""
    x = lib.ones(shape)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first, second = getattr(x, prop), getattr(x, prop)
    assert first.shape == second.shape == tuple(reversed(shape))
    return [str(w.message).split(" (Triggered internally")[0] for w in seen if w.category is UserWarning]


@pytest.mark.parametrize("shape, prop, expected", [
    ((2, 3, 4), "T", [_REVERSE]), ((2, 3, 4, 5), "T", [_REVERSE]), ((), "T", [_IDENTITY.format("T")]),
    ((), "mT", [_IDENTITY.format("mT")]), ((3,), "T", []), ((2, 3), "T", [])])
def test_transpose_properties_warn_as_torch_once(shape, prop, expected):
    # torch warns once per process: its texts are checked where this process had not seen them yet
    from_torch = _warnings(torch, shape, prop)
    assert from_torch in ([], expected)
    WARNED_ONCE.clear()
    assert _warnings(ember, shape, prop) == expected
    assert _warnings(ember, shape, prop) == []


_SAVED = ("_saved_dim", "_saved_split_size", "_saved_split_sizes", "_saved_self_sym_sizes")


@pytest.mark.parametrize("view", [lambda x: x.split(2)[0], lambda x: x.split([2, 4])[1], lambda x: x.unbind(1)[0],
                                  lambda x: x.chunk(3)[2], lambda x: x.split(4)[1], lambda x: x.split(3, dim=1)[0],
                                  lambda x: x[:5].split(2)[2]])
def test_split_and_unbind_nodes_expose_their_saved_arguments(view):
    # (a negative dim: torch reads its saved -1 back as 2**64 - 1; ember gives the dim it split)
    nodes = [view(lib.ones(6, 4, requires_grad=True)).grad_fn for lib in (torch, ember)]
    assert nodes[1].name() == nodes[0].name()
    saved = [{a: tuple(getattr(n, a)) if a.endswith("s") else getattr(n, a) for a in _SAVED if hasattr(n, a)}
             for n in nodes]
    assert saved[1] == saved[0] and "_saved_dim" in saved[0]
