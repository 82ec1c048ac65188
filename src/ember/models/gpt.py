"""A decoder-only transformer language model (GPT), with key–value-cached generation.

The architecture is GPT-2's (Radford et al., *Language Models are Unsupervised Multitask
Learners*, 2019), which is the decoder of Vaswani et al., *Attention Is All You Need* (2017)
with the layer norms moved before each sublayer ("pre-norm"):

    x = token_embedding(idx) + position_embedding(0..T-1)
    for each block:  x = x + attention(ln_1(x));  x = x + mlp(ln_2(x))
    logits = lm_head(ln_f(x))          # lm_head shares its weight with token_embedding

Attention is causal: position t sees positions 0..t. Generation keeps, per layer, the keys
and values of every position seen so far in a :class:`KVCache`, so each new token costs one
position's work instead of a pass over the whole context.

The file uses only PyTorch's API through the three imports below: with them reading
``import torch`` / ``from torch import nn`` / ``from torch.nn import functional as F`` it is
a PyTorch model (:func:`in_torch`), which is how the tests, ``benchmarks/bench_gpt.py`` and the
mlperf milestone compare the two.
"""
import importlib.util
import math
import re
import sys
from dataclasses import asdict, dataclass

import ember as torch
from ember import nn
from ember.nn import functional as F


@dataclass
class GPTConfig:
    """The sizes of a :class:`GPT`.

    Attributes:
        vocab_size: number of token ids ``V``.
        block_size: the longest sequence ``T`` the model reads (its learned positions).
        n_layer: number of transformer blocks.
        n_head: attention heads per block; must divide ``n_embd``.
        n_embd: width ``C`` of the residual stream.
        dropout: dropout probability on embeddings, attention weights and sublayer outputs
            (training only).
        bias: whether linear layers and layer norms have biases.
    """

    vocab_size: int = 96
    block_size: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True

    def __post_init__(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"n_head ({self.n_head}) must divide n_embd ({self.n_embd})")

    def to_dict(self):
        """The sizes as a plain dict (for checkpoints); ``GPTConfig(**d)`` inverts it."""
        return asdict(self)


class KVCache:
    """One attention layer's keys and values of the positions seen so far.

    Storage for all ``block_size`` positions is allocated up front; :meth:`append` writes a
    step's keys and values in place after the ones already there, so generating a token
    allocates no cache memory. Keys and values are the two halves of one ``storage``, so
    :meth:`append_stacked` writes both with one copy when they arrive stacked.

    Shapes: ``storage`` is ``(B, 2, n_head, block_size, head_dim)`` (the layout in which one
    position's qkv projection holds its keys and values); ``keys`` and ``values`` are its
    halves, ``(B, n_head, block_size, head_dim)``; the first ``length`` positions hold data.
    """

    def __init__(self, batch_size, n_head, block_size, head_dim, dtype, device):
        self.storage = torch.zeros((batch_size, 2, n_head, block_size, head_dim), dtype=dtype,
                                   device=device)
        self.length = 0

    @property
    def keys(self):
        """The keys half of ``storage`` (a view)."""
        return self.storage[:, 0]

    @property
    def values(self):
        """The values half of ``storage`` (a view)."""
        return self.storage[:, 1]

    def append(self, k, v):
        """Store ``k`` and ``v`` (``(B, n_head, T, head_dim)``) after the cached positions.

        Returns:
            ``(keys, values)``: views of every cached position, ``(B, n_head, length, head_dim)``.

        Raises:
            RuntimeError: the cache would hold more than ``block_size`` positions.
        """
        # course:begin 17/kv-append
        # hint: self._reserve(T) gives (start, end) of the new positions; write k and v there in
        # hint: self.storage[:, 0] and self.storage[:, 1] in place, then return views of positions [0, end)
        start, end = self._reserve(k.shape[2])
        # copy_ into the views writes just these positions (an indexed assignment may build a
        # new cache-sized array first).
        self.storage[:, 0, :, start:end].copy_(k)
        self.storage[:, 1, :, start:end].copy_(v)
        return self.storage[:, 0, :, :end], self.storage[:, 1, :, :end]
        # course:end 17/kv-append

    def append_stacked(self, kv):
        """:meth:`append` for keys and values stacked as ``kv`` ``(B, 2, n_head, T, head_dim)``."""
        start, end = self._reserve(kv.shape[3])
        self.storage[:, :, :, start:end].copy_(kv)
        return self.storage[:, 0, :, :end], self.storage[:, 1, :, :end]

    def _reserve(self, count):
        """``(start, end)`` of ``count`` new positions, counted as held from now on."""
        start, end = self.length, self.length + count
        if end > self.storage.shape[3]:
            raise RuntimeError(f"KV cache holds {self.storage.shape[3]} positions (block_size); "
                               f"cannot add {count} after {start}")
        self.length = end
        return start, end


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position t attends to positions 0..t.

    Shapes: input and output ``(B, T, C)``.
    """

    def __init__(self, config):
        super().__init__()
        self.n_head = config.n_head
        self.dropout = config.dropout
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x, cache=None):
        B, T, C = x.shape
        # (B, T, 3C) -> 3 x (B, n_head, T, head_dim): each head attends on its own slice of C
        # (one view and one permute for all three, instead of a split and three of each). One
        # position (a cached decoding step) is already in that order: the view alone does it.
        past = 0 if cache is None else cache.length
        if T == 1:
            qkv = self.qkv(x).view(B, 3, self.n_head, T, C // self.n_head)
            q = qkv[:, 0]
            if cache is None:
                k, v = qkv[:, 1], qkv[:, 2]
            else:  # keys and values stacked as the cache holds them: one copy
                k, v = cache.append_stacked(qkv[:, 1:])
        else:
            qkv = self.qkv(x).view(B, T, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            if cache is not None:
                k, v = cache.append(k, v)
        dropout_p = self.dropout if self.training else 0.0
        if past and T > 1:
            # New positions after cached ones: query i sees keys 0..past+i.
            mask = torch.ones(T, past + T, dtype=torch.bool, device=x.device).tril(diagonal=past)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        else:
            # A single new query may see every cached key; otherwise the mask is plain causal.
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=T > 1)
        # (B, n_head, T, head_dim) -> (B, T, C); for T == 1 the heads are already in order.
        y = y.reshape(B, T, C) if T == 1 else y.transpose(1, 2).reshape(B, T, C)
        return self.resid_dropout(self.proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward network: ``C -> 4C -> GELU -> C``. Shapes: ``(B, T, C)``."""

    def __init__(self, config):
        super().__init__()
        self.fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        # course:begin 13/mlp-forward
        # hint: C -> 4C (self.fc) -> GELU -> C (self.proj) -> dropout
        return self.dropout(self.proj(self.gelu(self.fc(x))))
        # course:end 13/mlp-forward


