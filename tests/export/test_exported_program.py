"""make_fx and ember.export: graph modules that run without the Python model code, equal to
the eager module (and to torch.export's program on the same weights), saved and loaded safely."""
import json
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember._dynamo import exc
from ember.export import ExportedProgram, export, load, save
from ember.fx import GraphModule
from ember.fx.experimental.proxy_tensor import make_fx


class Net(nn.Module):
    """A data-dependent branch (ember.cond), batch norm buffers and a dict output."""

    def __init__(self):
        super().__init__()
        self.fc1, self.bn, self.fc2 = nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)

    def forward(self, x, scale):
        h = self.bn(self.fc1(x))
        h = ember.cond(h.sum() > 0, lambda h: h.relu() * scale, lambda h: h.tanh() - scale, (h,))
        return {"out": self.fc2(h), "h": h[:, 1:3]}


def _net():
    ember.manual_seed(0)
    net = Net()
    net.bn.running_mean.copy_(ember.randn(4))
    return net.eval()


def _inputs(seed, sign=1.0):
    rng = np.random.default_rng(seed)
    return ember.tensor(sign * rng.standard_normal((5, 3)).astype(np.float32)), ember.tensor(1.5)


def _assert_same(got, want):
    for key in want:
        np.testing.assert_allclose(got[key].detach().numpy(), want[key].detach().numpy(), rtol=1e-6, atol=1e-6)


def test_make_fx_graph_module_replays_both_branches():
    lin = nn.Linear(3, 2)

    def f(x, y):
        return ember.cond(x.sum() > 0, lambda x: lin(x).relu(), lambda x: lin(x) * 2, (x,)), y + 1

    gm = make_fx(f)(ember.randn(4, 3), ember.ones(2))
    assert isinstance(gm, GraphModule) and isinstance(gm, nn.Module)
    assert "Cond(" in gm.code and gm.code.startswith("def forward(self, x,")
    assert gm.print_readable(print_output=False).startswith("class f(torch.nn.Module):\n    def forward(self")
    for sign in (1, -1):
        x = ember.tensor(sign * np.abs(np.random.default_rng(0).standard_normal((4, 3))).astype(np.float32))
        for got, want in zip(gm(x, ember.zeros(2)), f(x, ember.zeros(2))):
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    with pytest.raises(AssertionError, match="Unexpected tracing type: proxy"):
        make_fx(f, tracing_mode="proxy")


def test_a_detached_value_stops_the_gradient_of_the_replayed_graph_like_torch():
    """``x.detach()`` shares its array with ``x``: where an op reads it and ``x`` requires grad
    while traced, the graph records a Detach node, so the module replayed with autograd gives
    eager's (torch's) gradient."""
    def f(lib):
        return lambda q: q * 2 + (q.exp() * 3).detach() * q

    rng = np.random.default_rng(0)
    data = rng.standard_normal(3).astype(np.float32)
    q, tq = ember.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    gm = make_fx(f(ember))(q)
    assert "Detach(" in gm.code
    gm(q).sum().backward()
    f(torch)(tq).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-6)


def test_make_fx_refuses_python_control_flow_on_values():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(exc.Unsupported, match="bool"):
        make_fx(f)(ember.ones(2))


def test_export_runs_without_the_model_code_and_matches_torch():
    net = _net()
    ep = export(net, _inputs(0))
    assert isinstance(ep, ExportedProgram) and ep.range_constraints == {}
    sig = ep.graph_signature
    assert sig.parameters == ["fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight", "fc2.bias"]
    assert sig.buffers == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]  # (unread too, as torch)
    assert sig.user_inputs == ["x", "scale"] and set(ep.state_dict) == set(net.state_dict())
    text = str(ep)
    assert text.startswith("ExportedProgram:\n    class GraphModule(torch.nn.Module):")
    assert "def true_graph_0(" in text and "x: USER_INPUT" in text and "Range constraints: {}" in text
    module = ep.module()
    tnet = torch.nn.Module()  # torch's own model on the same weights: the reference
    tnet.fc1, tnet.bn, tnet.fc2 = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)
    tnet.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in net.state_dict().items()})
    tnet.eval()
    for seed, sign in [(1, 1.0), (2, -1.0), (3, 1.0)]:
        x, scale = _inputs(seed, sign)
        got = module(x, scale)
        h = tnet.bn(tnet.fc1(torch.from_numpy(x.numpy())))
        h = h.relu() * 1.5 if h.sum() > 0 else h.tanh() - 1.5
        np.testing.assert_allclose(got["out"].detach().numpy(), tnet.fc2(h).detach().numpy(), rtol=1e-5, atol=1e-6)
        _assert_same(got, net(x, scale))
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 5"):
        module(ember.randn(6, 3), ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="dtype"):
        module(ember.randn(5, 3).double(), ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="exported_program.module()"):
        ep(*_inputs(0))


def test_export_argument_errors():
    with pytest.raises(ValueError, match="instance of `torch.nn.Module`"):
        export(lambda x: x, (ember.ones(1),))
    with pytest.raises(exc.UserError, match="tuple of example positional inputs"):
        export(_net(), [ember.ones(5, 3)])
    with pytest.raises(exc.UserError, match="top-level keys must be the arg names"):
        export(_net(), _inputs(0), dynamic_shapes={"z": {0: None}})


def test_save_load_round_trip(tmp_path):
    net = _net()
    ep = export(net, _inputs(0))
    path = tmp_path / "net.pt2"
    save(ep, path, extra_files={"note.txt": "hello"})
    extra = {"note.txt": ""}
    loaded = load(path, extra_files=extra)
    assert extra == {"note.txt": "hello"} and str(loaded) == str(ep)
    for seed, sign in [(4, 1.0), (5, -1.0)]:
        _assert_same(loaded.module()(*_inputs(seed, sign)), net(*_inputs(seed, sign)))
    assert [p.name for p in tmp_path.iterdir()] == ["net.pt2"]  # written atomically: no temporary left


