"""2017 — Vaswani et al.: attention is all you need.

*Attention Is All You Need* (NeurIPS 2017) replaced recurrence with self-attention: every
position of a sequence computes a query, a key and a value, and reads a softmax-weighted
mix of all the values, weighted by how well its query matches each key. Position is
supplied by adding position embeddings. The Transformer's decoder, stacked alone and
trained to predict the next token, became GPT (Radford et al., 2018, 2019).

The milestone has two parts.

1. **Attention routes information.** A model with one attention block (token and position
   embeddings, multi-head self-attention, a linear read-out; :mod:`ember.models.reverser`)
   learns to reverse sequences of 8 symbols over 10. Output ``t`` must be input ``7-t``,
   which no position-wise layer can compute: attention has to learn to look it up. It is
   scored by exact match (all 8 symbols right) on 1000 held-out sequences.
2. **A tiny GPT answers questions.** A character-level GPT (:mod:`ember.models.gpt`: 2
   blocks, 4 heads, width 128, about 440 thousand parameters) is trained on every pair of the
   training split of :func:`ember.text.load_qa` (415 pairs from all ten categories; ``fast``:
   every 26th, 16 pairs), with the loss on the answers only, in batches of four: memorising
   answers takes many small steps. It then answers a few of its training questions and a
   few held-out ones (the 47 pairs of the validation split, never trained on) greedily with
   its key–value cache. It is scored by its final training loss and by the fraction of its
   training answers it reproduces exactly, computed in one teacher-forced pass: a greedy
   answer equals the reference exactly when every reference token, ``<eos>`` included, is
   the argmax given the ones before it. Its loss on the held-out answers is recorded beside
   (the dashed curve of ``--plot``): a model this small memorises what it was shown and
   generalises little to questions it has not seen, as its held-out answers show.

The GPT is saved as a checkpoint directory (:func:`ember.models.qa.save_checkpoint`) under
``$XDG_CACHE_HOME/ember/transformer`` (by default ``~/.cache/ember/transformer``);
``ember chat`` on that directory talks to it.
"""
import functools
import os
from pathlib import Path

import numpy as np

import ember as torch
from ember.models.gpt import GPT, GPTConfig
from ember.models.qa import answer, save_checkpoint
from ember.models.reverser import Reverser
from ember.nn import functional as F
from ember.text import IGNORE_INDEX, SPECIAL_TOKENS, CharTokenizer, encode_qa, format_qa, load_qa, qa_blocks
from ember.utils.data import DataLoader, TensorDataset

from .milestone import Milestone, Threshold
from .training import fit

SYMBOLS, LENGTH = 10, 8
GPT_SIZES = dict(block_size=256, n_layer=2, n_head=4, n_embd=128)
# The GPT trains on the whole training split (415 pairs; the 47 validation pairs are its held-out
# check) for GPT_EPOCHS passes in batches of GPT_BATCH at peak learning rate GPT_LR: memorising
# answers takes many small steps. Measured on all 415 (seed 0, exact = training answers reproduced):
# width 64 for 23 epochs: loss 1.32, 2% exact. Width 128, 30 epochs, batches of 4, lr 2e-3: 43%
# (lr 1e-3: 21%; batches of 8 at lr 3e-3: 26%; a full learning rate from the first step, or
# lr 4e-3, ends the first ten epochs at a higher loss; batches of 2 or 1 cost more per epoch).
# These settings: 96% exact after epoch 36, 100% after 45 at training loss 0.0037 (held-out answer
# loss 6.9); 272 s of CPU for the GPT with its per-epoch evaluation, on 2 cores at load 13-18.
GPT_EPOCHS, GPT_BATCH, GPT_LR, WARMUP_EPOCHS = 45, 4, 2e-3, 2
FAST_TRAIN_EVERY, FAST_GPT_EPOCHS = 26, 110
SHOWN_TRAIN, SHOWN_HELD_OUT = 5, 3  # answers printed from each side


