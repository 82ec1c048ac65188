"""ember.models.gpt: the same model file under ember and under real torch (copied weights give
the same logits, loss and gradients), KV-cached generation, size errors, weight tying."""
import importlib.util
import re
import sys

import numpy as np
import pytest

import ember
from ember.models import gpt
from ember.models.gpt import GPT, GPTConfig, KVCache

torch = pytest.importorskip("torch")

CONFIG = GPTConfig(vocab_size=13, block_size=12, n_layer=2, n_head=2, n_embd=16)


def torch_gpt_module():
    """ember/models/gpt.py executed with its three imports pointing at torch instead of ember."""
    name = "gpt_under_torch"
    if name not in sys.modules:
        with open(gpt.__file__, encoding="utf-8") as file:
            source = file.read()
        source, count = re.subn(r"^(import|from) ember\b", r"\1 torch", source, flags=re.MULTILINE)
        assert count == 3
        spec = importlib.util.spec_from_loader(name, loader=None)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up by name
        exec(compile(source, gpt.__file__, "exec"), module.__dict__)
    return sys.modules[name]


def twins(config=CONFIG, seed=0):
    """An ember GPT and a torch GPT from the same file with the ember model's weights."""
    ember.manual_seed(seed)
    model = GPT(config)
    module = torch_gpt_module()
    twin = module.GPT(module.GPTConfig(**config.to_dict()))
    twin.load_state_dict({k: torch.from_numpy(np.array(v._data, copy=True))
                          for k, v in model.state_dict().items()})
    return model, twin


def batch(config=CONFIG, B=3, T=10, seed=1):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, config.vocab_size, (B, T))
    targets = rng.integers(0, config.vocab_size, (B, T))
    targets[0, :4] = -100
    return idx, targets


def test_forward_loss_and_gradients_match_torch():
    model, twin = twins()
    idx, targets = batch()
    logits, loss = model(ember.tensor(idx), ember.tensor(targets))
    t_logits, t_loss = twin(torch.tensor(idx), torch.tensor(targets))
    np.testing.assert_allclose(logits.detach().numpy(), t_logits.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(loss.item(), t_loss.item(), rtol=1e-5)
    loss.backward()
    t_loss.backward()
    t_params = dict(twin.named_parameters())
    names = [name for name, _ in model.named_parameters()]
    assert names == list(t_params)
    for name, parameter in model.named_parameters():
        np.testing.assert_allclose(parameter.grad.numpy(), t_params[name].grad.numpy(),
                                   rtol=1e-4, atol=1e-6, err_msg=name)


def test_forward_without_targets_and_in_train_mode_with_dropout():
    model, _ = twins(GPTConfig(**{**CONFIG.to_dict(), "dropout": 0.1}))
    idx, _ = batch()
    logits, loss = model(ember.tensor(idx))
    assert loss is None and tuple(logits.shape) == (3, 10, CONFIG.vocab_size)
    model.eval()
    again, _ = model(ember.tensor(idx))
    assert not np.allclose(again.detach().numpy(), logits.detach().numpy())
    np.testing.assert_array_equal(model(ember.tensor(idx))[0].detach().numpy(), again.detach().numpy())


def test_weight_tying_is_one_parameter():
    model = GPT(CONFIG)
    assert model.lm_head.weight is model.token_embedding.weight
    names = [name for name, _ in model.named_parameters()]
    assert "token_embedding.weight" in names and "lm_head.weight" not in names
    per_layer = 12 * CONFIG.n_embd ** 2 + 13 * CONFIG.n_embd  # weights, biases and norms
    expected = (CONFIG.vocab_size + CONFIG.block_size) * CONFIG.n_embd + CONFIG.n_layer * per_layer \
        + 2 * CONFIG.n_embd
    assert sum(p.numel() for p in model.parameters()) == expected
    logits, loss = model(ember.tensor([[1, 2]]), ember.tensor([[2, 3]]))
    loss.backward()
    assert model.token_embedding.weight.grad is model.lm_head.weight.grad


def test_gpt2_initialisation():
    ember.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=256, block_size=64, n_layer=4, n_head=4, n_embd=128))
    assert float(model.blocks[0].attn.qkv.weight.std()) == pytest.approx(0.02, rel=0.05)
    assert float(model.blocks[0].mlp.proj.weight.std()) == pytest.approx(0.02 / 8 ** 0.5, rel=0.05)
    assert float(model.blocks[1].attn.qkv.bias.abs().max()) == 0.0
    assert float(model.token_embedding.weight.std()) == pytest.approx(0.02, rel=0.05)


