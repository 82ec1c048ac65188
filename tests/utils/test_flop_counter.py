"""FlopCounterMode against torch.utils.flop_counter.FlopCounterMode on the same models."""
import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode as TorchCounter

import ember
from ember.utils.flop_counter import FlopCounterMode


def counts(lib, counter_cls, build, make_input, backward=True):
    lib.manual_seed(0)
    model = build(lib)
    x = make_input(lib)
    with counter_cls(display=False) as counter:
        out = model(x)
        if backward:
            out.sum().backward()
    return {mod: {str(op): n for op, n in ops.items()} for mod, ops in counter.get_flop_counts().items()}


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 16, bias=False),
                             lib.nn.ReLU(), lib.nn.Linear(16, 4))


def conv_net(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(3, 6, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                             lib.nn.Conv2d(6, 4, 3, stride=2, groups=2), lib.nn.Flatten(),
                             lib.nn.Linear(4, 5))


def deconv_net(lib):
    return lib.nn.Sequential(lib.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1), lib.nn.ReLU())


CASES = {
    "mlp": (mlp, lambda lib: lib.randn(5, 8)),
    "mlp_batched_input_with_grad": (mlp, lambda lib: lib.randn(2, 5, 8, requires_grad=True)),
    "conv_net": (conv_net, lambda lib: lib.randn(2, 3, 8, 8)),
    "conv_transpose_with_input_grad": (deconv_net, lambda lib: lib.randn(2, 3, 5, 5, requires_grad=True)),
    "conv1d": (lambda lib: lib.nn.Conv1d(4, 6, 3, dilation=2), lambda lib: lib.randn(3, 4, 11, requires_grad=True)),
}


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "forward_backward"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_counts_equal_torch_per_module_and_op(case, backward):
    build, make_input = CASES[case]
    expected = counts(torch, TorchCounter, build, make_input, backward)
    got = counts(ember, FlopCounterMode, build, make_input, backward)
    assert got == expected
    assert got["Global"]  # the case counts something


@pytest.mark.parametrize("shapes", [((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)), ((4, 6, 8), (4, 6, 8), (4, 6, 8))])
def test_sdpa_forward_and_backward_equal_torch(shapes):
    def run(lib, counter_cls):
        lib.manual_seed(0)
        q, k, v = (lib.randn(*s, requires_grad=True) for s in shapes)
        with counter_cls(display=False) as fwd:
            out = lib.nn.functional.scaled_dot_product_attention(q, k, v)
        with counter_cls(display=False) as bwd:
            out.sum().backward()
        return [{m: {str(o): n for o, n in ops.items()} for m, ops in c.get_flop_counts().items()}
                for c in (fwd, bwd)]
    with sdpa_kernel(SDPBackend.MATH):
        expected = run(torch, TorchCounter)
    assert run(ember, FlopCounterMode) == expected


def test_transformer_layer_totals_equal_torch():
    # torch's in-projection is an mm (matmul on a transposed input) where ember's is an addmm,
    # and torch's module tracker credits some backward products to dropout modules: compare the
    # totals, and the forward per module.
    def build(lib):
        return lib.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)

    def make_input(lib):
        return lib.randn(2, 5, 16)
    for backward in (False, True):
        with sdpa_kernel(SDPBackend.MATH):
            expected = counts(torch, TorchCounter, build, make_input, backward)
        got = counts(ember, FlopCounterMode, build, make_input, backward)
        assert sum(got["Global"].values()) == sum(expected["Global"].values())
        if not backward:
            assert {m: sum(o.values()) for m, o in got.items()} == {m: sum(o.values()) for m, o in expected.items()}


def test_closed_form_mm_and_total():
    with FlopCounterMode(display=False) as counter:
        ember.ones(4, 3) @ ember.ones(3, 5)
        ember.ones(2, 4, 3) @ ember.ones(2, 3, 5)
        ember.ones(3) @ ember.ones(3)  # a dot product: no rule, as in torch
    assert counter.get_flop_counts() == {"Global": {"aten.mm": 2 * 4 * 5 * 3, "aten.bmm": 2 * 2 * 4 * 5 * 3}}
    assert counter.get_total_flops() == 120 + 240


def test_nothing_counted_outside_and_counter_removed():
    from ember._ops import core
    from ember.nn.modules import module
    with FlopCounterMode(display=False) as counter:
        pass
    ember.ones(4, 3) @ ember.ones(3, 5)
    assert counter.get_total_flops() == 0
    assert counter not in core.OBSERVERS
    assert not module._global_forward_hooks and not module._global_forward_pre_hooks


def test_mods_argument_warns_as_torch():
    with pytest.warns(UserWarning, match="mods argument is not needed"):
        FlopCounterMode(ember.nn.Linear(2, 2), display=False)