def checkpoint_dir():
    """Where the milestone saves its GPT: ``$XDG_CACHE_HOME/ember/transformer``, by default
    ``~/.cache/ember/transformer``."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "ember" / "transformer"


def train(fast=False, seed=0, quiet=False, out_dir=None):
    """Train both parts; save the GPT to ``out_dir`` (default :func:`checkpoint_dir`)."""
    reversal = train_reverser(fast, seed, quiet)
    train_pairs = load_qa("train")[::FAST_TRAIN_EVERY if fast else 1]
    held_out = load_qa("validation")
    chat, model, tokenizer = train_gpt(train_pairs, FAST_GPT_EPOCHS if fast else GPT_EPOCHS, seed, quiet, held_out)
    print(f"transformer: the GPT's greedy answers (KV cache), trained on {len(train_pairs)} pairs")
    for label, pairs in (("train", train_pairs[::len(train_pairs) // SHOWN_TRAIN][:SHOWN_TRAIN]),
                         ("held-out", held_out[::len(held_out) // SHOWN_HELD_OUT][:SHOWN_HELD_OUT])):
        for pair in pairs:
            reply = answer(model, tokenizer, pair["question"], pair.get("context", ()))
            verdict = "exact" if reply == pair["answer"] else f"expected: {pair['answer']}"
            print(f"  [{label}] Q: {pair['question']}\n  {' ' * len(label)}   A: {reply}  ({verdict})")
    held_out_exact = answers_exact(model, tokenizer, held_out)
    print(f"transformer: held-out check: {held_out_exact:.0%} of the {len(held_out)} validation answers "
          f"exact, never trained on (loss {chat.test_loss[-1]:.2f} on them, {chat.loss[-1]:.3f} on the "
          f"training answers)")
    directory = save_checkpoint(model, tokenizer, out_dir if out_dir is not None else checkpoint_dir(), train_pairs)
    print(f"transformer: saved the GPT to {directory} (try: ember chat {directory})")
    metrics = {"reversal exact match": reversal.accuracy[-1],
               "GPT training loss": chat.loss[-1],
               "GPT training answers exact": chat.accuracy[-1]}
    return metrics, {"reverser (held-out exact match)": reversal,
                     "GPT (training answers exact)": chat}


def reversal_data(seed, n_train=2000, n_test=1000):
    """Distinct random sequences ``(N, LENGTH)`` of symbols in ``[0, SYMBOLS)``, and their
    reversals, as ``(x_train, y_train, x_test, y_test)`` int64 tensors; no test sequence
    occurs in training."""
    rng = np.random.default_rng(seed)
    sequences = np.unique(rng.integers(0, SYMBOLS, (2 * (n_train + n_test), LENGTH)), axis=0)
    rng.shuffle(sequences)
    train, test = sequences[:n_train], sequences[n_train:n_train + n_test]
    return tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in (train, train[:, ::-1], test, test[:, ::-1]))


def train_reverser(fast, seed, quiet):
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = reversal_data(seed)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    model = Reverser(SYMBOLS, LENGTH)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    return fit(model, loader, per_position_loss, optimizer, epochs=4 if fast else 6,
               evaluate=lambda model: scores(model(x_test), y_test),
               desc="transformer: reversal", quiet=quiet)


def per_position_loss(logits, targets):
    """Mean cross-entropy of logits ``(B, T, V)`` against targets ``(B, T)`` (``-100`` skipped)."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)


def scores(logits, targets):
    """``(exact match, per-position loss)`` of ``logits`` against ``targets``."""
    return exact_match(logits, targets), per_position_loss(logits, targets).item()


def exact_match(logits, targets):
    """Fraction of rows whose argmax is right at every position (``-100`` positions excepted).

    Shapes: ``logits`` ``(B, T, V)``, ``targets`` ``(B, T)`` int64.
    """
    right = (logits.argmax(dim=-1) == targets) | (targets == IGNORE_INDEX)
    return right.all(dim=1).float().mean().item()


