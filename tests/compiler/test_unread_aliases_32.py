"""A compiled bound method whose ``self`` holds a list of tensors its code never reads, one of
them passed in (issue 10, session 32): torch 2.13 compiles once; ember guarded which of all the
tensors ``self`` holds are the passed array, a pattern that moved with each call (8 graphs and a
recompile-limit warning in 10 calls). Only the attributes some code of the call names are guarded
now (as the modules' already were). A passed tensor the method also reads through ``self`` is
still told apart: values against torch's eager. Graphs against torch's ``CompileCounter``."""
import warnings

import torch
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters


def _holder(t):
    class Holder:  # a plain class: its method reads only its arguments
        def __init__(self):
            self.ts = [t.tensor([float(k)]) for k in range(16)]

        def step(self, x, p):
            return x * 2 + p
    return Holder()


def _reader(t):
    class Reader:  # its method reads one of the tensors held, which may be the one passed
        def __init__(self):
            self.ts = [t.tensor([float(k)]) for k in range(16)]

        def step(self, x, p):
            return x + p * self.ts[3]
    return Reader()


def _run(make, module, order):
    """The results and graph count of ``make(module).step`` compiled by ``module``, called with
    ``self.ts[k]`` for each k of ``order``."""
    h = make(module)
    if module is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        compiled, count = torch.compile(h.step, backend=counter, dynamic=False), lambda: counter.frame_count
    else:
        ember.compiler.reset()
        compiled, count = ember.compile(h.step, dynamic=False), lambda: counters["stats"]["unique_graphs"]
    x, out = module.zeros(1), []
    for k in order:
        x = compiled(x, h.ts[k])
        out.append(x.item())
    return out, count()


def test_an_unread_list_of_tensors_held_by_self_is_no_guard():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no recompile-limit warning)
        got = _run(_holder, ember, range(10))
    assert got == _run(_holder, torch, range(10)) == ([float(2 ** (k + 1) - k - 2) for k in range(10)], 1)


def test_a_passed_tensor_read_through_self_too_is_told_apart():
    order = [1, 3, 2, 3, 4, 3, 3, 5]  # (p is self.ts[3]: x + p * p)
    out, count = _run(_reader, ember, order)
    expected, torch_count = _run(_reader, torch, order)
    assert out == expected and torch_count == 2
    assert 2 <= count <= 5  # (ember: one graph per aliasing of the list read, 5 here; torch: 2)


def test_static_kv_decoder_with_its_positions_list_compiles_once():
    from ember.models import gpt as g
    ember.manual_seed(0)
    m = g.GPT(g.GPTConfig(vocab_size=20, block_size=16, n_layer=1, n_head=2, n_embd=8)).eval()
    d = g.StaticKVDecoder(m)
    d.positions = [ember.tensor([k]) for k in range(16)]
    ember.compiler.reset()
    c = ember.compile(d.decode, dynamic=False)
    caches, tok, eager_caches, eager_tok = d.new_caches(1), ember.tensor([[1]]), d.new_caches(1), ember.tensor([[1]])
    with ember.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in range(6):
            tok, eager_tok = c(tok, d.positions[k], caches), d.decode(eager_tok, d.positions[k], eager_caches)
            assert tok.tolist() == eager_tok.tolist()
    assert counters["stats"]["unique_graphs"] == 1  # (torch 2.13 on gpt.in_torch(): 1)
