"""A :class:`~ember.models.gpt.GPT` that answers questions in the format of
:mod:`ember.text.data`: its checkpoint files, and greedy answering with the KV cache.

A checkpoint is a directory of files, each written atomically:

- ``model.pt``: ``ember.save({"model": state_dict, "config": GPTConfig.to_dict()})``;
- ``tokenizer.json``: the tokenizer's own JSON (:meth:`ember.text.Tokenizer.save`);
- ``questions.json`` (optional): ``{"questions": [{"question": ..., "category": ...}]}``, what
  the model was trained on, so that ``ember chat`` can say what it knows and mark answers to
  questions far from all of them as guesses (:func:`familiarity`).
"""
import json
import pickle
from pathlib import Path

import ember
from ember.serialization import write_atomically
from ember.text import BPETokenizer, CharTokenizer, format_prompt

from .gpt import GPT, GPTConfig

MODEL_FILE, TOKENIZER_FILE, QUESTIONS_FILE = "model.pt", "tokenizer.json", "questions.json"
# Below this familiarity a question shares too few letter triples with every training question
# for a model that memorised its answers to know the answer: its reply is marked a guess.
GUESS_BELOW = 0.5
_TOKENIZERS = {cls.__name__: cls for cls in (CharTokenizer, BPETokenizer)}


def save_checkpoint(model, tokenizer, directory, pairs=None):
    """Write ``model``, ``tokenizer`` and the questions of the Q&A ``pairs`` it was trained on
    (if given) into ``directory`` (created if missing).

    Returns:
        the directory, a :class:`pathlib.Path`.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ember.save({"model": model.state_dict(), "config": model.config.to_dict()}, directory / MODEL_FILE)
    tokenizer.save(directory / TOKENIZER_FILE)
    if pairs is not None:
        known = [{"question": pair["question"], "category": pair["category"]} for pair in pairs]
        text = json.dumps({"questions": known}, ensure_ascii=False, indent=0)
        write_atomically(str(directory / QUESTIONS_FILE), lambda file: file.write(text.encode("utf-8")))
    return directory


def load_questions(directory):
    """The ``{"question", "category"}`` dicts in ``directory``'s ``questions.json``; an empty
    list when the checkpoint has none (older checkpoints) or it is unreadable."""
    try:
        with open(Path(directory) / QUESTIONS_FILE, "rb") as file:
            known = json.loads(file.read())["questions"]
        return [{"question": str(q["question"]), "category": str(q["category"])} for q in known]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _letter_triples(text):
    # padded with spaces so that short words ("Hi") have triples too
    text = f" {' '.join(''.join(c if c.isalnum() else ' ' for c in text.lower()).split())} "
    return {text[i:i + 3] for i in range(len(text) - 2)}


def familiarity(question, known_questions):
    """How close ``question`` is to the nearest of ``known_questions``: the largest Jaccard
    similarity of their sets of letter triples (case and punctuation ignored), in ``[0, 1]``;
    1.0 for a question seen in training, 0.0 when ``known_questions`` is empty."""
    triples = _letter_triples(question)
    best = 0.0
    for other in known_questions:
        other_triples = _letter_triples(other)
        union = len(triples | other_triples)
        if union:
            best = max(best, len(triples & other_triples) / union)
    return best


def load_checkpoint(directory):
    """The model (in eval mode) and tokenizer that :func:`save_checkpoint` wrote.

    Raises:
        FileNotFoundError: ``directory`` lacks ``model.pt`` or ``tokenizer.json``.
        ValueError: a file is not a checkpoint of this format (corrupt or truncated, a config
            or weights that do not make a GPT, a tokenizer without ``<bos>``/``<eos>`` or whose
            vocabulary size differs from the model's); the message names the file.
    """
    directory = Path(directory)
    for name in (MODEL_FILE, TOKENIZER_FILE):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory} is not a GPT checkpoint: it has no {name}")
    with open(directory / TOKENIZER_FILE, "rb") as file:
        try:
            kind = json.loads(file.read()).get("format")
        except (ValueError, AttributeError):
            kind = None
    if kind not in _TOKENIZERS:
        raise ValueError(f"{directory / TOKENIZER_FILE}: not a tokenizer file of ember.text")
    tokenizer = _TOKENIZERS[kind].load(directory / TOKENIZER_FILE)
    missing = [name for name, token_id in (("<bos>", tokenizer.bos_id), ("<eos>", tokenizer.eos_id))
               if token_id is None]
    if missing:
        raise ValueError(f"{directory / TOKENIZER_FILE}: the tokenizer has no {' or '.join(missing)} "
                         f"token, which answering needs")
    model_file = directory / MODEL_FILE
    try:  # ember.load reports a corrupt, truncated or unsafe file as RuntimeError or UnpicklingError
        checkpoint = ember.load(model_file)
    except (RuntimeError, pickle.UnpicklingError) as error:
        raise ValueError(str(error)) from None
    if not isinstance(checkpoint, dict) or not {"model", "config"} <= checkpoint.keys():
        raise ValueError(f"{model_file}: expected a dict with 'model' and 'config'")
    config = checkpoint["config"]
    try:
        model = GPT(GPTConfig(**config))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{model_file}: 'config' is not a GPTConfig: {error}") from None
    if model.config.vocab_size != tokenizer.vocab_size:
        raise ValueError(f"{model_file}: the model has vocab_size {model.config.vocab_size} but "
                         f"{TOKENIZER_FILE} has {tokenizer.vocab_size} tokens")
    try:
        model.load_state_dict(checkpoint["model"])
    except (RuntimeError, TypeError, AttributeError) as error:
        raise ValueError(f"{model_file}: the weights do not fit the config: {error}") from None
    return model.eval(), tokenizer


def answer(model, tokenizer, question, context=()):
    """The model's greedy answer to ``question`` after the turns in ``context``.

    The prompt is ``[<bos>] + encode(format_prompt(question, context))``; generation (greedy,
    with the KV cache) stops at ``<eos>`` or when the context is full, and the answer ends
    before any newline (in the training format a newline starts the next turn).

    Args:
        model: a :class:`GPT` in eval mode.
        tokenizer: its tokenizer, with ``<bos>`` and ``<eos>``.
        question: a string.
        context: earlier turns, dicts with ``"question"`` and ``"answer"``.

    Returns:
        the answer, a string without special tokens or the leading space.

    Raises:
        ValueError: the prompt is longer than the model's ``block_size`` (the message names
            both lengths).
    """
    ids = [tokenizer.bos_id] + tokenizer.encode(format_prompt(question, context))
    room = max(0, model.config.block_size - len(ids))
    out = model.generate(ember.tensor([ids]), room, top_k=1, stop_token=tokenizer.eos_id)
    new = out[0, len(ids):].tolist()
    if tokenizer.eos_id in new:
        new = new[:new.index(tokenizer.eos_id)]
    return tokenizer.decode(new, skip_special_tokens=True).split("\n")[0].strip()
