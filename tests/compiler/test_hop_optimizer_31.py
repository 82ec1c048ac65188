"""An optimizer's step inside a control-flow operator's branch (compiler/hop.py): every branch is
traced, the one not taken too, on the real operands, so the step wrote the parameters during the
recording (the weights after three calls differed from eager's by three extra steps). torch 2.13
raises ``UncapturedHigherOrderOpError``; so does ember now, before the step writes anything."""
import pytest
import torch

import ember


def _step(module):
    module.manual_seed(0)
    m = module.nn.Linear(3, 1)
    opt = module.optim.SGD(m.parameters(), lr=0.1)

    def f(x, p):
        m(x).sum().backward()

        def stepped(x):
            opt.step()
            return x + 1
        return module.cond(p, stepped, lambda x: x - 1, (x,))
    return m, f


@pytest.mark.parametrize("module", [torch, ember], ids=["torch", "ember"])
def test_optimizer_step_in_a_branch_raises_and_writes_nothing(module):
    m, f = _step(module)
    before = m.weight.detach().clone()
    compiled = module.compile(f, backend="eager")
    with pytest.raises(module._dynamo.exc.UncapturedHigherOrderOpError):
        compiled(module.ones(2, 3), module.tensor(False))
    assert module.equal(m.weight.detach(), before)


@pytest.mark.parametrize("module", [torch, ember], ids=["torch", "ember"])
def test_eager_cond_with_a_step_raises_too(module):
    """torch runs an eager ``cond`` through its compiler: it raises as compiled; ember ran the
    branch not taken on copies of the operands for its reads, and with it the step (-0.2 each)."""
    m, f = _step(module)
    before = m.weight.detach().clone()
    for pred in (False, True):
        with pytest.raises(module._dynamo.exc.UncapturedHigherOrderOpError):
            f(module.ones(2, 3), module.tensor(pred))
        assert module.equal(m.weight.detach(), before)