class Block(nn.Module):
    """A pre-norm transformer block: attention, then MLP, each added to the residual stream."""

    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x, cache=None):
        # course:begin 13/block-forward
        # hint: pre-norm residual block: x + attn(ln_1(x)), then that + mlp(ln_2(that)); pass cache to attn
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))
        # course:end 13/block-forward


class GPT(nn.Module):
    """A GPT language model: next-token logits for every position of a token sequence.

    Args:
        config: a :class:`GPTConfig`.

    Initialisation follows GPT-2: linear and embedding weights ~ N(0, 0.02²), biases zero,
    and the output projections of attention and MLP ~ N(0, (0.02 / sqrt(2·n_layer))²), since
    each block adds two of them to the residual stream. ``lm_head.weight`` *is*
    ``token_embedding.weight`` (one Parameter): the same matrix reads tokens in and scores
    them out.

    Example::

        >>> import ember as torch
        >>> from ember.models.gpt import GPT, GPTConfig
        >>> _ = torch.manual_seed(0)
        >>> model = GPT(GPTConfig(vocab_size=10, block_size=8, n_layer=1, n_head=2, n_embd=8))
        >>> logits, loss = model(torch.tensor([[1, 2, 3]]), targets=torch.tensor([[2, 3, 4]]))
        >>> tuple(logits.shape), loss.shape
        ((1, 3, 10), torch.Size([]))
    """

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.n_embd)
        self.position_embedding = nn.Embedding(config.block_size, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.token_embedding.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for block in self.blocks:
            for projection in (block.attn.proj, block.mlp.proj):
                nn.init.normal_(projection.weight, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def hidden_states(self, idx, caches=None):
        """The final layer-normed residual stream.

        Args:
            idx: token ids ``(B, T)``, int64.
            caches: None, or one :class:`KVCache` per block (from :meth:`new_caches`); ``idx``
                then continues the cached positions, and its keys and values are appended.

        Returns:
            ``(B, T, C)`` float tensor.

        Raises:
            ValueError: the sequence (with the cached positions) is longer than ``block_size``
                (the message names both, as nanoGPT's assertion does).
        """
        B, T = idx.shape
        past = caches[0].length if caches else 0
        if past + T > self.config.block_size:
            raise ValueError(f"Cannot forward sequence of length {past + T}, block size is only "
                             f"{self.config.block_size}")
        positions = torch.arange(past, past + T, dtype=torch.long, device=idx.device)
        x = self.dropout(self.token_embedding(idx) + self.position_embedding(positions))
        for index, block in enumerate(self.blocks):
            x = block(x, caches[index] if caches else None)
        return self.ln_f(x)

    def forward(self, idx, targets=None):
        """Logits of the next token at every position, and optionally the loss.

        Args:
            idx: token ids ``(B, T)``, int64, ``T <= block_size``.
            targets: None, or the next-token ids ``(B, T)``, int64; ``-100`` marks positions
                left out of the loss.

        Returns:
            ``(logits, loss)``: logits ``(B, T, V)`` float32; loss the mean cross-entropy over
            the counted positions (a 0-d tensor), or None without ``targets``.

        Raises:
            ValueError: ``T > block_size``, e.g. "Cannot forward sequence of length 80, block
                size is only 64".
        """
        logits = self.lm_head(self.hidden_states(idx))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                   ignore_index=-100)
        return logits, loss

    def new_caches(self, batch_size):
        """Empty key–value caches for generation, one :class:`KVCache` per block."""
        weight = self.lm_head.weight
        c = self.config
        return [KVCache(batch_size, c.n_head, c.block_size, c.n_embd // c.n_head, weight.dtype,
                        weight.device) for _ in range(c.n_layer)]

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True,
                 stop_token=None):
        """Continue each sequence of ``idx`` by sampling ``max_new_tokens`` tokens.

        Each step samples from ``softmax(logits / temperature)`` at the last position,
        restricted to the ``top_k`` most likely tokens if given. ``top_k=1`` or
        ``temperature=0`` decode greedily (argmax; no random numbers are drawn), and then the
        result is the same with and without the cache. Call ``model.eval()`` first to turn
        dropout off.

        The model reads at most ``block_size`` positions. Without the cache, each step reads
        the last ``block_size`` tokens of the sequence so far (nanoGPT's ``idx[:, -block_size:]``
        crop), so prompts and generations of any length work. With the cache, positions are
        never shifted (a sliding window would move every learned position and invalidate the
        cached keys), so the prompt and the new tokens must fit: otherwise it raises before
        it starts.

        Args:
            idx: prompt token ids ``(B, T)``, int64, ``T >= 1``.
            max_new_tokens: number of tokens to add.
            temperature: divides the logits; > 0, or 0 for greedy.
            top_k: None, or sample only among the ``top_k`` largest logits.
            use_cache: keep each layer's keys and values in a :class:`KVCache` (the prompt is
                read once, then one position per step; ``T + max_new_tokens <= block_size``);
                False re-reads the (cropped) sequence every step.
            stop_token: None, or a token id after which generation stops early once every
                sequence has produced it (tokens after it in a row are arbitrary).

        Returns:
            ``(B, T + n)`` int64: the prompt followed by ``n <= max_new_tokens`` new tokens.

        Raises:
            ValueError: with ``use_cache``, ``T + max_new_tokens > block_size`` (the message
                names the prompt length, ``max_new_tokens`` and ``block_size``); or
                ``temperature < 0``.
        """
        T, block_size = idx.shape[1], self.config.block_size
        if use_cache and T + max_new_tokens > block_size:
            raise ValueError(f"a prompt of {T} tokens plus max_new_tokens={max_new_tokens} exceeds "
                             f"block_size {block_size} (the KV cache holds block_size positions; "
                             f"use_cache=False crops the context instead)")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        caches = self.new_caches(idx.shape[0]) if use_cache else None
        context = idx if use_cache else idx[:, -block_size:]
        finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
        for _ in range(max_new_tokens):
            logits = self.lm_head(self.hidden_states(context, caches)[:, -1, :])
            next_token = self._choose(logits, temperature, top_k)
            idx = torch.cat((idx, next_token), dim=1)
            context = next_token if use_cache else idx[:, -block_size:]
            if stop_token is not None:
                finished = finished | (next_token[:, 0] == stop_token)
                if bool(finished.all()):
                    break
        return idx

    @staticmethod
    def _choose(logits, temperature, top_k):
        """Next token ids ``(B, 1)`` from last-position logits ``(B, V)``."""
        if top_k == 1 or temperature == 0:
            return logits.argmax(dim=-1, keepdim=True)
        logits = logits / temperature
        if top_k is not None:
            kth_largest = torch.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
            logits = logits.masked_fill(logits < kth_largest, float("-inf"))
        return torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)


