"""A stand-in for ``torchtext`` (not installed here; its datasets need a download and its
"spacy" tokenizer the spaCy models) written on the running library, for the pytorch/examples
sweep (``examples_harness``):

- ``data.utils.get_tokenizer``: "spacy" splits words from punctuation by a regular
  expression (the test sentences need nothing more); ``None`` splits on white space.
- ``vocab.build_vocab_from_iterator`` and the ``Vocab`` it returns, with torchtext's order
  (specials, then tokens by falling frequency, ties alphabetical).
- ``datasets.Multi30k``: :func:`parallel_corpus` sentence pairs (German-like, English), as an
  iterable dataset of (source, target) lines ending in a newline, like the real one's.
- ``legacy.data`` (``Field``, ``BucketIterator``) and ``legacy.datasets.SNLI`` over
  :func:`inference_corpus`: padded (length, batch) int64 batches with ``.premise``,
  ``.hypothesis``, ``.label``; training batches reshuffled by Python's ``random`` each epoch,
  the others in order of length.

Not collected by pytest.
"""
import collections
import math
import random
import re
import types

import numpy as np

_WORDS = {  # German-like source word -> English target word
    "ein": "a", "der": "the", "hund": "dog", "katze": "cat", "mann": "man", "frau": "woman",
    "kind": "child", "läuft": "runs", "sitzt": "sits", "spielt": "plays", "auf": "on",
    "im": "in the", "park": "park", "gras": "grass", "ball": "ball", "mit": "with", "rot": "red",
}


def parallel_corpus(split, count, seed):
    """``count`` (source, target) sentence pairs for ``split``: subject, verb, place, each word
    translated by a fixed table, ending in a full stop."""
    rng = np.random.default_rng([seed, ("train", "valid", "test").index(split)])
    subjects, verbs = ["hund", "katze", "mann", "frau", "kind"], ["läuft", "sitzt", "spielt"]
    pairs = []
    for _ in range(count):
        words = [rng.choice(["ein", "der"]), rng.choice(subjects), rng.choice(verbs),
                 rng.choice(["auf", "im", "mit"]), rng.choice(["park", "gras", "ball"])]
        if rng.random() < 0.3:
            words.insert(4, "rot")
        pairs.append((" ".join(words).capitalize() + " .",
                      " ".join(_WORDS[w] for w in words).capitalize() + " ."))
    return pairs


def stand_in_torchtext(lib, sizes=(24, 8, 8)):
    """The modules ``torchtext``, ``.data``, ``.data.utils``, ``.vocab``, ``.datasets``,
    ``.datasets.multi30k`` on ``lib``, by name; ``sizes`` are the train/valid/test pair counts."""
    names = ("torchtext", "torchtext.data", "torchtext.data.utils", "torchtext.vocab",
             "torchtext.datasets", "torchtext.datasets.multi30k")
    text, data, utils, vocab, datasets, multi30k = (types.ModuleType(n) for n in names)

    class Multi30k(lib.utils.data.IterableDataset):
        def __init__(self, root=".data", split=("train", "valid", "test"), language_pair=("de", "en")):
            if split not in ("train", "valid", "test"):
                raise ValueError(f"the stand-in Multi30k takes one split, not {split!r}")
            if tuple(language_pair) not in (("de", "en"), ("en", "de")):
                raise ValueError(f"language_pair must be ('de', 'en') or ('en', 'de'), not {language_pair}")
            self.pairs = parallel_corpus(split, sizes[("train", "valid", "test").index(split)], 0)
            self.reverse = tuple(language_pair) == ("en", "de")

        def __iter__(self):
            for de, en in self.pairs:
                de, en = de + "\n", en + "\n"  # lines keep their newline, as the files' do
                yield (en, de) if self.reverse else (de, en)

    multi30k.URL, multi30k.Multi30k = {}, Multi30k
    datasets.Multi30k, datasets.multi30k = Multi30k, multi30k
    utils.get_tokenizer, vocab.Vocab = get_tokenizer, Vocab
    vocab.build_vocab_from_iterator = build_vocab_from_iterator
    data.utils, text.data, text.vocab, text.datasets = utils, data, vocab, datasets
    return {m.__name__: m for m in (text, data, utils, vocab, datasets, multi30k, *_legacy(lib, text))}


def get_tokenizer(tokenizer, language="en"):
    """A function from a string to its tokens."""
    if tokenizer is None:
        return str.split
    if tokenizer == "spacy":
        return lambda text: re.findall(r"\w+|[^\w\s]", text)
    raise ValueError(f"the stand-in torchtext has the 'spacy' and None tokenizers, not {tokenizer!r}")


class Vocab:
    """Tokens to indices and back; an unknown token is the default index, once set."""

    def __init__(self, tokens):
        self.itos, self.stoi, self.default = list(tokens), {t: i for i, t in enumerate(tokens)}, None

    def __len__(self):
        return len(self.itos)

    def __contains__(self, token):
        return token in self.stoi

    def __getitem__(self, token):
        if token in self.stoi:
            return self.stoi[token]
        if self.default is None:
            raise RuntimeError(f"Token {token} not found and default index is not set")
        return self.default

    def __call__(self, tokens):
        return [self[t] for t in tokens]

    def set_default_index(self, index):
        self.default = index

    def lookup_tokens(self, indices):
        return [self.itos[int(i)] for i in indices]

    def get_itos(self):
        return list(self.itos)

    def get_stoi(self):
        return dict(self.stoi)


