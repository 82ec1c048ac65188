"""A makemore-style character MLP (Karpathy's makemore part 3 idioms: a Generator passed to
randn/randint/multinomial, hand-written batch norm with running stats under no_grad,
``p.data += -lr * p.grad``, cross_entropy, sampling) runs under ember exactly as under torch
2.13: the same losses step by step and the same sampled words, from the same seed."""
import torch

import ember

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia", "harper", "evelyn"] * 10


def train_and_sample(lib, steps=60, block_size=3):
    F = lib.nn.functional
    chars = sorted(set("".join(WORDS)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    itos = {i: s for s, i in stoi.items()}
    xs, ys = [], []
    for w in WORDS:
        context = [0] * block_size
        for ch in w + ".":
            xs.append(context)
            ys.append(stoi[ch])
            context = context[1:] + [stoi[ch]]
    X, Y = lib.tensor(xs), lib.tensor(ys)
    g = lib.Generator().manual_seed(2147483647)
    C = lib.randn((len(itos), 10), generator=g)
    W1 = lib.randn((30, 64), generator=g) * (5 / 3) / 30 ** 0.5
    W2 = lib.randn((64, len(itos)), generator=g) * 0.01
    b2 = lib.zeros(len(itos))
    gain, bias = lib.ones((1, 64)), lib.zeros((1, 64))
    running_mean = lib.zeros((1, 64))
    params = [C, W1, W2, b2, gain, bias]
    for p in params:
        p.requires_grad = True
    losses = []
    for i in range(steps):
        ix = lib.randint(0, X.shape[0], (32,), generator=g)
        pre = C[X[ix]].view(32, -1) @ W1
        mean, std = pre.mean(0, keepdim=True), pre.std(0, keepdim=True)
        with lib.no_grad():
            running_mean = 0.999 * running_mean + 0.001 * mean
        loss = F.cross_entropy(lib.tanh(gain * (pre - mean) / std + bias) @ W2 + b2, Y[ix])
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data += -0.1 * p.grad
        losses.append(loss.item())
    words = []
    for _ in range(3):
        out, context = [], [0] * block_size
        while len(out) < 20:
            pre = C[lib.tensor([context])].view(1, -1) @ W1
            probs = F.softmax(lib.tanh(gain * (pre - running_mean) + bias) @ W2 + b2, dim=1)
            ix = lib.multinomial(probs, num_samples=1, generator=g).item()
            context = context[1:] + [ix]
            out.append(ix)
            if ix == 0:
                break
        words.append("".join(itos[i] for i in out))
    return losses, words


def test_makemore_style_training_matches_torch_step_by_step():
    e_losses, e_words = train_and_sample(ember)
    t_losses, t_words = train_and_sample(torch)
    assert max(abs(a - b) for a, b in zip(e_losses, t_losses)) < 1e-4
    assert e_losses[-1] < e_losses[0] - 1.0  # it learned
    assert e_words == t_words
