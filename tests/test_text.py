"""ember.text: tokenizer round-trips, BPE training against a from-scratch reference, JSON
files, the bundled Q&A set and corpus (counts, splits, datasheets), and the GPT format."""
import doctest
import fnmatch
import json
import os
import re
import tomllib
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember.text
from ember.text import (GPT2_SPLIT_PATTERN, IGNORE_INDEX, SPECIAL_TOKENS, BPETokenizer,
                        CharTokenizer, encode_qa, format_prompt, format_qa, load_corpus, load_qa,
                        qa_blocks)
from ember.text import bpe, char, data

DATA = os.path.join(os.path.dirname(ember.text.__file__), "data")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATEGORIES = {"greeting", "small_talk", "science", "geography", "history", "animals",
              "everyday", "arithmetic", "reasoning", "follow_up"}
HARD_TEXTS = ["", " ", "\n\n\t ", "\x00", "e\u0301", "👩\u200d👩\u200d👧", "🙂🙂", "naïve café",
              "日本語のテキスト", "नमस्ते दुनिया", "مرحبا", "한국어", "<eos><bos>", "a_b__c", "x²½",
              "don't we'll", "   lots   of    spaces   ", "\r\n\r\n", "\U0010FFFF\ufeff"]


@pytest.fixture(scope="module")
def corpus():
    return load_corpus("all")


@pytest.fixture(scope="module")
def bpe_tokenizer(corpus):
    return BPETokenizer.train(corpus, vocab_size=600, special_tokens=SPECIAL_TOKENS[:3])


# ---- CharTokenizer ----------------------------------------------------------------------

@given(st.text())
def test_char_round_trips_text_in_its_alphabet(text):
    tokenizer = CharTokenizer.from_corpus(text, special_tokens=SPECIAL_TOKENS)
    ids = tokenizer.encode(text)
    assert len(ids) == len(text)
    assert all(len(SPECIAL_TOKENS) <= i < tokenizer.vocab_size for i in ids)
    assert tokenizer.decode(ids) == text


@given(st.text(alphabet="abc xyz\n!é🙂"))
def test_char_round_trips_with_a_given_alphabet(text):
    tokenizer = CharTokenizer("abc xyz\n!é🙂")
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_char_ids_specials_first_then_alphabet_in_order():
    tokenizer = CharTokenizer("ba", special_tokens=["<pad>", "<eos>"])
    assert tokenizer.vocab_size == 4 and tokenizer.alphabet == "ba"
    assert [tokenizer.id_to_token(i) for i in range(4)] == ["<pad>", "<eos>", "b", "a"]
    assert tokenizer.token_to_id("a") == 3 and tokenizer.token_to_id("<eos>") == 1
    assert (tokenizer.pad_id, tokenizer.eos_id, tokenizer.bos_id, tokenizer.unk_id) == (0, 1, None, None)
    assert CharTokenizer.from_corpus(["cab", "ba"]).alphabet == "abc"


def test_char_unseen_characters_become_unk_or_raise():
    with_unk = CharTokenizer.from_corpus("hello", special_tokens=["<unk>"])
    ids = with_unk.encode("hex!")
    assert ids[2:] == [with_unk.unk_id, with_unk.unk_id]
    assert with_unk.decode(ids) == "he<unk><unk>"
    without_unk = CharTokenizer.from_corpus("hello")
    with pytest.raises(ValueError, match=r"'x' at position 2 is not in the alphabet"):
        without_unk.encode("hex")
    with pytest.raises(KeyError):
        without_unk.token_to_id("x")


def test_char_decode_skips_specials_and_checks_ids():
    tokenizer = CharTokenizer("ab", special_tokens=SPECIAL_TOKENS)
    ids = [tokenizer.bos_id, *tokenizer.encode("ab"), tokenizer.eos_id, tokenizer.pad_id]
    assert tokenizer.decode(ids) == "<bos>ab<eos><pad>"
    assert tokenizer.decode(ids, skip_special_tokens=True) == "ab"
    assert tokenizer.decode(np.array(ids)) == "<bos>ab<eos><pad>"
    for bad in (6, -1):
        with pytest.raises(ValueError, match=f"token id {bad} is out of range for a vocabulary of 6"):
            tokenizer.decode([bad])
    with pytest.raises(TypeError):
        tokenizer.decode([1.0])


