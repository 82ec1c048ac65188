"""A word-level LSTM language model in the style of pytorch/examples' word_language_model.

Plain PyTorch: ``test_gpt_script.py`` executes it with ``torch`` bound to real torch and to
ember, unchanged. It is not collected by pytest on its own.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    def __init__(self, train_text, valid_text):
        self.dictionary = Dictionary()
        self.train = self.tokenize(train_text)
        self.valid = self.tokenize(valid_text)

    def tokenize(self, text):
        idss = []
        for line in text.split("\n"):
            words = line.split() + ["<eos>"]
            idss.append(torch.tensor([self.dictionary.add_word(w) for w in words], dtype=torch.int64))
        return torch.cat(idss)


class RNNModel(nn.Module):
    """Encoder (embedding), a recurrent stack, and a decoder tied to the encoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def repackage_hidden(h):
    """Detaches hidden states from their history (truncated backpropagation through time)."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def evaluate(model, criterion, data_source, eval_batch_size, bptt):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i, bptt)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(train_text, valid_text, epochs=1, batch_size=10, bptt=20, emsize=32, nhid=32, nlayers=2,
          lr=20.0, clip=0.25, dropout=0.0, init_state=None, max_batches=None, seed=1111):
    """Trains the LM with plain SGD on ``p.data``; returns (batch losses, validation losses, model)."""
    torch.manual_seed(seed)
    corpus = Corpus(train_text, valid_text)
    train_data = batchify(corpus.train, batch_size)
    val_data = batchify(corpus.valid, 10)
    ntokens = len(corpus.dictionary)
    model = RNNModel("LSTM", ntokens, emsize, nhid, nlayers, dropout, tie_weights=True)
    if init_state is not None:
        model.load_state_dict(init_state)
    criterion = nn.NLLLoss()
    losses, val_losses = [], []
    for epoch in range(1, epochs + 1):
        model.train()
        hidden = model.init_hidden(batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            if max_batches is not None and batch >= max_batches:
                break
            data, targets = get_batch(train_data, i, bptt)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            losses.append(loss.item())
        val_losses.append(evaluate(model, criterion, val_data, 10, bptt))
        assert math.isfinite(val_losses[-1])
    return losses, val_losses, model
