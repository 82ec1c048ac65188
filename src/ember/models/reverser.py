"""A one-block attention model that outputs one symbol per input position.

The smallest model that shows what attention adds: token and learned position embeddings,
one multi-head self-attention layer (every position sees every other; no mask) with a
residual connection, and a linear read-out per position. Without attention no position
could see any other, so a task such as reversing a sequence, where output ``t`` is input
``T-1-t``, is impossible; with it, position ``t`` learns to look up position ``T-1-t`` and
copy its symbol (Vaswani et al., *Attention Is All You Need*, 2017).
"""
import ember as torch
from ember import nn


class Reverser(nn.Module):
    """Sequence-to-sequence of the same length through one attention block.

    Args:
        vocab_size: number of symbols ``V``.
        length: sequence length ``T`` (the learned positions).
        d_model: embedding width ``C``.
        n_head: attention heads; must divide ``d_model``.

    Shapes: input ``(B, T)`` int64 symbols; output ``(B, T, V)`` logits.

    Example::

        >>> import ember as torch
        >>> from ember.models.reverser import Reverser
        >>> model = Reverser(vocab_size=10, length=8)
        >>> tuple(model(torch.zeros(2, 8, dtype=torch.long)).shape)
        (2, 8, 10)
    """

    def __init__(self, vocab_size, length, d_model=32, n_head=4):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(length, d_model)
        self.ln_1 = nn.LayerNorm(d_model)
        self.attention = nn.MultiheadAttention(d_model, n_head, batch_first=True)
        self.ln_2 = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, idx):
        positions = torch.arange(idx.shape[1], device=idx.device)
        x = self.token_embedding(idx) + self.position_embedding(positions)
        h = self.ln_1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return self.head(self.ln_2(x))
