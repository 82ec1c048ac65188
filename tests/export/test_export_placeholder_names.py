"""``ember.export.export`` names the graph's placeholders as torch.export does: a user input
after ``forward``'s argument even where that is a builtin's name (``input``, which the capture
named ``input_1``), a parameter ``p_`` + its qualified name (``p_fc_weight``), a buffer ``b_``,
a lifted constant ``c_``: in the graph signature, the printed program and the guard messages of
``ep.module()``. Compared with torch 2.13's export of the same modules."""
import io

import pytest
import torch

import ember


class _LinearReLU:
    def __init__(self, lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(4, 3)
                self.relu = lib.nn.ReLU()

            def forward(self, input):
                return self.relu(self.fc(input))
        self.net = Net()


class _NormalisedPair:
    def __init__(self, lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = lib.nn.BatchNorm1d(4)

            def forward(self, x, pair):
                return self.bn(x) + pair[0] * pair[1]
        self.net = Net().eval()


def _signature(ep):
    sig = ep.graph_signature
    return (sorted(sig.inputs_to_parameters.items()), sorted(sig.inputs_to_buffers.items()), list(sig.user_inputs))


def _guard_failure(ep, *args):
    with pytest.raises(AssertionError) as e:
        ep.module()(*args)
    return str(e.value)


def test_a_linear_relu_modules_signature_and_guard_name_torchs_placeholders():
    ours = ember.export.export(_LinearReLU(ember).net, (ember.randn(2, 4),))
    theirs = torch.export.export(_LinearReLU(torch).net, (torch.randn(2, 4),))
    assert _signature(ours) == _signature(theirs) == (
        [("p_fc_bias", "fc.bias"), ("p_fc_weight", "fc.weight")], [], ["input"])
    assert _guard_failure(ours, ember.randn(3, 4)) == _guard_failure(theirs, torch.randn(3, 4)) \
        == "Guard failed: input.size()[0] == 2"
    text = str(ours)
    assert "def forward(self, p_fc_weight, p_fc_bias, input):" in text and "input: USER_INPUT" in text
    assert "p_fc_weight: PARAMETER target='fc.weight'" in text and "input_1" not in text


def test_buffers_nested_inputs_and_a_saved_program_keep_the_names():
    ours = ember.export.export(_NormalisedPair(ember).net, (ember.randn(2, 4), [ember.randn(2, 4), ember.randn(4)]))
    theirs = torch.export.export(_NormalisedPair(torch).net, (torch.randn(2, 4), [torch.randn(2, 4), torch.randn(4)]))
    params, buffers, inputs = _signature(ours)
    want = _signature(theirs)
    assert params == want[0] and inputs == want[2] == ["x", "pair_0", "pair_1"]
    assert buffers == want[1]  # num_batches_tracked too, which eval mode never reads
    buffer = io.BytesIO()
    ember.export.save(ours, buffer)
    buffer.seek(0)
    loaded = ember.export.load(buffer)
    assert _signature(loaded) == _signature(ours)
    assert _guard_failure(loaded, ember.randn(5, 4), [ember.randn(2, 4), ember.randn(4)]) == \
        "Guard failed: x.size()[0] == 2"