def test_kv_cache_greedy_tokens_equal_full_recompute():
    model, twin = twins()
    model.eval()
    twin.eval()
    idx, _ = batch(B=2, T=3)
    for kwargs in ({"top_k": 1}, {"temperature": 0.0}):
        cached = model.generate(ember.tensor(idx), 9, use_cache=True, **kwargs)
        full = model.generate(ember.tensor(idx), 9, use_cache=False, **kwargs)
        np.testing.assert_array_equal(cached.numpy(), full.numpy())
        assert tuple(cached.shape) == (2, 12)
    reference = twin.generate(torch.tensor(idx), 9, top_k=1)
    np.testing.assert_array_equal(cached.numpy(), reference.numpy())


def test_cached_logits_equal_full_forward():
    model, _ = twins()
    model.eval()
    idx, _ = batch(B=2, T=10)
    full, _ = model(ember.tensor(idx))
    caches = model.new_caches(2)
    with ember.no_grad():
        pieces = [model.lm_head(model.hidden_states(ember.tensor(idx[:, a:b]), caches))
                  for a, b in ((0, 4), (4, 5), (5, 10))]  # prefill, one step, a chunk of five
    np.testing.assert_allclose(ember.cat(pieces, dim=1).numpy(), full.detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    assert caches[0].length == 10 and tuple(caches[0].keys.shape) == (2, 2, 12, 8)


def test_sampling_respects_top_k_and_stop_token():
    model, _ = twins()
    model.eval()
    prompt = ember.tensor([[1, 2]])
    logits, _ = model(prompt)
    top_two = set(logits[0, -1].topk(2).indices.tolist())
    ember.manual_seed(3)
    firsts = {int(model.generate(prompt, 1, temperature=5.0, top_k=2)[0, -1]) for _ in range(40)}
    assert firsts == top_two
    greedy = model.generate(prompt, 8, top_k=1)
    stop = int(greedy[0, 2])
    stopped = model.generate(prompt, 8, top_k=1, stop_token=stop)
    assert stopped.tolist() == [greedy[0, :3].tolist()]


def test_too_long_for_the_block_size():
    model = GPT(CONFIG)
    with pytest.raises(ValueError, match="Cannot forward sequence of length 13, block size is only 12"):
        model(ember.zeros(1, 13, dtype=ember.long))
    caches = model.new_caches(1)
    with ember.no_grad():
        model.hidden_states(ember.zeros(1, 8, dtype=ember.long), caches)
        with pytest.raises(ValueError, match="Cannot forward sequence of length 13, block size is only 12"):
            model.hidden_states(ember.zeros(1, 5, dtype=ember.long), caches)  # 8 cached + 5
    for prompt, new in ((13, 1), (5, 8)):  # with the cache, prompt and new tokens must fit
        with pytest.raises(ValueError, match=f"a prompt of {prompt} tokens plus max_new_tokens={new} "
                                             "exceeds block_size 12"):
            model.generate(ember.zeros(1, prompt, dtype=ember.long), new)
    cache = KVCache(1, 2, 4, 8, ember.float32, "cpu")
    cache.append(ember.zeros(1, 2, 3, 8), ember.zeros(1, 2, 3, 8))
    with pytest.raises(RuntimeError, match="cannot add 2 after 3"):
        cache.append(ember.zeros(1, 2, 2, 8), ember.zeros(1, 2, 2, 8))


def test_uncached_generation_crops_to_the_last_block_size_tokens():
    model, twin = twins()
    model.eval()
    twin.eval()
    prompt = np.random.default_rng(2).integers(0, CONFIG.vocab_size, (2, 15))  # longer than 12
    out = model.generate(ember.tensor(prompt), 6, top_k=1, use_cache=False)
    assert tuple(out.shape) == (2, 21)
    np.testing.assert_array_equal(out[:, :15].numpy(), prompt)
    for step in range(6):  # each new token is the argmax after the last 12 tokens before it
        window = out[:, step + 3:step + 15]
        logits, _ = model(window)
        np.testing.assert_array_equal(out[:, 15 + step].numpy(), logits[:, -1].argmax(-1).numpy())
    # nanoGPT's crop under torch (the same file) gives the same tokens
    reference = twin.generate(torch.tensor(prompt), 6, top_k=1, use_cache=False)
    np.testing.assert_array_equal(out.numpy(), reference.numpy())
    # a prompt that fits but a generation that does not: the window starts sliding mid-way
    short = model.generate(ember.tensor(prompt[:, :9]), 6, top_k=1, use_cache=False)
    np.testing.assert_array_equal(short[:, :12].numpy(),
                                  model.generate(ember.tensor(prompt[:, :9]), 3, top_k=1).numpy())
    logits, _ = model(short[:, 2:14])
    np.testing.assert_array_equal(short[:, 14].numpy(), logits[:, -1].argmax(-1).numpy())


def test_config_checks_heads_and_round_trips():
    with pytest.raises(ValueError, match=r"n_head \(3\) must divide n_embd \(16\)"):
        GPTConfig(n_head=3, n_embd=16)
    assert GPTConfig(**CONFIG.to_dict()) == CONFIG
