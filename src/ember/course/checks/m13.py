"""Module 13, transformers: the GPT's feed-forward network and pre-norm block, against the same
arithmetic in torch on the same weights (the block's attention, graded in module 12, is taken
as given: its output is fed to torch as numbers)."""
import torch

import ember
from ember.models.gpt import GPTConfig, MLP, Block

from . import check, close

CONFIG = GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=2, n_embd=8, dropout=0.0)


def _t(x):
    return torch.tensor(x.detach().numpy())


@check("13/mlp-forward", points=2)
def mlp_forward():
    ember.manual_seed(13)
    mlp = MLP(CONFIG)
    x = ember.randn(2, 3, 8)
    got = mlp(x)
    h = torch.nn.functional.gelu(_t(x) @ _t(mlp.fc.weight).T + _t(mlp.fc.bias))
    expected = h @ _t(mlp.proj.weight).T + _t(mlp.proj.bias)
    close("MLP(n_embd=8)(x), x of shape (2, 3, 8)", got, expected, rtol=1e-5, atol=1e-6, input=x)


@check("13/block-forward", points=2)
def block_forward():
    ember.manual_seed(13)
    block = Block(CONFIG)
    x = ember.randn(2, 4, 8)
    got = block(x)
    ln = torch.nn.functional.layer_norm
    x1 = _t(x) + _t(block.attn(block.ln_1(x)))
    h = ln(x1, (8,), _t(block.ln_2.weight), _t(block.ln_2.bias))
    expected = x1 + _t(block.mlp(ember.tensor(h.numpy())))
    close("Block(n_embd=8)(x), x of shape (2, 4, 8)", got, expected, rtol=1e-5, atol=1e-6, input=x)
