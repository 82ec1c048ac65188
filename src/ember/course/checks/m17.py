"""Module 17, the KV cache: appending keys and values in place, checked against concatenation
and against generation without the cache (the same greedy tokens)."""
import numpy as np

import ember
from ember.models.gpt import GPT, GPTConfig, KVCache

from . import check, close, raises_like, same


@check("17/kv-append", points=3)
def kv_append():
    rng = np.random.default_rng(17)
    cache = KVCache(2, 3, 6, 4, ember.float32, "cpu")
    seen_k, seen_v = [], []
    for steps in (2, 1, 3):
        k = ember.tensor(rng.standard_normal((2, 3, steps, 4)).astype(np.float32))
        v = ember.tensor(rng.standard_normal((2, 3, steps, 4)).astype(np.float32))
        keys, values = cache.append(k, v)
        seen_k.append(k.numpy())
        seen_v.append(v.numpy())
        close(f"keys after appending {steps} positions", keys, np.concatenate(seen_k, axis=2))
        close(f"values after appending {steps} positions", values, np.concatenate(seen_v, axis=2))
    same("cache.length after 6 positions", cache.length, 6)
    raises_like("appending past block_size", lambda: cache.append(k[:, :, :1], v[:, :, :1]), RuntimeError)
    ember.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=8)).eval()
    prompt = ember.tensor([[1, 2, 3]])
    cached = model.generate(prompt, 8, top_k=1, use_cache=True)
    plain = model.generate(prompt, 8, top_k=1, use_cache=False)
    same("greedy tokens with the cache vs without", cached.tolist(), plain.tolist())