def test_load_refuses_unknown_ops_and_non_exports(tmp_path):
    path = tmp_path / "net.pt2"
    save(export(_net(), _inputs(0)), path)
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    program = json.loads(members["ember_export/program.json"])
    program["graph"]["nodes"][0]["target"] = "os.system"
    members["ember_export/program.json"] = json.dumps(program)
    bad = tmp_path / "bad.pt2"
    with zipfile.ZipFile(bad, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(ValueError, match="unknown op 'os.system'"):
        load(bad)
    (tmp_path / "junk.pt2").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not an ember.export file"):
        load(tmp_path / "junk.pt2")


def test_export_while_loop_decoder_saved_and_loaded(tmp_path):
    class Counter(nn.Module):
        def forward(self, x, limit):
            return ember.while_loop(lambda n, x: x.sum() < limit, lambda n, x: (n + 1, x * 2), (ember.zeros(()), x))

    ep = export(Counter(), (ember.ones(2), ember.tensor(10.0)))
    save(ep, tmp_path / "loop.pt2")
    module = load(tmp_path / "loop.pt2").module()
    for limit, trips in [(10.0, 3), (100.0, 6), (1.0, 0)]:
        n, x = module(ember.ones(2), ember.tensor(limit))
        assert n.item() == trips and x.tolist() == [2.0 ** trips] * 2


def test_switch_scan_and_map_nodes_survive_save_and_load(tmp_path):
    from ember._higher_order_ops import map as hop_map
    from ember._higher_order_ops import scan

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(ember.tensor([0.5, -1.0]))

        def forward(self, i, xs):
            carry, ys = scan(lambda c, x: (c + x * self.w, c.sum()), ember.zeros(2), xs, reverse=True)
            picked = ember.switch(i, [lambda y: y * 2, lambda y: y - 1, lambda y: y.exp()], (ys,))
            return picked, hop_map(lambda x: x.cumsum(0), xs), carry

    model = Mixed()
    xs = ember.tensor(np.random.default_rng(6).standard_normal((4, 2)).astype(np.float32))
    save(export(model, (ember.tensor(0), xs)), tmp_path / "mixed.pt2")
    loaded = load(tmp_path / "mixed.pt2")
    code = loaded.graph.code
    assert all(f"{name}(" in code for name in ("Scan", "Switch", "Map", "Clamp"))
    for index in (-2, 1, 2, 9):
        for got, want in zip(loaded.module()(ember.tensor(index), xs), model(ember.tensor(index), xs)):
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("edit", [
    lambda p: p["graph"].pop("nodes"),
    lambda p: p["tensors"][0].pop("dtype"),
    lambda p: p["graph"]["nodes"][0].__setitem__("meta", 5),
    lambda p: p["graph"]["nodes"][0].__setitem__("kwargs", {"dict": [[{"tuple": [1]}, 1]]}),
    lambda p: p["graph"].__setitem__("mutations", [["nowhere", "x"]]),
    lambda p: p.__setitem__("inputs", ["__class__"] + p["inputs"][1:]),
    lambda p: p.__setitem__("inputs", [1000] + p["inputs"][1:]),
])
def test_load_of_an_edited_file_raises_value_error(tmp_path, edit):
    # each used to raise KeyError or TypeError, or to load and fail on the first call
    path = tmp_path / "net.pt2"
    save(export(_net(), _inputs(0)), path)
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    program = json.loads(members["ember_export/program.json"])
    edit(program)
    members["ember_export/program.json"] = json.dumps(program)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(ValueError):
        load(path)


def test_a_deep_copy_of_a_traced_module_runs_as_the_original_with_its_own_parameters():
    """copy.deepcopy of make_fx's and ep.module()'s graph modules (torch's copy independent
    parameters and run the same graph); the copy used to return the captured structure's slots."""
    import copy
    from ember.fx.experimental.proxy_tensor import make_fx

    def f(x, w):
        return (x * 2).sin() @ w, x.shape[0]
    w = ember.randn(3, 2)
    traced = make_fx(f)(ember.randn(3), w)
    x = ember.randn(3)
    (got, n), (want, m) = copy.deepcopy(traced)(x, w), f(x, w)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert n == m == 3

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return {"y": self.fc(x).relu()}
    module = export(Head(), (ember.randn(4, 3),)).module()
    twin = copy.deepcopy(module)
    x = ember.randn(4, 3)
    assert ember.equal(twin(x)["y"], module(x)["y"])
    with ember.no_grad():
        twin.fc.weight.zero_()
        twin.fc.bias.fill_(-1.0)
    assert not bool((module(x)["y"] == 0).all()) and bool((twin(x)["y"] == 0).all())


def test_make_fx_and_export_keep_detach_of_an_input_read_first_detached_and_of_a_returned_value():
    """torch's make_fx records detach: an input first read through x.detach(), and a returned
    (x * 3).detach(), give outputs that do not require grad when the graph is run."""
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx
    from ember.fx.experimental.proxy_tensor import make_fx

    def f(x):
        return x.detach() * 2, (x * 3).detach(), x * 4
    x, tx = ember.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    want = [o.requires_grad for o in torch_make_fx(f)(tx)(tx)]
    assert want == [False, False, True]
    assert [o.requires_grad for o in make_fx(f)(x)(x)] == want

    class M(nn.Module):
        def forward(self, x):
            return f(x)
    outputs = export(M(), (x,)).module()(x)
    assert [o.requires_grad for o in outputs] == want
    outputs[2].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 4.0, np.float32))
