"""cond and switch: the taken branch's values and gradients against torch.cond (switch, new in
2.14, against indexing a Python list), the index clamp, and the errors."""
import numpy as np
import pytest

import ember
from ember._higher_order_ops.switch import switch
from torchcompare import assert_close, to_torch, torch


def _branches():
    return (lambda x, y: (x.sin() * y, x.sum()),
            lambda x, y: (x.cos() + y, (x * y).sum()))


@pytest.mark.parametrize("pred", [True, False])
def test_cond_matches_torch_values_and_gradients(pred):
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    y = ember.tensor(rng.standard_normal(3), requires_grad=True)
    tx, ty = to_torch(x), to_torch(y)
    out = ember.cond(ember.tensor(pred), *_branches(), (x, y))
    ref = torch.cond(torch.tensor(pred), *_branches(), (tx, ty))
    for e, t in zip(out, ref):
        assert_close(e, t)
    (out[0].sum() + out[1]).backward()
    (ref[0].sum() + ref[1]).backward()
    assert_close(x.grad, tx.grad)
    assert_close(y.grad, ty.grad)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("pred", [True, False])
def test_cond_gives_zero_gradients_to_what_only_the_untaken_branch_reads_like_torch(pred, compiled):
    """torch.cond's autograd node takes the operands and every tensor either branch reads
    (eagerly and compiled alike): a parameter or operand that a branch reads gets zeros where
    no gradient reaches it (read by the other branch only, or only through a comparison or a
    detach), one neither reads None."""
    grads = []
    for lib, cond in ((ember, ember.cond), (torch, torch.cond)):
        lib.manual_seed(0)
        lin, w = lib.nn.Linear(3, 3), lib.randn(3, requires_grad=True)
        x, y, gate, q, unread = (lib.randn(3, requires_grad=True) for _ in range(5))

        def f(p, *operands):
            return cond(p, lambda x, y, g, q, u: lin(x) * w + y + (g > 0).float(),
                        lambda x, y, g, q, u: x * 2 + (q * 3).detach(), operands)
        if compiled:
            f = (lib.compile(f, fullgraph=True) if lib is ember else lib.compile(f, fullgraph=True, backend="eager"))
        out = f(lib.tensor(pred), x, y, gate, q, unread)
        assert out.requires_grad
        out.sum().backward()
        grads.append([t.grad for t in (lin.weight, lin.bias, w, x, y, gate, q, unread)])
    ember.compiler.reset()
    for k, (ours, theirs) in enumerate(zip(*grads)):
        assert (ours is None) == (theirs is None), k
        if theirs is not None:
            assert_close(ours, theirs)


LIN = ember.nn.Linear(3, 3)
SCALE = ember.ones(3, requires_grad=True)
BRANCHES = [lambda x: x * 2, lambda x: LIN(x) * SCALE, lambda x: x.exp()]  # read from a global list


def _switch_step(x, index):
    out = switch(index, BRANCHES, (x,)).sum()
    out.backward()
    return out.detach()


@pytest.mark.parametrize("index", [0, 1, 2])
def test_switch_gives_zero_gradients_to_what_only_other_branches_read_eagerly_and_compiled(index):
    compiled = ember.compile(_switch_step)
    x = ember.tensor([0.5, -1.0, 2.0])
    want = torch.func.grad(lambda w, b, s: (torch.nn.functional.linear(to_torch(x), w, b) * s).sum(),
                           argnums=(0, 1, 2))(*(to_torch(t) for t in (LIN.weight, LIN.bias, SCALE)))
    for run in (_switch_step, compiled, compiled):  # eager, the recording call, the compiled graph
        for t in (LIN.weight, LIN.bias, SCALE):
            t.grad = None
        run(x, ember.tensor(index))
        for t, w in zip((LIN.weight, LIN.bias, SCALE), want):
            assert_close(t.grad, w if index == 1 else torch.zeros_like(w))
    ember.compiler.reset()
    # a Python int picks a branch as an if would: the others are not read
    assert switch(index, BRANCHES, (x,)).requires_grad == (index == 1)


def test_cond_python_bool_runs_only_the_taken_branch():
    ran = []
    out = ember.cond(False, lambda x: ran.append("true") or x, lambda x: ran.append("false") or -x,
                     [ember.ones(2)])
    assert ran == ["false"] and out.tolist() == [-1.0, -1.0]


def test_cond_rejects_a_multi_element_pred_like_torch():
    with pytest.raises(RuntimeError, match="single-element") as ours:
        ember.cond(ember.tensor([True, False]), lambda x: x, lambda x: x, (ember.ones(1),))
    with pytest.raises(RuntimeError, match="single-element"):
        torch.cond(torch.tensor([True, False]), lambda x: x, lambda x: x, (torch.ones(1),))
    assert "tensor([ True, False])" in str(ours.value)


@pytest.mark.parametrize("index", [-3, -1, 0, 1, 2, 7, ember.tensor(1), ember.tensor([9])])
def test_switch_clamps_the_index(index):
    branches = [lambda x: x + 1, lambda x: x * 2, lambda x: x - 5]
    i = int(index.item()) if isinstance(index, ember.Tensor) else index
    expected = branches[min(max(i, 0), 2)](3.0)
    assert switch(index, branches, (ember.tensor(3.0),)).item() == expected