@pytest.mark.parametrize("alphabet, specials, message", [
    ("aba", (), r"repeats the characters \['a'\]"),
    (["ab"], (), "one-character strings"),
    ("a<", ["<"], r"special tokens \['<'\] are also characters"),
    ("a", ["<eos>", "<eos>"], "distinct"),
    ("a", [""], "non-empty strings"),
])
def test_char_constructor_errors(alphabet, specials, message):
    with pytest.raises(ValueError, match=message):
        CharTokenizer(alphabet, specials)


def test_char_save_load_round_trip(tmp_path):
    tokenizer = CharTokenizer.from_corpus('ab"\\\n\t🙂\ud800 é', special_tokens=SPECIAL_TOKENS)
    path = tmp_path / "char.json"
    tokenizer.save(path)
    loaded = CharTokenizer.load(path)
    assert loaded.alphabet == tokenizer.alphabet and loaded.special_tokens == SPECIAL_TOKENS
    text = 'a"b🙂\ud800 \n?'
    assert loaded.encode(text) == tokenizer.encode(text)
    assert json.loads(path.read_text())["format"] == "CharTokenizer"
    assert os.listdir(tmp_path) == ["char.json"]


# ---- BPETokenizer -----------------------------------------------------------------------

@given(st.text())
def test_bpe_round_trips_any_text(bpe_tokenizer, text):
    ids = bpe_tokenizer.encode(text)
    assert all(0 <= i < 600 - 3 for i in ids)
    assert bpe_tokenizer.decode(ids) == text


@pytest.mark.parametrize("text", HARD_TEXTS)
def test_bpe_round_trips_hard_cases(bpe_tokenizer, text):
    assert bpe_tokenizer.decode(bpe_tokenizer.encode(text)) == text


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=300), st.text())
def test_bpe_trained_on_arbitrary_unicode_round_trips(training_text, text):
    tokenizer = BPETokenizer.train(training_text, vocab_size=300, min_frequency=1)
    assert tokenizer.decode(tokenizer.encode(text)) == text
    assert tokenizer.decode(tokenizer.encode(training_text)) == training_text


@pytest.fixture(scope="module")
def gappy_tokenizer():
    return BPETokenizer.train("aab ab-b 11.1 " * 20, vocab_size=270, pattern=r"[ab]+")


@given(st.text(alphabet="ab1 .-"))
def test_bpe_round_trips_with_a_pattern_that_leaves_gaps(gappy_tokenizer, text):
    assert gappy_tokenizer.decode(gappy_tokenizer.encode(text)) == text


def _reference_merges(text, vocab_size, min_frequency=2):
    """BPE the slow way: recount every pair over every piece before each merge."""
    words = Counter(tuple(piece.encode("utf-8")) for piece in re.findall(GPT2_SPLIT_PATTERN, text))
    merges = []
    while len(merges) < vocab_size - 256:
        counts = Counter()
        for word, frequency in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] += frequency
        if not counts:
            break
        best = min(counts, key=lambda pair: (-counts[pair], pair))
        if counts[best] < min_frequency:
            break
        merges.append(best)
        words = Counter({tuple(bpe._merge(list(word), best, 255 + len(merges))): frequency
                         for word, frequency in words.items()})
    return merges


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="aab  b\nçé-", max_size=200), st.integers(256, 300), st.integers(1, 3))
def test_bpe_training_matches_a_from_scratch_reference(text, vocab_size, min_frequency):
    tokenizer = BPETokenizer.train(text, vocab_size, min_frequency=min_frequency)
    assert tokenizer.merges == _reference_merges(text, vocab_size, min_frequency)


def test_bpe_training_matches_the_reference_on_the_corpus(corpus):
    text = corpus[:5000]
    assert BPETokenizer.train(text, 300).merges == _reference_merges(text, 300)


def test_bpe_training_is_deterministic_and_breaks_ties_by_smallest_pair(corpus, bpe_tokenizer):
    again = BPETokenizer.train(corpus, vocab_size=600, special_tokens=SPECIAL_TOKENS[:3])
    assert again.merges == bpe_tokenizer.merges
    # "ab" and "xy" each occur twice: the tie goes to (97, 98) = (a, b).
    tokenizer = BPETokenizer.train("xy ab xy ab", 260, pattern=r"\S+|\s+")
    assert tokenizer.merges == [(97, 98), (120, 121)]


