"""Compiled functions return what eager returns laid out as eager (and torch) lays it out, on
every call (compiler/layouts.py): channels-last convolutions, batch norm and elementwise chains,
permuted inputs, transposed outputs, ``empty(memory_format=channels_last)``; the gradients a
compiled forward's backward gives and the ``.grad`` a compiled step sets; tensors written in place
keep their strides; a call in another layout compiles again."""
import copy

import numpy as np
import pytest
import torch

import ember
from ember._dynamo import mark_dynamic
from ember._dynamo.utils import counters

pytestmark = pytest.mark.usefixtures("fresh_compiler")
CL = ember.channels_last


def _strides(values):
    return [v.stride() for v in values]


def _same(compiled, eager, where):
    assert _strides(compiled) == _strides(eager), where
    for c, e in zip(compiled, eager):
        np.testing.assert_allclose(c.detach().numpy(), e.detach().numpy(), rtol=1e-4, atol=1e-4, err_msg=where)


def _net(lib):
    n = lib.nn
    return n.Sequential(n.Conv2d(3, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU())


def _forward(net, lib):
    def f(x):
        y = net(x)
        return y * 2 + 1, y.sum(1), y.permute(0, 2, 3, 1).exp(), x.mT * 3, (y[:, :2] - 1).contiguous(), \
            lib.empty(2, 3, 4, 5, memory_format=lib.channels_last).zero_()
    return f


def test_channels_last_conv_batchnorm_and_elementwise_keep_eagers_strides():
    ember.manual_seed(0)
    net, oracle = _net(ember).eval(), _net(torch).eval()
    oracle.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in net.state_dict().items()})
    f = _forward(net, ember)
    compiled = ember.compile(f)
    rng = np.random.default_rng(0)
    for call in range(3):
        data = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
        for layout in (CL, ember.contiguous_format):
            x = ember.tensor(data).contiguous(memory_format=layout)
            with ember.no_grad():
                got = compiled(x)
                _same(got, f(x), f"call {call} {layout}")
            want = _forward(oracle, torch)(torch.from_numpy(data).contiguous(
                memory_format=torch.channels_last if layout is CL else torch.contiguous_format))
            assert _strides(got) == [t.stride() for t in want], f"call {call} {layout}"
    assert counters["stats"]["unique_graphs"] == 2  # one per input layout: a guard, as torch's strides


def test_permuted_inputs_and_transposed_outputs():
    def f(a, b):
        return a * b, (a + 1).t(), a.sum(0, keepdim=True), b.unsqueeze(0) * 2

    compiled = ember.compile(f)
    rng = np.random.default_rng(1)
    for call in range(3):
        a = ember.tensor(rng.standard_normal((5, 4)).astype(np.float32)).t()  # strides (1, 4)
        b = ember.tensor(rng.standard_normal((4, 5)).astype(np.float32))
        _same(compiled(a, b), f(a, b), f"call {call}")
        ta, tb = torch.from_numpy(a.numpy()), torch.from_numpy(b.numpy())
        ta = ta.t().contiguous().t()
        assert _strides(compiled(a, b)) == [t.stride() for t in f(ta, tb)]


def test_gradients_of_a_compiled_forward_keep_eagers_strides():
    ember.manual_seed(2)
    net = _net(ember).to(memory_format=CL)
    twin = copy.deepcopy(net)
    compiled = ember.compile(net)
    rng = np.random.default_rng(2)
    for call in range(3):
        data = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
        got = []
        for model in (compiled, twin):
            x = ember.tensor(data).contiguous(memory_format=CL).requires_grad_()
            model.zero_grad()
            out = model(x)
            (g_x,) = ember.autograd.grad((out * out).sum(), x, retain_graph=True)
            (out * out).sum().backward()
            got.append([out, g_x, x.grad] + [p.grad for p in model.parameters()])
        _same(got[0], got[1], f"call {call}")
        assert got[0][0].stride() == (120, 1, 24, 4) and got[0][2].stride() == (90, 1, 18, 3)


def test_a_compiled_step_sets_grads_and_updates_parameters_in_their_layout():
    ember.manual_seed(3)
    net = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.Flatten(), ember.nn.Linear(32, 2))
    net[0].to(memory_format=CL)
    net[2].weight.data = net[2].weight.data.t().contiguous().t()  # a transposed parameter
    twin = copy.deepcopy(net)

    def stepper(model):
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss
        return step
    compiled, eager = ember.compile(stepper(net)), stepper(twin)
    rng = np.random.default_rng(3)
    strides = _strides(net.parameters())
    for call in range(4):
        x = ember.tensor(rng.standard_normal((2, 3, 6, 4)).astype(np.float32)).contiguous(memory_format=CL)
        np.testing.assert_allclose(compiled(x).item(), eager(x).item(), rtol=1e-5)
        _same([p.grad for p in net.parameters()], [p.grad for p in twin.parameters()], f"call {call}")
        _same(list(net.parameters()), list(twin.parameters()), f"call {call}")
        assert _strides(net.parameters()) == strides  # written in place, in their own layout
    assert net[0].weight.grad.stride() == (27, 1, 9, 3) and net[2].weight.grad.stride() == (1, 2)


def test_a_dynamic_graph_lays_out_each_size_as_eager():
    def f(x):
        return ember.nn.functional.max_pool2d(x * 2, 2), x.mean(1)
    compiled = ember.compile(f)
    rng = np.random.default_rng(4)
    for h, w in [(6, 8), (8, 6), (10, 12)]:
        x = ember.tensor(rng.standard_normal((2, 3, h, w)).astype(np.float32)).contiguous(memory_format=CL)
        mark_dynamic(x, 2)
        mark_dynamic(x, 3)
        _same(compiled(x), f(x), f"{h}x{w}")
    assert counters["stats"]["unique_graphs"] == 1