def test_switch_gradients_and_constant_leaves():
    x = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
    branches = (lambda x: (x.exp(), 3, None), lambda x: (x.tanh(), 4, None))
    out, k, none = ember.switch(ember.tensor(1), branches, (x,))
    assert (k, none) == (4, None)
    out.sum().backward()
    tx = to_torch(x.detach(), requires_grad=True)
    tx.tanh().sum().backward()
    assert_close(x.grad, tx.grad)
    assert ember._higher_order_ops.switch is switch


@pytest.mark.parametrize("branches", [[], (), [lambda x: x, "not callable"]])
def test_switch_rejects_empty_branches(branches):
    with pytest.raises(RuntimeError, match=r"^Expected branches to be a non-empty tuple or list of callables\.$"):
        switch(0, branches, (ember.ones(1),))


def test_switch_rejects_a_float_index():
    with pytest.raises(RuntimeError, match="torch.float32|ember.float32"):
        switch(ember.tensor(1.0), [lambda x: x], (ember.ones(1),))


@pytest.mark.parametrize("call", [
    lambda M, x: M.cond(M.tensor(True), lambda x: x.add_(1), lambda x: x + 1, (x,)),
    lambda M, x: switch(ember.tensor(1), [lambda x: x + 1, lambda x: x.mul_(2)], (x,)),
])
def test_an_eager_branch_writing_into_its_operand_is_refused_like_torch(call):
    # torch refuses it eagerly too (2.13 has no switch: its cond is the oracle); ember used to
    # run it and leave the operand changed
    with pytest.raises(RuntimeError, match="mutation"):
        torch.cond(torch.tensor(True), lambda x: x.add_(1), lambda x: x + 1, (torch.ones(2),))
    x = ember.ones(2)
    with pytest.raises(ember._dynamo.exc.UncapturedHigherOrderOpError, match="wrote into its input"):
        call(ember, x)


@pytest.mark.parametrize("pred", [True, False])
@pytest.mark.parametrize("other, match", [
    (lambda x: x.double(), "output 0 differ in dtype: torch.float32 vs torch.float64"),
    (lambda x: (x.cos(), x.sum()), r"same pytree structure, got Tensor and \(Tensor, Tensor\)"),
])
def test_eager_cond_checks_the_branch_not_taken_like_torch(pred, other, match):
    # torch traces both branches even eagerly: a dtype or structure mismatch is a RuntimeError
    # whichever branch the data picks (ember used to run the taken branch only)
    with pytest.raises(RuntimeError):
        torch.cond(torch.tensor(pred), lambda x: x.sin(), other, (torch.ones(3),))
    with pytest.raises(ember._dynamo.exc.UncapturedHigherOrderOpError, match=match):
        ember.cond(ember.tensor(pred), lambda x: x.sin(), other, (ember.ones(3),))
    ember.cond(pred, lambda x: x.sin(), other, (ember.ones(3),))  # a Python bool: the taken one only


def test_eager_cond_shape_mismatch_is_an_error_naming_the_shapes():
    # the contract (torch 2.13 would merge the shapes into an unbacked size)
    with pytest.raises(ember._dynamo.exc.UncapturedHigherOrderOpError, match=r"differ in shape: \(3,\) vs \(2,\)"):
        ember.cond(ember.tensor(False), lambda x: x.sin(), lambda x: x[:2].cos(), (ember.ones(3),))


@pytest.mark.parametrize("index", [0, 2, 5])
def test_eager_switch_checks_every_branch_like_the_compiled_one(index):
    branches = [lambda x: x.sin(), lambda x: x.cos(), lambda x: x[:2].cos()]
    for run in (switch, lambda *a: ember.compile(switch, fullgraph=True)(*a)):
        with pytest.raises(ember._dynamo.exc.UncapturedHigherOrderOpError,
                           match=r"branches\[[02]\] and branches\[[02]\] output 0 differ in shape: \((3|2),\) vs \((2|3),\)"):
            run(ember.tensor(index), branches, (ember.ones(3),))
    ember.compiler.reset()
    assert switch(index, branches, (ember.ones(3),)).shape == ((2,) if index > 1 else (3,))  # an int: an if


def test_the_untaken_branch_is_checked_once_without_side_effects_on_data_or_rng():
    ran = []

    def untaken(x):
        ran.append(1)
        return x.add_(ember.rand(3))  # writes into its operand and draws random numbers

    x = ember.ones(3)
    ember.manual_seed(0)
    with pytest.raises(ember._dynamo.exc.UncapturedHigherOrderOpError, match="wrote into its input"):
        ember.cond(ember.tensor(True), lambda x: x * 2, untaken, (x,))
    assert x.tolist() == [1.0, 1.0, 1.0] and torch.equal(to_torch(ember.rand(2)), (ember.manual_seed(0), to_torch(ember.rand(2)))[1])
    ran.clear()
    branch = lambda x: x * 3  # noqa: E731
    for _ in range(4):  # the same branch functions and shapes: checked on the first call only
        assert ember.cond(ember.tensor(True), lambda x: x * 2, lambda x: (ran.append(1), branch(x))[1],
                          (x,)).tolist() == [2.0] * 3
    assert ran == [1]