def test_bpe_merges_shrink_the_training_corpus(corpus, bpe_tokenizer):
    merges = bpe_tokenizer.merges
    # Training is greedy, so a smaller vocabulary learns a prefix of the same merges.
    assert BPETokenizer.train(corpus, 256 + 40).merges == merges[:40]
    lengths = [len(BPETokenizer(merges[:k]).encode(corpus)) for k in (0, 40, 150, len(merges))]
    assert lengths[0] == len(corpus.encode("utf-8"))
    assert lengths == sorted(lengths, reverse=True) and len(set(lengths)) == 4
    assert lengths[-1] < 0.45 * lengths[0]


def test_bpe_vocabulary_layout(bpe_tokenizer):
    tokenizer = bpe_tokenizer
    assert tokenizer.vocab_size == 600 and len(tokenizer.merges) == 600 - 256 - 3
    assert (tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id, tokenizer.unk_id) == (597, 598, 599, None)
    assert tokenizer.id_to_token(ord("a")) == "a" and tokenizer.id_to_token(ord(" ")) == "Ġ"
    for token_id in range(tokenizer.vocab_size):
        assert tokenizer.token_to_id(tokenizer.id_to_token(token_id)) == token_id
    left, right = tokenizer.merges[0]
    assert tokenizer.token_bytes(256) == tokenizer.token_bytes(left) + tokenizer.token_bytes(right)
    assert tokenizer.token_bytes(599) == b"<eos>"
    the = tokenizer.encode(" the")
    assert len(the) == 1 and tokenizer.id_to_token(the[0]) == "Ġthe"
    with pytest.raises(KeyError):
        tokenizer.token_to_id("no such token")
    with pytest.raises(ValueError, match="token id 600 is out of range"):
        tokenizer.id_to_token(600)


def test_bpe_never_encodes_special_tokens_and_decode_can_skip_them(bpe_tokenizer):
    tokenizer = bpe_tokenizer
    ids = tokenizer.encode("<eos>")
    assert tokenizer.eos_id not in ids and tokenizer.decode(ids) == "<eos>"
    wrapped = [tokenizer.bos_id, *tokenizer.encode("hi"), tokenizer.eos_id]
    assert tokenizer.decode(wrapped) == "<bos>hi<eos>"
    assert tokenizer.decode(wrapped, skip_special_tokens=True) == "hi"


def test_bpe_decode_replaces_a_cut_character():
    tokenizer = BPETokenizer()
    ids = tokenizer.encode("é")
    assert len(ids) == 2 and tokenizer.decode(ids[:1]) == "\ufffd"


def test_bpe_training_arguments(corpus):
    with pytest.raises(ValueError, match=r"vocab_size must be at least 256 \+ 2 special tokens = 258"):
        BPETokenizer.train(corpus, 257, special_tokens=["<bos>", "<eos>"])
    # Every pair of "abcd" occurs once: min_frequency 2 stops before any merge.
    assert BPETokenizer.train("abcd", 1000).vocab_size == 256
    assert len(BPETokenizer.train("abcd", 1000, min_frequency=1).merges) == 3
    assert BPETokenizer.train(["ab ab", "ab"], 257).merges == [(97, 98)]
    with pytest.raises(UnicodeEncodeError):
        BPETokenizer().encode("\ud800")


def test_bpe_save_load_gives_identical_encodings(tmp_path, bpe_tokenizer, corpus):
    path = tmp_path / "bpe.json"
    bpe_tokenizer.save(path)
    loaded = BPETokenizer.load(path)
    assert loaded.merges == bpe_tokenizer.merges
    assert loaded.special_tokens == bpe_tokenizer.special_tokens
    assert loaded.pattern == bpe_tokenizer.pattern and loaded.vocab_size == 600
    for text in [corpus, *HARD_TEXTS]:
        assert loaded.encode(text) == bpe_tokenizer.encode(text)
    bpe_tokenizer.save(path)  # over an existing file
    assert os.listdir(tmp_path) == ["bpe.json"]
    assert BPETokenizer.load(str(path)).merges == bpe_tokenizer.merges


