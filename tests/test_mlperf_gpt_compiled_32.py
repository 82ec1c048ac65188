"""mlperf's compiled GPT rows (GPTROW32): KV-cache decoding compiled, beside eager and PyTorch.

Issue 10 asks for compiled rows "(time, tokens/s, compile time) beside eager, torch eager and,
where installed, torch.compile"; only the MLP and LeNet-5 had them. The GPT's ``compiled`` row is
now greedy decoding through ``ember.compile`` of the static-KV-cache step
(``ember.models.gpt.StaticKVDecoder``, bench_compile's ``gpt_decode_token``): one graph per batch
size, the same tokens as ``generate(top_k=1)``; PyTorch's copy of the GPT gives ``torch eager``
(and ``torch.compile`` of the same step where not a fast run). A tiny GPT on two Q&A pairs.
"""
import numpy as np
import pytest

import ember
from ember._dynamo.utils import counters
from ember.milestones import mlperf
from ember.models.gpt import GPT, GPTConfig, StaticKVDecoder
from ember.text import SPECIAL_TOKENS, CharTokenizer, format_qa, load_qa


@pytest.fixture(scope="module")
def tiny():
    """A tiny untrained GPT (eval mode) with the milestone's tokenizer and 2 training pairs (at
    most 55 tokens a pair; 64 positions)."""
    pairs = load_qa("train")[:2]
    tokenizer = CharTokenizer.from_corpus(map(format_qa, load_qa("train")), SPECIAL_TOKENS)
    ember.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, block_size=64,
                          n_layer=1, n_head=2, n_embd=16)).eval()
    return model, tokenizer, pairs


def test_static_cache_decoding_gives_generates_tokens_in_one_graph_per_batch_size():
    ember.compiler.reset()
    counters.clear()
    ember.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=16, n_layer=1, n_head=2, n_embd=8)).eval()
    decoder = StaticKVDecoder(model)
    compiled = ember.compile(decoder.decode, dynamic=False)
    idx = ember.randint(0, 20, (3, 5))
    for prompt in (idx, idx[:1], idx[:, 2:], idx[:, :1]):  # prefilled or not
        want = model.generate(prompt, 6, top_k=1)
        assert ember.equal(decoder.generate(prompt, 6), want)
        assert ember.equal(decoder.generate(prompt, 6, decode=compiled), want)
    assert counters["stats"]["unique_graphs"] == 2  # batch 3 and batch 1 (as torch.compile: 2)
    with pytest.raises(ValueError, match="a prompt of 5 tokens plus max_new_tokens=12 exceeds block_size 16"):
        decoder.generate(idx, 12)
    ember.compiler.reset()


def test_gpt_rows_have_compiled_and_torch_eager_beside_eager(tiny, capsys):
    pytest.importorskip("torch")
    model, tokenizer, pairs = tiny
    made = mlperf.gpt_variants(model, mlperf.in_torch(compile_too=False))
    assert capsys.readouterr().out == "mlperf: fast run: no torch.compile rows (inductor compiles for 10-60 s)\n"
    assert list(made) == ["float32", "int8 dynamic", "50% pruned", "no KV cache", "compiled", "torch eager"]
    assert all(made[label][0] is model for label in ("float32", "no KV cache", "compiled", "torch eager"))
    prompt = ember.tensor([[tokenizer.bos_id] + tokenizer.encode(pairs[0]["question"])])
    want = model.generate(prompt, 8, top_k=1)
    for label in ("compiled", "torch eager"):
        got = made[label][1](prompt, 8)
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=label)

    ember.compiler.reset()
    settings = mlperf.Settings(True, 1, 1, 1, latency_calls=1, gpt_latency_calls=1, repeats=1)
    chosen = {label: made[label] for label in ("float32", "compiled", "torch eager")}
    rows = mlperf.measure_gpt(chosen, tokenizer, pairs, settings)
    assert [row.variant for row in rows] == list(chosen)
    eager, compiled, in_torch = rows
    assert compiled.compile_seconds > 0 and eager.compile_seconds is None and in_torch.compile_seconds is None
    assert compiled.quality == eager.quality == in_torch.quality
    assert compiled.throughput_unit == "tokens/s" and compiled.throughput > 0
    assert compiled.parameters == eager.parameters
    table = mlperf.format_report(rows).splitlines()
    assert table[-2].split()[:2] == ["GPT", "compiled"] and table[-2].endswith(f"{compiled.compile_seconds:.2f}")
    ember.compiler.reset()