class StaticKVDecoder:
    """Greedy decoding of a :class:`GPT` one position per call, with a static key–value cache:
    every one of ``block_size`` positions is allocated up front, the new key and value are
    written where a one-hot position mask is set, and attention is masked to the positions
    written so far (gpt-fast's static cache). Every call has the same shapes, so
    ``torch.compile(decoder.decode)`` captures one graph per batch size.

    Args:
        model: a :class:`GPT` in eval mode (dropout off).
    """

    def __init__(self, model):
        self.model = model
        self.slots = torch.arange(model.config.block_size, device=model.lm_head.weight.device)

    def new_caches(self, batch_size):
        """Zeroed caches, one ``(2, B, n_head, block_size, head_dim)`` tensor (keys, values) per block."""
        c, weight = self.model.config, self.model.lm_head.weight
        return [torch.zeros(2, batch_size, c.n_head, c.block_size, c.n_embd // c.n_head,
                            dtype=weight.dtype, device=weight.device) for _ in range(c.n_layer)]

    def decode(self, token, position, caches):
        """The next token ``(B, 1)`` int64 after ``token`` ``(B, 1)`` at ``position`` (a one-element
        int64 tensor, the same for the whole batch); writes its keys and values into ``caches``."""
        model = self.model
        B, heads, width = token.shape[0], model.config.n_head, model.config.n_embd
        seen = (self.slots <= position).view(1, -1)                       # (1, block)
        here = (self.slots == position).view(1, 1, 1, -1, 1)
        x = model.token_embedding(token) + model.position_embedding(position)
        for block, cache in zip(model.blocks, caches):
            qkv = block.attn.qkv(block.ln_1(x)).view(B, 3, heads, 1, width // heads)
            cache.copy_(torch.where(here, qkv[:, 1:].transpose(0, 1), cache))
            y = F.scaled_dot_product_attention(qkv[:, 0], cache[0], cache[1], attn_mask=seen)
            x = x + block.attn.proj(y.reshape(B, 1, width))
            x = x + block.mlp(block.ln_2(x))
        return model.lm_head(model.ln_f(x)).argmax(-1)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, decode=None):
        """``GPT.generate(idx, max_new_tokens, top_k=1)`` through ``decode`` (default
        :meth:`decode`; e.g. its compiled version), into fresh caches: the prompt but its last
        token is read in one pass of the model (its keys and values copied into the static
        cache, gpt-fast's separate prefill), then one position per call.

        Args:
            idx: prompt token ids ``(B, T)``, int64, ``T >= 1``.
            max_new_tokens: number of greedy tokens to add.
            decode: a function of ``(token, position, caches)`` like :meth:`decode`.

        Returns:
            ``(B, T + max_new_tokens)`` int64.

        Raises:
            ValueError: ``T + max_new_tokens > block_size`` (the static cache holds
                ``block_size`` positions), as ``GPT.generate`` with its cache.
        """
        decode = self.decode if decode is None else decode
        (B, T), block_size = idx.shape, self.model.config.block_size
        if T + max_new_tokens > block_size:
            raise ValueError(f"a prompt of {T} tokens plus max_new_tokens={max_new_tokens} exceeds "
                             f"block_size {block_size} (the static cache holds block_size positions)")
        caches = self.new_caches(B)
        if T > 1:
            prefilled = self.model.new_caches(B)
            self.model.hidden_states(idx[:, :-1], prefilled)
            for cache, filled in zip(caches, prefilled):
                cache[:, :, :, :T - 1].copy_(filled.storage[:, :, :, :T - 1].transpose(0, 1))
        # The last prompt token as (B, 1) in row-major strides, as decode returns tokens (a
        # compiled decode guards on strides: a column of idx would capture a second graph).
        tokens = [idx, idx[:, -1:].clone(memory_format=torch.contiguous_format)]
        for t in range(T - 1, T + max_new_tokens - 1):
            tokens.append(decode(tokens[-1], torch.tensor([t], device=idx.device), caches))
        return torch.cat([idx] + tokens[2:], dim=1)


def in_torch():
    """This file with its imports pointed at PyTorch: a module holding the same :class:`GPT`,
    :class:`StaticKVDecoder`, ... as PyTorch code (registered as ``sys.modules["gpt_torch"]``,
    as dataclasses look their module up by name). Needs PyTorch installed."""
    with open(__file__, encoding="utf-8") as file:
        source = file.read()
    source = re.sub(r"^(import|from) ember\b", r"\1 torch", source, flags=re.MULTILINE)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("gpt_torch", loader=None))
    sys.modules["gpt_torch"] = module
    exec(compile(source, __file__, "exec"), module.__dict__)
    return module
