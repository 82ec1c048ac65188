"""Language-model programs written for PyTorch run unchanged under ``import ember as torch``.

The programs are real module files next to this one, in plain torch idiom:

1. ``gpt_script.py``: a nanoGPT/minGPT-style character GPT (ModuleDict/ModuleList, a causal
   mask buffer with masked_fill + softmax or scaled_dot_product_attention(is_causal=True),
   GELU MLP, tied wte/lm_head, ``_init_weights`` via ``apply``, AdamW decay/no-decay groups,
   cosine lr set on ``param_groups``, clip_grad_norm_, ``@torch.no_grad()`` top-k generate
   with ``torch.multinomial``), trained on the bundled character corpus.
2. ``word_lm_script.py``: pytorch/examples' word-level LSTM language model (tied weights,
   truncated BPTT with detached hidden state, manual SGD on ``p.data``).

Each is loaded twice, with its ``import torch`` bound to real torch and to ember; both runs
start from the same weights and see the same batches, so their loss curves must agree.
"""
import builtins
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent


def load_script(name, lib):
    """Executes ``HERE/name`` as a fresh module whose ``torch`` imports resolve to ``lib``."""
    real_import = builtins.__import__

    def bound_import(module, globals=None, locals=None, fromlist=(), level=0):
        if module == "torch" or module.startswith("torch."):
            module = lib + module[len("torch"):]
        return real_import(module, globals, locals, fromlist, level)

    module_name = f"{pathlib.Path(name).stem}_under_{lib}"
    spec = importlib.util.spec_from_file_location(module_name, HERE / name)
    module = importlib.util.module_from_spec(spec)
    module.__builtins__ = dict(vars(builtins), __import__=bound_import)
    sys.modules[module_name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[module_name]
    return module


@pytest.fixture(scope="module")
def char_data():
    from ember.text import CharTokenizer, load_corpus
    train_text, val_text = load_corpus("train"), load_corpus("validation")
    tokenizer = CharTokenizer.from_corpus(train_text + val_text)
    return tokenizer, tokenizer.encode(train_text), tokenizer.encode(val_text)


def test_script_really_runs_on_ember():
    pytest.importorskip("torch")
    import ember
    module = load_script("gpt_script.py", "ember")
    assert module.torch is ember and module.nn is ember.nn and module.F is ember.nn.functional
    assert isinstance(module.GPT(module.GPTConfig()).lm_head.weight, ember.Tensor)


def test_nanogpt_trains_like_torch(char_data):
    torch = pytest.importorskip("torch")
    import ember
    tokenizer, train_ids, val_ids = char_data
    steps, batch_size = 150, 8
    results = {}
    for lib in ("torch", "ember"):
        script = load_script("gpt_script.py", lib)
        config = script.GPTConfig(vocab_size=tokenizer.vocab_size, block_size=16)
        if lib == "torch":
            offsets = np.random.default_rng(0).integers(0, len(train_ids) - config.block_size,
                                                        (steps, batch_size))
            torch.manual_seed(0)
            weights = {k: v.numpy().copy() for k, v in script.GPT(config).state_dict().items()}
        mod = {"torch": torch, "ember": ember}[lib]
        results[lib] = script.train(train_ids, val_ids, config, steps, batch_size, offsets=offsets,
                                    init_state={k: mod.tensor(v) for k, v in weights.items()})
    torch_losses, torch_val, _, _ = results["torch"]
    ember_losses, ember_val, sample, model = results["ember"]
    initial = np.log(tokenizer.vocab_size)
    assert abs(torch_losses[0] - initial) < 0.05
    np.testing.assert_allclose(ember_losses[:20], torch_losses[:20], rtol=0, atol=1e-4)
    np.testing.assert_allclose(ember_losses, torch_losses, rtol=0, atol=2e-2)
    for losses in (torch_losses, ember_losses):
        assert np.mean(losses[-10:]) < 0.7 * initial, np.mean(losses[-10:])
    assert ember_val < 0.75 * initial and abs(ember_val - torch_val) < 0.2, (ember_val, torch_val)
    # weight tying survives load_state_dict and training
    assert model.transformer.wte.weight is model.lm_head.weight
    assert len(sample) == 1 + 2 * config.block_size
    assert all(0 <= t < tokenizer.vocab_size for t in sample)


def test_nanogpt_flash_path_matches_masked_path(char_data):
    """``scaled_dot_product_attention(is_causal=True)`` gives the masked-softmax model's loss
    and gradients, under ember as under torch."""
    torch = pytest.importorskip("torch")
    import ember
    tokenizer, train_ids, _ = char_data
    script = load_script("gpt_script.py", "torch")
    config = script.GPTConfig(vocab_size=tokenizer.vocab_size)
    torch.manual_seed(0)
    weights = {k: v.numpy().copy() for k, v in script.GPT(config).state_dict().items()}
    ids = np.asarray(train_ids[:4 * (config.block_size + 1)]).reshape(4, -1)
    out = {}
    for lib, mod in (("torch", torch), ("ember", ember)):
        script = load_script("gpt_script.py", lib)
        for flash in (False, True):
            model = script.GPT(script.GPTConfig(vocab_size=tokenizer.vocab_size, flash=flash))
            state = {k: mod.tensor(v) for k, v in weights.items() if flash is False or
                     not k.endswith(".attn.bias")}
            model.load_state_dict(state)
            _, loss = model(mod.tensor(ids[:, :-1]), mod.tensor(ids[:, 1:]))
            loss.backward()
            out[lib, flash] = (loss.item(), model.lm_head.weight.grad.numpy().copy())
    for key in out:
        assert abs(out[key][0] - out["torch", False][0]) < 1e-5, (key, out[key][0])
        np.testing.assert_allclose(out[key][1], out["torch", False][1], rtol=1e-4, atol=1e-6)


def test_word_level_lstm_lm_trains_like_torch():
    torch = pytest.importorskip("torch")
    import ember
    from ember.text import load_corpus
    train_text, valid_text = load_corpus("train")[:20000], load_corpus("validation")[:3000]
    script = load_script("word_lm_script.py", "torch")
    ntokens = len(script.Corpus(train_text, valid_text).dictionary)
    torch.manual_seed(0)
    model = script.RNNModel("LSTM", ntokens, 32, 32, 2, 0.0, tie_weights=True)
    weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    results = {}
    for lib, mod in (("torch", torch), ("ember", ember)):
        script = load_script("word_lm_script.py", lib)
        results[lib] = script.train(train_text, valid_text, epochs=3, dropout=0.0,
                                    init_state={k: mod.tensor(v) for k, v in weights.items()})
    torch_losses, torch_val, _ = results["torch"]
    ember_losses, ember_val, ember_model = results["ember"]
    assert len(ember_losses) == len(torch_losses) == 60
    assert abs(torch_losses[0] - np.log(ntokens)) < 0.1
    np.testing.assert_allclose(ember_losses[:10], torch_losses[:10], rtol=0, atol=1e-4)
    np.testing.assert_allclose(ember_losses, torch_losses, rtol=0, atol=1e-2)
    np.testing.assert_allclose(ember_val, torch_val, rtol=0, atol=1e-2)
    assert ember_val[-1] < ember_val[0] < np.log(ntokens) - 0.8, ember_val
    assert ember_model.decoder.weight is ember_model.encoder.weight