def _write(tmp_path, content):
    path = tmp_path / "tokenizer.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


GOOD_BPE = {"format": "BPETokenizer", "version": 1, "pattern": r"\S+", "special_tokens": ["<eos>"],
            "merges": [[97, 98], [256, 99]]}


@pytest.mark.parametrize("content, message", [
    ('{"format": "BPETokenizer", "vers', "not a valid JSON file"),
    ("", "not a valid JSON file"),
    (b'{"format": "\xff"}', "not a valid JSON file"),
    ('{"format": "BPETokenizer", "version": NaN}', "not a valid JSON file"),
    ([1, 2], "expected a JSON object, got list"),
    ({**GOOD_BPE, "format": "CharTokenizer"}, "expected format 'BPETokenizer', got 'CharTokenizer'"),
    ({**GOOD_BPE, "version": 2}, "unsupported version 2"),
    ({k: v for k, v in GOOD_BPE.items() if k != "merges"}, "missing field 'merges'"),
    ({**GOOD_BPE, "merges": [[97, 257]]}, r"merge 0 \[97, 257\] refers to id 257"),
    ({**GOOD_BPE, "merges": [[97, 98], [97, 98]]}, r"merge 1 repeats the pair \[97, 98\] of merge 0"),
    ({**GOOD_BPE, "merges": [[97, -1]]}, "refers to id -1"),
    ({**GOOD_BPE, "merges": [[97, "b"]]}, "refers to id 'b'"),
    ({**GOOD_BPE, "merges": [[97, 98.0]]}, "refers to id 98.0"),
    ({**GOOD_BPE, "merges": [[97]]}, r"'merges' must be a list of \[left_id, right_id\] pairs"),
    ({**GOOD_BPE, "merges": {"a": 1}}, "'merges' must be a list"),
    ({**GOOD_BPE, "special_tokens": ["<eos>", "<eos>"]}, "distinct"),
    ({**GOOD_BPE, "special_tokens": [3]}, "non-empty strings"),
    ({**GOOD_BPE, "pattern": "("}, "does not compile"),
    ({**GOOD_BPE, "pattern": None}, "pattern must be a string"),
])
def test_bpe_load_rejects_malformed_files(tmp_path, content, message):
    path = _write(tmp_path, content)
    with pytest.raises(ValueError, match=message) as error:
        BPETokenizer.load(path)
    assert str(path) in str(error.value)


@pytest.mark.parametrize("content, message", [
    ({"format": "CharTokenizer", "version": 1, "special_tokens": [], "alphabet": ["a", "a"]},
     "repeats the characters"),
    ({"format": "CharTokenizer", "version": 1, "special_tokens": [], "alphabet": "abc"},
     "must be lists of strings"),
    ({"format": "CharTokenizer", "version": 1, "alphabet": ["a"]}, "missing field 'special_tokens'"),
    ({"format": "CharTokenizer", "version": 1, "special_tokens": [], "alphabet": [1]},
     "one-character strings"),
])
def test_char_load_rejects_malformed_files(tmp_path, content, message):
    with pytest.raises(ValueError, match=message):
        CharTokenizer.load(_write(tmp_path, content))


def test_good_file_loads(tmp_path):
    tokenizer = BPETokenizer.load(_write(tmp_path, GOOD_BPE))
    assert tokenizer.encode("abc ab") == [257, 32, 256] and tokenizer.eos_id == 258


# ---- the Q&A set --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pairs():
    return load_qa("all")


def test_qa_has_enough_well_formed_pairs(pairs):
    assert len(pairs) >= 350
    assert len({p["id"] for p in pairs}) == len(pairs)
    assert {p["category"] for p in pairs} == CATEGORIES
    for pair in pairs:
        assert set(pair) <= {"id", "category", "context", "question", "answer"}
        assert re.fullmatch(re.escape(pair["category"]) + r"-\d{3}", pair["id"])
        turns = [*pair.get("context", []), pair]
        assert ("context" in pair) == (pair["category"] == "follow_up")
        for turn in turns:
            for text in (turn["question"], turn["answer"]):
                assert text and text == " ".join(text.split()) and text.isascii()
            assert len(turn["answer"]) <= 120
    prompts = [format_prompt(p["question"], p.get("context", ())) for p in pairs]
    assert len(set(prompts)) == len(prompts)


