"""``nn.modules.utils`` as layers written outside torch import it (``_pair`` & co.) and
``consume_prefix_in_state_dict_if_present`` on a DataParallel checkpoint, against torch 2.13."""
import pytest
import torch

import ember


@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("value", [3, (1, 2), [4, 5, 6], torch.Size([2, 3])])
def test_ntuple_helpers_equal_torchs(name, value):
    from ember.nn.modules import utils
    t = getattr(torch.nn.modules.utils, name)(value)
    e = getattr(utils, name)(ember.Size(value) if isinstance(value, torch.Size) else value)
    assert e == t and type(e) is tuple


def test_reverse_repeat_and_list_with_default_equal_torchs():
    from ember.nn.modules.utils import _list_with_default, _reverse_repeat_tuple
    assert _reverse_repeat_tuple((1, 2, 3), 2) == torch.nn.modules.utils._reverse_repeat_tuple((1, 2, 3), 2)
    assert _list_with_default([None, 4], [1, 2, 7, 9]) == torch.nn.modules.utils._list_with_default([None, 4], [1, 2, 7, 9])
    for lib_utils in (torch.nn.modules.utils, ember.nn.modules.utils):
        with pytest.raises(ValueError, match="Input dimension should be at least 3"):
            lib_utils._list_with_default([None, 4], [1, 2])


def test_consume_prefix_strips_dataparallels_module_prefix_as_torch():
    states = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        state = lib.nn.DataParallel(lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))).state_dict()
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, "module.")
        states.append(state)
    assert list(states[1]) == list(states[0]) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU(), ember.nn.Linear(3, 1))
    model.load_state_dict(states[1])