def build_vocab_from_iterator(iterator, min_freq=1, specials=None, special_first=True, max_tokens=None):
    counts = collections.Counter(token for tokens in iterator for token in tokens)
    specials = list(specials or [])
    ranked = sorted(sorted(counts.items()), key=lambda item: item[1], reverse=True)
    tokens = [t for t, n in ranked if n >= min_freq and t not in specials]
    if max_tokens is not None:
        tokens = tokens[:max_tokens - len(specials)]
    return Vocab(specials + tokens if special_first else tokens + specials)


# ---- torchtext.legacy (the pre-0.9 Field/Iterator API) ------------------------------------------
def inference_corpus(split, count, seed=0):
    """``count`` SNLI-like examples for ``split``: (premise, hypothesis, label) where the
    hypothesis keeps the premise's subject and verb (entailment), changes the verb
    (contradiction) or changes the subject (neutral)."""
    rng = np.random.default_rng([seed, ("train", "dev", "test").index(split), 1])
    subjects, verbs = ["dog", "cat", "man", "woman", "child"], ["runs", "sits", "plays"]
    out = []
    for _ in range(count):
        s, v, place = rng.choice(subjects), rng.choice(verbs), rng.choice(["park", "grass"])
        label = rng.choice(["entailment", "contradiction", "neutral"])
        h_s = rng.choice([x for x in subjects if x != s]) if label == "neutral" else s
        h_v = rng.choice([x for x in verbs if x != v]) if label == "contradiction" else v
        out.append((f"A {s} {v} in the {place}.", f"The {h_s} {h_v}.", str(label)))
    return out


def _legacy(lib, text, sizes=(40, 12, 12)):
    names = ("torchtext.legacy", "torchtext.legacy.data", "torchtext.legacy.datasets")
    legacy, data, datasets = (types.ModuleType(n) for n in names)

    class Field:
        def __init__(self, sequential=True, lower=False, tokenize=None):
            self.sequential, self.lower = sequential, lower
            self.tokenize = get_tokenizer(tokenize) if sequential else None
            self.specials = ["<unk>", "<pad>"] if sequential else ["<unk>"]
            self.vocab = None

        def preprocess(self, value):
            value = self.tokenize(value) if self.sequential else value
            return [t.lower() for t in value] if self.sequential and self.lower else value

        def build_vocab(self, *datasets):
            values = [getattr(ex, name) for d in datasets for name, f in d.fields.items() if f is self
                      for ex in d.examples]
            self.vocab = build_vocab_from_iterator((v if self.sequential else [v] for v in values),
                                                   specials=self.specials)
            self.vocab.set_default_index(0)
            self.vocab.stoi, self.vocab.itos = self.vocab.get_stoi(), self.vocab.get_itos()

        def process(self, values):
            if not self.sequential:
                return lib.tensor(self.vocab(values), dtype=lib.long)
            length = max(len(v) for v in values)
            padded = [self.vocab(v) + [1] * (length - len(v)) for v in values]  # <pad> is 1
            return lib.tensor(padded, dtype=lib.long).t().contiguous()

    class Example:
        pass

    class SNLI:
        def __init__(self, split, text_field, label_field):
            self.fields = {"premise": text_field, "hypothesis": text_field, "label": label_field}
            self.examples = []
            for premise, hypothesis, label in inference_corpus(split, sizes[("train", "dev", "test").index(split)]):
                ex = Example()
                for name, value in zip(self.fields, (premise, hypothesis, label)):
                    setattr(ex, name, self.fields[name].preprocess(value))
                self.examples.append(ex)

        def __len__(self):
            return len(self.examples)

        @classmethod
        def splits(cls, text_field, label_field, root=".data"):
            return tuple(cls(split, text_field, label_field) for split in ("train", "dev", "test"))

    class Batch:
        def __init__(self, examples, dataset):
            self.batch_size, self.dataset = len(examples), dataset
            for name, field in dataset.fields.items():
                setattr(self, name, field.process([getattr(ex, name) for ex in examples]))

    class BucketIterator:
        def __init__(self, dataset, batch_size, device=None, train=True):
            self.dataset, self.batch_size, self.train = dataset, batch_size, train
            self.order = list(range(len(dataset)))

        def init_epoch(self):
            if self.train:
                random.shuffle(self.order)
            else:
                self.order.sort(key=lambda i: (len(self.dataset.examples[i].premise),
                                               len(self.dataset.examples[i].hypothesis)))

        def __len__(self):
            return math.ceil(len(self.dataset) / self.batch_size)

        def __iter__(self):
            for start in range(0, len(self.order), self.batch_size):
                chunk = self.order[start:start + self.batch_size]
                yield Batch([self.dataset.examples[i] for i in chunk], self.dataset)

        @classmethod
        def splits(cls, datasets, batch_size, device=None):
            return tuple(cls(d, batch_size, device, train=i == 0) for i, d in enumerate(datasets))

    data.Field, data.BucketIterator, data.Batch, datasets.SNLI = Field, BucketIterator, Batch, SNLI
    legacy.data, legacy.datasets, text.legacy = data, datasets, legacy
    return legacy, data, datasets