def test_qa_arithmetic_answers_are_right(pairs):
    operations = {"plus": int.__add__, "minus": int.__sub__, "times": int.__mul__,
                  "divided by": int.__floordiv__}
    arithmetic = [p for p in pairs if p["category"] == "arithmetic"]
    assert len(arithmetic) >= 50
    for pair in arithmetic:
        a, operation, b = re.fullmatch(r"(?:What|How much) is (\d+) (plus|minus|times|divided by) (\d+)\?",
                                       pair["question"]).groups()
        assert pair["answer"] == f"{a} {operation} {b} is {operations[operation](int(a), int(b))}."
        if operation == "divided by":
            assert int(a) % int(b) == 0


def test_qa_splits_are_deterministic_disjoint_and_stratified(pairs):
    train, validation = load_qa("train"), load_qa("validation")
    assert train == load_qa("train") and validation == load_qa("validation", seed=0)
    train_ids, validation_ids = {p["id"] for p in train}, {p["id"] for p in validation}
    assert not train_ids & validation_ids
    assert train_ids | validation_ids == {p["id"] for p in pairs}
    assert [p["id"] for p in train + validation] != [p["id"] for p in pairs]  # file order kept per split
    assert [p["id"] for p in train] == [p["id"] for p in pairs if p["id"] in train_ids]
    sizes, held_out = Counter(p["category"] for p in pairs), Counter(p["category"] for p in validation)
    assert held_out == {c: max(1, (n + 5) // 10) for c, n in sizes.items()}
    other = {p["id"] for p in load_qa("validation", seed=1)}
    assert other != validation_ids and len(other) == len(validation_ids)


def test_qa_returns_copies():
    load_qa("all")[0]["answer"] = "changed"
    assert load_qa("all")[0]["answer"] != "changed"


def test_split_names_are_checked():
    with pytest.raises(ValueError, match=r"split must be one of \['train', 'validation', 'all'\], got 'test'"):
        load_qa("test")
    with pytest.raises(ValueError, match="split must be one of"):
        load_corpus("valid")


def _datasheet(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as file:
        return file.read()


def test_qa_datasheet_counts_match_the_data(pairs):
    rows = re.findall(r"^\| \**(\w+)\** \| \**(\d+)\** \| \**(\d+)\** \| \**(\d+)\** \|",
                      _datasheet("qa_datasheet.md"), flags=re.M)
    table = {name: tuple(map(int, counts)) for name, *counts in rows}
    train, validation = load_qa("train"), load_qa("validation")
    expected = {c: tuple(sum(p["category"] == c for p in split) for split in (pairs, train, validation))
                for c in CATEGORIES}
    expected["total"] = (len(pairs), len(train), len(validation))
    assert table == expected


# ---- the corpus --------------------------------------------------------------------------

def test_corpus_size_splits_and_datasheet(corpus):
    train, validation = load_corpus("train"), load_corpus("validation")
    assert len(corpus) >= 50_000 and corpus.isascii()
    assert train + validation == corpus and load_corpus() == train
    assert train.endswith("\n") and 0.09 < len(validation) / len(corpus) < 0.11
    sheet = _datasheet("corpus_datasheet.md").replace(",", "")
    assert f"- {len(corpus)} characters" in sheet
    assert f"the first {len(train)} characters" in sheet and f"the last {len(validation)}" in sheet
    assert f"{len(set(corpus))} distinct" in sheet


def test_data_files_ship_with_the_package():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as file:
        patterns = tomllib.load(file)["tool"]["setuptools"]["package-data"]["ember"]
    files = os.listdir(DATA)
    assert {"qa.json", "qa_datasheet.md", "corpus.txt", "corpus_datasheet.md"} <= set(files)
    for name in files:
        assert any(fnmatch.fnmatch(f"text/data/{name}", pattern) for pattern in patterns), name
    assert sum(os.path.getsize(os.path.join(DATA, name)) for name in files) < 2_000_000


# ---- the GPT format ----------------------------------------------------------------------

FOLLOW_UP = {"id": "x-001", "category": "follow_up",
             "context": [{"question": "What is 3 plus 4?", "answer": "3 plus 4 is 7."}],
             "question": "And if you add\n 2 more?", "answer": "7 plus 2 is 9."}


def test_format_prompt_and_format_qa():
    assert format_prompt("Hi?") == "Q: Hi?\nA:"
    assert format_qa(FOLLOW_UP) == ("Q: What is 3 plus 4?\nA: 3 plus 4 is 7.\n"
                                    "Q: And if you add 2 more?\nA: 7 plus 2 is 9.")
    assert format_qa({"question": "a", "answer": "b"}) == "Q: a\nA: b"


@pytest.mark.parametrize("kind", ["char", "bpe"])
def test_encode_qa_layout(kind, pairs, bpe_tokenizer):
    tokenizer = (CharTokenizer.from_corpus(map(format_qa, pairs), SPECIAL_TOKENS) if kind == "char"
                 else bpe_tokenizer)
    ids, prompt_length = encode_qa(FOLLOW_UP, tokenizer)
    assert ids[0] == tokenizer.bos_id and ids[-1] == tokenizer.eos_id
    assert tokenizer.decode(ids[1:prompt_length]) == format_prompt(FOLLOW_UP["question"],
                                                                   FOLLOW_UP["context"])
    assert tokenizer.decode(ids[prompt_length:]) == " 7 plus 2 is 9.<eos>"
    assert tokenizer.decode(ids, skip_special_tokens=True) == format_qa(FOLLOW_UP)


def test_encode_qa_needs_bos_and_eos():
    with pytest.raises(ValueError, match=r"needs '<bos>' and '<eos>' special tokens, has \['<eos>'\]"):
        encode_qa(FOLLOW_UP, CharTokenizer.from_corpus(format_qa(FOLLOW_UP), ["<eos>"]))


def test_qa_blocks(pairs):
    tokenizer = CharTokenizer.from_corpus(map(format_qa, pairs), SPECIAL_TOKENS)
    chosen = pairs[:3] + [p for p in pairs if "context" in p][:2]
    inputs, targets = qa_blocks(chosen, tokenizer, block_size=200)
    masked_inputs, masked_targets = qa_blocks(chosen, tokenizer, block_size=200, answer_only=True)
    assert inputs.shape == targets.shape == (5, 200) and inputs.dtype == targets.dtype == np.int64
    np.testing.assert_array_equal(inputs, masked_inputs)
    for row, pair in enumerate(chosen):
        ids, prompt_length = encode_qa(pair, tokenizer)
        length = len(ids) - 1
        assert inputs[row, :length].tolist() == ids[:-1] and targets[row, :length].tolist() == ids[1:]
        assert (inputs[row, length:] == tokenizer.pad_id).all()
        assert (targets[row, length:] == IGNORE_INDEX).all()
        kept = masked_targets[row][masked_targets[row] != IGNORE_INDEX]
        assert tokenizer.decode(kept) == " " + pair["answer"] + "<eos>"
        assert (masked_targets[row, prompt_length - 1:length] == targets[row, prompt_length - 1:length]).all()


def test_qa_blocks_pads_with_eos_without_pad_and_checks_the_length():
    tokenizer = CharTokenizer.from_corpus(format_qa(FOLLOW_UP), ["<bos>", "<eos>"])
    ids, _ = encode_qa(FOLLOW_UP, tokenizer)
    inputs, targets = qa_blocks([FOLLOW_UP], tokenizer, block_size=len(ids) + 2)
    assert inputs[0, -3:].tolist() == [tokenizer.eos_id] * 3
    assert targets[0, -3:].tolist() == [IGNORE_INDEX] * 3 and targets[0, -4] == tokenizer.eos_id
    assert qa_blocks([FOLLOW_UP], tokenizer, block_size=len(ids) - 1)[1][0, -1] == tokenizer.eos_id
    with pytest.raises(ValueError, match=f"pair 'x-001' needs block_size >= {len(ids) - 1}, got {len(ids) - 2}"):
        qa_blocks([FOLLOW_UP], tokenizer, block_size=len(ids) - 2)
    with pytest.raises(ValueError, match="block_size must be positive"):
        qa_blocks([FOLLOW_UP], tokenizer, block_size=0)


def test_docstring_examples_run():
    for module in (char, bpe, data):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0