class LengthBatches:
    """Batches of Q&A rows of similar length, each cut to its longest row so that little of
    it is padding; rows are reshuffled within lengths, and batches reordered, on every pass.

    Yields ``(inputs, targets)`` int64 tensors ``(B, T_batch)`` from rows of
    :func:`ember.text.qa_blocks`, whose ``lengths`` give each row's unpadded length. Both
    dimensions are marked dynamic (``torch._dynamo.mark_dynamic``, up to the batch size and the
    longest row), so a compiled training step is one graph for every batch: without the marks,
    automatic dynamic shapes compiled four (a static one, then ranges widened twice and the
    short last batch).
    """

    def __init__(self, inputs, targets, lengths, batch_size, seed):
        self.inputs, self.targets, self.lengths = inputs, targets, np.asarray(lengths)
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)

    def __iter__(self):
        order = self.rng.permutation(len(self.lengths))
        order = order[np.argsort(self.lengths[order] // 16, kind="stable")]
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        for index in self.rng.permutation(len(batches)):
            rows = batches[index]
            width = self.lengths[rows].max()
            batch = torch.from_numpy(self.inputs[rows, :width]), torch.from_numpy(self.targets[rows, :width])
            for t in batch:
                torch._dynamo.mark_dynamic(t, 0, max=self.batch_size)
                torch._dynamo.mark_dynamic(t, 1, max=self.inputs.shape[1])
            yield batch


def qa_rows(pairs, tokenizer):
    """``(inputs, targets, lengths)`` of :func:`ember.text.qa_blocks` with the loss on answers
    only, cut to the longest pair."""
    lengths = np.array([len(encode_qa(pair, tokenizer)[0]) - 1 for pair in pairs])
    inputs, targets = qa_blocks(pairs, tokenizer, GPT_SIZES["block_size"], answer_only=True)
    return inputs[:, :lengths.max()], targets[:, :lengths.max()], lengths


def train_gpt(pairs, epochs, seed, quiet, held_out=None):
    """A GPT trained on ``pairs`` (answers only in the loss), in eval mode, with its history
    (per epoch: training loss, fraction of ``pairs`` answered exactly, and the loss on the
    answers of the ``held_out`` pairs if given) and character tokenizer."""
    torch.manual_seed(seed)
    # The alphabet is the whole training split's, so that chat knows every character of it.
    tokenizer = CharTokenizer.from_corpus(map(format_qa, load_qa("train")), SPECIAL_TOKENS)
    inputs, targets, lengths = qa_rows(pairs, tokenizer)
    model = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, **GPT_SIZES))
    optimizer = torch.optim.AdamW(model.parameters(), lr=GPT_LR, betas=(0.9, 0.99), weight_decay=0.0)
    # A gentle start (a full learning rate from the first step ends the early epochs at a higher
    # loss), then cosine decay to zero.
    schedulers = torch.optim.lr_scheduler
    scheduler = schedulers.SequentialLR(optimizer, [
        schedulers.LinearLR(optimizer, start_factor=0.2, total_iters=WARMUP_EPOCHS),
        schedulers.CosineAnnealingLR(optimizer, T_max=epochs - WARMUP_EPOCHS)], milestones=[WARMUP_EPOCHS])
    def evaluate(model):
        exact = answers_exact(model, tokenizer, pairs)
        return exact if held_out is None else (exact, model(held_inputs, held_targets)[1].item())
    if held_out is not None:
        held_inputs, held_targets = map(torch.from_numpy, qa_rows(held_out, tokenizer)[:2])
    history = fit(model, LengthBatches(inputs, targets, lengths, GPT_BATCH, seed),
                  lambda output, targets: per_position_loss(output[0], targets), optimizer, epochs,
                  evaluate=evaluate,
                  desc="transformer: GPT", scheduler=scheduler, quiet=quiet)
    return history, model.eval(), tokenizer


def answers_exact(model, tokenizer, pairs, batch_size=64):
    """Fraction of ``pairs`` whose answer greedy decoding reproduces exactly, from one
    teacher-forced pass (see the module docstring)."""
    inputs, targets, lengths = qa_rows(pairs, tokenizer)
    order = np.argsort(lengths, kind="stable")  # (ties in input order: NumPy's default sort orders them by CPU)
    exact = 0.0
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            width = lengths[rows].max()
            logits, _ = model(torch.from_numpy(inputs[rows, :width]))
            exact += exact_match(logits, torch.from_numpy(targets[rows, :width])) * len(rows)
    return exact / len(pairs)


def milestone(out_dir=None):
    """The ``transformer`` milestone, saving its GPT to ``out_dir`` (default
    :func:`checkpoint_dir`)."""
    return Milestone(
        name="transformer", year=2017,
        story="Vaswani et al.: attention learns to route information; a tiny GPT answers questions",
        thresholds=(Threshold("reversal exact match", 0.95),
                    Threshold("GPT training loss", 0.1, at_most=True),
                    Threshold("GPT training answers exact", 0.9)),
        train=functools.partial(train, out_dir=out_dir),
        accuracy_label="exact match: reversal on held-out sequences, GPT on its training answers")


MILESTONE = milestone()