def test_table_depth_and_display(capsys):
    ember.manual_seed(0)
    model = mlp(ember)
    with FlopCounterMode(depth=1) as counter:
        model(ember.randn(5, 8)).sum().backward()
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert lines[0].split() == ["Module", "FLOP", "%", "Total"]
    assert set(lines[1]) <= {"-", " "}
    total = counter.get_total_flops()
    # depth 1 shows "Sequential" and its ops, not "Sequential.0"; Global is subsumed by it
    assert lines[2].split() == ["Sequential", f"{total / 1000:.3f}K", "100.00%"]
    assert "Sequential.0" not in printed and "Global" not in printed
    assert "Sequential.0" in counter.get_table(depth=2)


def test_custom_mapping_counts_an_op():
    def relu_flops(x, *, out_shape, **attrs):
        return "relu", x[0] * x[1]
    with FlopCounterMode(display=False, custom_mapping={"Relu": relu_flops}) as counter:
        ember.relu(ember.ones(3, 7))
    assert counter.get_flop_counts() == {"Global": {"relu": 21}}


def test_docstring_examples_run():
    import doctest

    import ember.utils.flop_counter as module
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("equation, shapes", [
    ("bij,bjk->bik", [(2, 3, 5), (2, 5, 7)]),
    ("ij,jk->i", [(3, 5), (5, 7)]),          # k summed out of one operand first
    ("ij,kj->ik", [(3, 5), (7, 5)]),
    ("bi,bi->b", [(2, 3), (2, 3)]),
    ("i,i->", [(6,), (6,)]),
    ("...ij,jk->...ik", [(2, 4, 3, 5), (5, 7)]),
    ("ij,jk->ijk", [(3, 5), (5, 7)]),        # nothing contracted: an elementwise product, 0
    ("ii,ij->ij", [(3, 3), (3, 5)]),
    ("ij->ji", [(3, 5)]),
])
def test_einsum_counts_equal_torch(equation, shapes):
    totals = []
    for lib, counter_cls in ((torch, TorchCounter), (ember, FlopCounterMode)):
        operands = [lib.ones(*shape, requires_grad=True) for shape in shapes]
        with counter_cls(display=False) as counter:
            lib.einsum(equation, *operands)
        totals.append(counter.get_flop_counts().get("Global", {}))
    assert {str(k): v for k, v in totals[1].items()} == {str(k): v for k, v in totals[0].items()}


def test_unbatched_linear_backward_counts_its_weight_gradient_as_torch():
    totals = []
    for lib, counter_cls in ((torch, TorchCounter), (ember, FlopCounterMode)):
        lib.manual_seed(0)
        layer = lib.nn.Linear(8, 4)
        x = lib.randn(8, requires_grad=True)
        with counter_cls(display=False) as counter:
            layer(x).sum().backward()
        totals.append(counter.get_total_flops())
        grads = [layer.weight.grad.detach().numpy(), x.grad.detach().numpy()]
    assert totals[1] == totals[0] == 3 * 2 * 8 * 4
    assert grads[0].shape == (4, 8) and grads[1].shape == (8,)


def test_layers_of_a_module_list_are_named_by_their_path_as_torch():

    def build(lib):
        class Tower(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = lib.nn.ModuleList(lib.nn.Linear(6, 6) for _ in range(3))
                self.heads = lib.nn.ModuleDict({"a": lib.nn.Linear(6, 2)})

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x).relu()
                return self.heads["a"](x)
        return Tower()
    ours = counts(ember, FlopCounterMode, build, lambda lib: lib.randn(4, 6))
    theirs = counts(torch, TorchCounter, build, lambda lib: lib.randn(4, 6))
    assert "Tower.layers.2" in ours and "Tower.heads.a" in ours
    assert ours == theirs


def test_ops_of_other_threads_are_not_counted_as_in_torch():
    import threading
    totals = []
    for lib, counter_cls in ((torch, TorchCounter), (ember, FlopCounterMode)):
        def work():
            lib.ones(10, 10) @ lib.ones(10, 10)
            lib.nn.Linear(10, 10)(lib.ones(2, 10, requires_grad=True)).sum().backward()
        with counter_cls(display=False) as counter:
            worker = threading.Thread(target=work)
            worker.start()
            worker.join()
            lib.ones(4, 3) @ lib.ones(3, 5)
        totals.append(counter.get_flop_counts())
    assert {k: {str(op): n for op, n in v.items()} for k, v in totals[1].items()} == \
        {k: {str(op): n for op, n in v.items()} for k, v in totals[0].items()} == {"Global": {"aten.mm": 120}}


def test_multi_result_ops_are_observed():
    """max(dim), sort and layer norm's statistics return several results on one node: counting
    them (and crediting their backward to a module) works as for one result. Was: AttributeError."""
    x = ember.randn(3, 4, requires_grad=True)
    layer = ember.nn.Linear(4, 4)
    with FlopCounterMode(display=False) as counter:
        values, _ = layer(x).max(1)
        ember.sort(x, 1)[0].sum().backward()
        (values.sum() + ember.nn.functional.layer_norm(x, (4,)).sum()).backward()
    assert counter.get_flop_counts()["Global"] == {"aten.addmm": 2 * 3 * 4 * 4, "aten.mm": 2 * 2 * 3 * 4 * 4}
