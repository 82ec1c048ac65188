"""Session 29 (LEAD): ``x.T``'s deprecation warnings, once per process as torch's
``TORCH_WARN_ONCE`` (3-d and 0-d tensors; 1-d and 2-d none), and ``mT`` of a 0-d tensor; the
saved arguments of split and unbind nodes; sizes that are no ints refused as torch's parser does."""
import warnings

import numpy as np
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


_SIZES = {  # size arguments that are no ints: torch's parser refuses them (ember read them with int())
    "zeros(2.0)": lambda m, x: m.zeros(2.0), "ones((2.0,))": lambda m, x: m.ones((2.0,)),
    "empty(True)": lambda m, x: m.empty(True), "randn([2, 3.0])": lambda m, x: m.randn([2, 3.0]),
    "rand(2, 3.0)": lambda m, x: m.rand(2, 3.0), "zeros(2.0, 3)": lambda m, x: m.zeros(2.0, 3),
    "zeros(None)": lambda m, x: m.zeros(None), "ones(2, None)": lambda m, x: m.ones(2, None),
    "zeros('a')": lambda m, x: m.zeros("a"), "zeros([[2]])": lambda m, x: m.zeros([[2]]),
    "zeros(array)": lambda m, x: m.zeros(np.array([2, 3])), "zeros(float tensor)": lambda m, x: m.zeros(m.tensor(2.)),
    "zeros(int tensors)": lambda m, x: m.zeros(m.tensor([2, 3])), "ones(np.float64)": lambda m, x: m.ones(np.float64(2)),
    "zeros([True])": lambda m, x: m.zeros([True]), "full((2.0,), 1)": lambda m, x: m.full((2.0,), 1),
    "randint(5, (2.0,))": lambda m, x: m.randint(5, (2.0,)), "view(6, 1.0)": lambda m, x: x.view(6, 1.0),
    "reshape(6.0)": lambda m, x: x.reshape(6.0), "reshape((6.0,))": lambda m, x: x.reshape((6.0,)),
    "reshape(3, 2.0)": lambda m, x: x.reshape(3, 2.0), "expand(2.0, 3)": lambda m, x: x.expand(2.0, 3),
    "expand(2, 3.0)": lambda m, x: x.expand(2, 3.0), "permute(1, 0.0)": lambda m, x: x.permute(1, 0.0),
    "repeat(2.0, 1)": lambda m, x: x.repeat(2.0, 1), "repeat(2, 1.0)": lambda m, x: x.repeat(2, 1.0),
    "new_zeros(2.0)": lambda m, x: x.new_zeros(2.0), "new_zeros((2, 3.0))": lambda m, x: x.new_zeros((2, 3.0)),
    "tile(2.0)": lambda m, x: x.tile(2.0), "flip(0.0)": lambda m, x: x.flip(0.0),
    "sum_to_size(1, 3.0)": lambda m, x: x.sum_to_size(1, 3.0),
    # worded otherwise by torch (its other signatures or a keyword's): the class and the start are its
    "view(2.0, 3)": lambda m, x: x.view(2.0, 3), "view((2.0, 3))": lambda m, x: x.view((2.0, 3)),
    "zeros(size=2.0)": lambda m, x: m.zeros(size=2.0), "reshape(x, (6.0,))": lambda m, x: m.reshape(x, (6.0,))}
_WORDED_OTHERWISE = 4


@pytest.mark.parametrize("case", list(_SIZES))
def test_sizes_that_are_no_ints_are_refused_as_torch(case):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(TypeError) as info:
            _SIZES[case](lib, lib.ones(2, 3))
        messages.append(str(info.value).splitlines()[0])
    if case in list(_SIZES)[-_WORDED_OTHERWISE:]:
        assert messages[1].split("(")[0] == messages[0].split("(")[0]
    else:
        assert messages[1] == messages[0]


@pytest.mark.parametrize("call", [lambda m: m.zeros(2, True), lambda m: m.zeros([2, m.tensor(3)]),
                                  lambda m: m.ones(np.int64(2), np.int32(3)), lambda m: m.ones(2, 3).view(m.tensor(6)),
                                  lambda m: m.ones(m.Size([2, 3])), lambda m: m.empty(()), lambda m: m.ones(2, 3).tile(()),
                                  lambda m: m.ones(2, 3).flip([0, 1]), lambda m: m.rand([]).reshape(1, 1)])
def test_sizes_torch_takes(call):
    assert tuple(call(ember).shape) == tuple(call(torch).shape)
