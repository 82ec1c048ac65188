"""torch.export lifts a module's whole state: every parameter and buffer (read or not), the
non-persistent buffers among the constants (``persistent=False`` in the signature), tensor
attributes under their attribute's name (``c_k``), and user inputs the forward never reads,
nested ones named by their path (``ys_1_a``). torch 2.13's export of the same module is the oracle."""
import io

import pytest
import torch

import ember


def _module(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 4)
            self.bn = lib.nn.BatchNorm1d(4)
            self.unused = lib.nn.Linear(2, 2)
            self.register_buffer("scale", lib.ones(4), persistent=False)
            self.k = lib.tensor([1.0, 2.0, 3.0, 4.0])

        def forward(self, x, ys):
            return self.bn(self.fc(x)) * self.scale + self.k + ys[1]["a"]
    lib.manual_seed(0)
    return M().eval()


def _export(lib):
    args = (lib.arange(6.0).reshape(2, 3), [lib.zeros(4), {"a": lib.arange(4.0)}])
    return _module(lib).eval(), lib.export.export(_module(lib), args), args


def _inputs_part(ep):
    return str(ep.graph_signature).split("# outputs")[0]


def test_signature_state_dict_and_constants_equal_torchs():
    (_, ours, _), (_, theirs, _) = _export(ember), _export(torch)
    assert _inputs_part(ours) == _inputs_part(theirs)
    assert str(ours.graph_signature).startswith("\n# inputs\np_fc_weight: PARAMETER target='fc.weight'\n")
    assert list(ours.state_dict) == list(theirs.state_dict)
    assert sorted(ours.constants) == sorted(theirs.constants) == ["k", "scale"]
    sig, want = ours.graph_signature, theirs.graph_signature
    assert sig.parameters == list(want.parameters) and sig.buffers == list(want.buffers)
    assert sig.non_persistent_buffers == list(want.non_persistent_buffers) == ["scale"]
    assert sig.user_inputs == list(want.user_inputs) == ["x", "ys_0", "ys_1_a"]
    names = [n.name for n in ours.graph.nodes if n.op == "placeholder"]
    assert names == [n.name for n in theirs.graph.nodes if n.op == "placeholder"]


def test_the_program_runs_and_survives_save_and_load():
    module, ep, args = _export(ember)
    expected = module(*args)
    assert ember.equal(ep.module()(*args), expected)
    buffer = io.BytesIO()
    ember.export.save(ep, buffer)
    buffer.seek(0)
    loaded = ember.export.load(buffer)
    assert _inputs_part(loaded) == _inputs_part(ep)
    assert list(loaded.state_dict) == list(ep.state_dict) and sorted(loaded.constants) == ["k", "scale"]
    assert ember.equal(loaded.module()(*args), expected)


class _Nested:
    def __init__(self, lib):
        class M(lib.nn.Module):
            def forward(self, x, ys):
                return x + ys[1]["a"]
        self.ep = lib.export.export(M(), (lib.zeros(4), [lib.zeros(2), {"a": lib.zeros(4)}]))


@pytest.mark.parametrize("sizes", [(4, 2, 5), (5, 2, 4), (4, 3, 4)])
def test_guard_messages_name_nested_inputs_as_torch(sizes):
    """``Guard failed: ys[1]['a'].size()[0] == 4`` (the Python that reads the input), also after
    save and load."""
    def failure(lib, ep):
        x, y0, a = sizes
        with pytest.raises(AssertionError) as e:
            ep.module()(lib.zeros(x), [lib.zeros(y0), {"a": lib.zeros(a)}])
        return str(e.value)
    ours = _Nested(ember).ep
    buffer = io.BytesIO()
    ember.export.save(ours, buffer)
    buffer.seek(0)
    want = failure(torch, _Nested(torch).ep)
    assert failure(ember, ours) == failure(ember, ember.export.load(buffer)) == want
