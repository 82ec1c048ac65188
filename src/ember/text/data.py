"""The bundled text: a conversational question–answer set and a character corpus, their
fixed train/validation splits, and the Q&A training format for a GPT.

Both are written for ember and described in ``data/qa_datasheet.md`` and
``data/corpus_datasheet.md`` (sources, counts, licence, limitations).

The Q&A format. A pair with context turns ``(q1, a1)``, ... and question ``q`` becomes the
prompt ``"Q: q1\\nA: a1\\nQ: q\\nA:"`` (:func:`format_prompt`; one ``"Q: ...\\nA: ...\\n"``
line pair per context turn) and the completion ``" " + answer``. As token ids
(:func:`encode_qa`)::

    [<bos>] + encode(prompt) + encode(" " + answer) + [<eos>]

Prompt and completion are encoded separately, so a model that is given ``[<bos>] +
encode(prompt)`` at inference sees exactly the tokens it was trained on, and it ends its
answer with ``<eos>``. :func:`qa_blocks` turns pairs into next-token ``(inputs, targets)``
rows, with ``-100`` (``cross_entropy``'s default ``ignore_index``) where there is nothing to
predict. To answer a question, feed ``[tokenizer.bos_id] + tokenizer.encode(format_prompt(
question, context))``, sample until ``tokenizer.eos_id``, and strip the leading space of
``tokenizer.decode(new_ids, skip_special_tokens=True)``.
"""
import copy
import functools
import hashlib
import json
from importlib import resources

import numpy as np

IGNORE_INDEX = -100
_SPLITS = ("train", "validation", "all")


def load_qa(split="train", seed=0):
    """The question–answer pairs of one split, in file order.

    Each pair is a dict: ``"id"`` (str, unique, e.g. ``"science-007"``), ``"category"``
    (str, e.g. ``"arithmetic"``), ``"question"`` and ``"answer"`` (one-line strings; answers
    are at most 120 characters), and for follow-up questions ``"context"``: a list of the
    earlier turns, each ``{"question": ..., "answer": ...}``.

    The split is stratified and fixed: in each category, the pairs are ordered by the SHA-256
    of ``f"{seed}/{id}"`` and the first ``max(1, round(0.1 * n))`` (halves round up) form the
    validation split. It depends on nothing but ``seed`` and the ids, so it is the same on
    every machine and NumPy or Python version.

    Args:
        split: ``"train"``, ``"validation"`` or ``"all"``. Default ``"train"``.
        seed: selects the validation pairs; the same seed gives the same split. Default 0.

    Returns:
        a new list of dicts (changing it does not change later results).

    Raises:
        ValueError: ``split`` is not one of the three names.

    Example::

        >>> from ember.text import load_qa
        >>> len(load_qa("all")) == len(load_qa("train")) + len(load_qa("validation"))
        True
        >>> pair = load_qa("all")[0]
        >>> pair["category"], pair["question"], pair["answer"]
        ('greeting', 'Hello!', 'Hello! How can I help you today?')
    """
    _check_split(split)
    pairs = _qa_file()
    if split != "all":
        validation = _validation_ids(pairs, seed)
        pairs = [p for p in pairs if (p["id"] in validation) == (split == "validation")]
    return copy.deepcopy(pairs)


