"""Module attributes guarded where the captured code could read them (session 25).

torch's dynamo guards the attributes it traced a read of, so modules of one class that differ in
an attribute their forward never reads (a block's ``self.index``) share one graph; ember guarded
every attribute value (12 blocks compiled one by one: 12 graphs). A read attribute changed after
compiling must still recompile (a silent stale value otherwise), and so must every attribute
where the code reads attributes by a name computed on the stack (``getattr(self, "a" + s)``).
"""
import pytest

import ember

torch = pytest.importorskip("torch")
import torch._dynamo.testing  # noqa: E402


def _blocks(lib, forward):
    class Block(lib.nn.Module):
        def __init__(self, i):
            super().__init__()
            self.index, self.scale, self.lin = i, 1.0, lib.nn.Linear(4, 4)
    Block.forward = forward
    lib.manual_seed(0)
    return [Block(i) for i in range(5)]


def _scaled(self, x):
    return self.lin(x) * self.scale


def _indexed(self, x):
    return self.lin(x) * self.index


def _computed(self, x):
    return self.lin(x) * getattr(self, "sc" + "ale")


def _run(lib, forward):
    """Each block compiled on its own, run, then block 2's ``scale`` changed and run again:
    the graphs captured and the results."""
    blocks = _blocks(lib, forward)
    x = lib.ones(2, 4)
    for b in blocks:
        b.compile()
    before = lib._dynamo.utils.counters["stats"]["unique_graphs"] if lib is ember else None
    outs = [b(x).sum().item() for b in blocks]
    blocks[2].scale = 3.0
    outs += [blocks[2](x).sum().item(), blocks[3](x).sum().item()]
    return outs, before


@pytest.mark.parametrize("forward, graphs", [(_scaled, 2), (_indexed, 5), (_computed, 2)])
def test_graphs_per_attribute_read_and_results_as_torchs(forward, graphs):
    ember.compiler.reset()
    ember._dynamo.utils.counters.clear()
    ours, _ = _run(ember, forward)
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    blocks = _blocks(torch, forward)
    x = torch.ones(2, 4)
    theirs = [torch.compile(b, backend=counter)(x).sum().item() for b in blocks]
    blocks[2].scale = 3.0
    theirs += [torch.compile(blocks[2], backend=counter)(x).sum().item(), blocks[3](x).sum().item()]
    assert ours == pytest.approx(theirs, rel=1e-6)
    # the unread index shares one graph (then the changed scale: one more), as torch's frames;
    # a read index: a graph per block (the scale unread); getattr with a name Python folds to a
    # constant reads that name only (session 26; a name computed at run time: test_breaks_26.py)
    assert ember._dynamo.utils.counters["stats"]["unique_graphs"] == graphs
    assert counter.frame_count == graphs


def test_a_read_attribute_of_an_inner_module_still_recompiles():
    ember.compiler.reset()

    class Inner(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.p, self.unused = 2.0, "a"

        def forward(self, x):
            return x * self.p
    inner = Inner()
    outer = ember.nn.Sequential(inner)
    step = ember.compile(outer)
    x = ember.ones(3)
    assert step(x).tolist() == [2.0] * 3
    inner.unused = "b"  # not read: the same graph
    assert step(x).tolist() == [2.0] * 3
    inner.p = 5.0
    assert step(x).tolist() == [5.0] * 3