def load_corpus(split="train"):
    """The character corpus, or one split of it, as a string.

    About 57 KB of English prose, fables and proverbs (see ``data/corpus_datasheet.md``).
    The validation split is the last tenth, cut at the start of the line that holds the 90%
    mark, so both splits are whole lines.

    Args:
        split: ``"train"``, ``"validation"`` or ``"all"``. Default ``"train"``.

    Raises:
        ValueError: ``split`` is not one of the three names.
    """
    _check_split(split)
    text = _corpus_file()
    if split == "all":
        return text
    cut = text.rfind("\n", 0, len(text) * 9 // 10) + 1
    return text[:cut] if split == "train" else text[cut:]


def format_prompt(question, context=()):
    """The prompt that asks ``question`` after the turns in ``context``.

    Whitespace runs in the turns (newlines included) become single spaces, so every turn is
    one ``Q:`` line and one ``A:`` line.

    Args:
        question: the question, a string.
        context: earlier turns, each a dict with ``"question"`` and ``"answer"``. Default: none.

    Returns:
        ``"Q: q1\\nA: a1\\n...Q: question\\nA:"``, a string.

    Example::

        >>> from ember.text import format_prompt
        >>> format_prompt("And of Germany?", [{"question": "What is the capital of France?",
        ...                                    "answer": "Paris."}])
        'Q: What is the capital of France?\\nA: Paris.\\nQ: And of Germany?\\nA:'
    """
    lines = []
    for turn in context:
        lines += [f"Q: {_one_line(turn['question'])}", f"A: {_one_line(turn['answer'])}"]
    lines += [f"Q: {_one_line(question)}", "A:"]
    return "\n".join(lines)


def format_qa(pair):
    """A pair as one training string: :func:`format_prompt` then ``" " + answer``.

    Args:
        pair: a dict with ``"question"``, ``"answer"`` and optionally ``"context"``, as
            :func:`load_qa` returns.

    Returns:
        ``"Q: ...\\nA: ..."``, a string without special tokens.
    """
    return format_prompt(pair["question"], pair.get("context", ())) + " " + _one_line(pair["answer"])


def encode_qa(pair, tokenizer):
    """A pair as token ids: ``[<bos>] + encode(prompt) + encode(" " + answer) + [<eos>]``.

    Args:
        pair: a dict as :func:`load_qa` returns.
        tokenizer: a :class:`CharTokenizer` or :class:`BPETokenizer` with ``"<bos>"`` and
            ``"<eos>"`` special tokens.

    Returns:
        ``(ids, prompt_length)``: a list of ints, and the number of leading ids (``<bos>`` and
        the prompt) that come before the answer.

    Raises:
        ValueError: the tokenizer lacks ``"<bos>"`` or ``"<eos>"``, or (character tokenizer
            without ``"<unk>"``) a character is outside its alphabet.
    """
    _check_markers(tokenizer)
    prompt = [tokenizer.bos_id] + tokenizer.encode(format_prompt(pair["question"],
                                                                 pair.get("context", ())))
    answer = tokenizer.encode(" " + _one_line(pair["answer"])) + [tokenizer.eos_id]
    return prompt + answer, len(prompt)


def qa_blocks(pairs, tokenizer, block_size, answer_only=False):
    """Next-token training rows for a GPT, one pair per row.

    Row ``i`` holds the ids ``s`` of :func:`encode_qa` shifted by one: ``inputs[i, t] = s[t]``
    and ``targets[i, t] = s[t + 1]``. The rest of the row is padding: inputs ``<pad>`` (or
    ``<eos>`` if the tokenizer has no ``<pad>``), targets ``-100``. A causal model never lets
    the padding reach earlier positions, and ``cross_entropy(..., ignore_index=-100)`` skips
    it in the loss.

    Args:
        pairs: dicts as :func:`load_qa` returns.
        tokenizer: as in :func:`encode_qa`.
        block_size: the row length ``T`` (the model's context length).
        answer_only: if true, targets that are prompt tokens are ``-100`` too, so the loss
            counts only the answer and its ``<eos>``. Default False: the model also learns to
            model the questions.

    Returns:
        ``(inputs, targets)``: NumPy arrays of shape ``(N, T)``, dtype ``int64``, for
        ``N = len(pairs)``; ``ember.from_numpy`` makes them tensors.

    Raises:
        ValueError: a pair needs more than ``block_size + 1`` ids (the message names the pair
            and the length it needs), ``block_size`` is not positive, or as
            :func:`encode_qa`.

    Example::

        >>> from ember.text import CharTokenizer, SPECIAL_TOKENS, format_qa, load_qa, qa_blocks
        >>> pairs = load_qa("train")
        >>> tokenizer = CharTokenizer.from_corpus(map(format_qa, pairs), SPECIAL_TOKENS)
        >>> inputs, targets = qa_blocks(pairs[:2], tokenizer, block_size=64, answer_only=True)
        >>> inputs.shape, targets.dtype
        ((2, 64), dtype('int64'))
        >>> tokenizer.decode(t for t in targets[0] if t != -100)
        ' Hello! How can I help you today?<eos>'
    """
    if block_size < 1:
        raise ValueError(f"block_size must be positive, got {block_size}")
    _check_markers(tokenizer)
    pad_id = tokenizer.pad_id if tokenizer.pad_id is not None else tokenizer.eos_id
    inputs = np.full((len(pairs), block_size), pad_id, dtype=np.int64)
    targets = np.full((len(pairs), block_size), IGNORE_INDEX, dtype=np.int64)
    for row, pair in enumerate(pairs):
        ids, prompt_length = encode_qa(pair, tokenizer)
        if len(ids) - 1 > block_size:
            raise ValueError(f"pair {pair.get('id', row)!r} needs block_size >= {len(ids) - 1}, "
                             f"got {block_size}")
        inputs[row, :len(ids) - 1] = ids[:-1]
        targets[row, :len(ids) - 1] = ids[1:]
        if answer_only:
            targets[row, :prompt_length - 1] = IGNORE_INDEX
    return inputs, targets


def _one_line(text):
    return " ".join(text.split())


def _check_markers(tokenizer):
    if tokenizer.bos_id is None or tokenizer.eos_id is None:
        raise ValueError(f"the tokenizer needs '<bos>' and '<eos>' special tokens, has "
                         f"{list(tokenizer.special_tokens)}")


def _check_split(split):
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {list(_SPLITS)}, got {split!r}")


def _validation_ids(pairs, seed):
    by_category = {}
    for pair in pairs:
        by_category.setdefault(pair["category"], []).append(pair["id"])
    validation = set()
    for ids in by_category.values():
        ids.sort(key=lambda i: hashlib.sha256(f"{seed}/{i}".encode()).hexdigest())
        validation.update(ids[:max(1, (len(ids) + 5) // 10)])  # a tenth, halves rounded up
    return validation


@functools.cache
def _qa_file():
    return json.loads(_data_file("qa.json"))


@functools.cache
def _corpus_file():
    return _data_file("corpus.txt")


def _data_file(name):
    return resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")
