"""Module 11, tokenization: a character tokenizer's encode and decode, against the closed form
its docstring states (special tokens take ids 0..k-1, then the alphabet's characters in order)."""
from ember.text import CharTokenizer

from . import check, raises_like, same

ALPHABET = "abc d"


@check("11/char-encode", points=2)
def char_encode():
    plain = CharTokenizer(ALPHABET, special_tokens=("<bos>", "<eos>"))
    for text in ("", "a", "dab c", "cccc", "d a b"):
        same("CharTokenizer('abc d', ('<bos>', '<eos>')).encode", plain.encode(text),
             [2 + ALPHABET.index(c) for c in text], input=text)
    raises_like("encode('abz') without an <unk> token", lambda: plain.encode("abz"), ValueError)
    with_unk = CharTokenizer(ALPHABET, special_tokens=("<unk>",))
    same("CharTokenizer('abc d', ('<unk>',)).encode", with_unk.encode("az!b"), [1, 0, 0, 2], input="az!b")


@check("11/char-decode", points=2)
def char_decode():
    tokenizer = CharTokenizer(ALPHABET, special_tokens=("<bos>", "<eos>"))
    for ids, skip, text in (([], False, ""), ([2, 3, 4], False, "abc"), ([0, 2, 6, 1], False, "<bos>ad<eos>"),
                            ([0, 2, 6, 1], True, "ad")):
        same(f"decode({ids}, skip_special_tokens={skip})", tokenizer.decode(ids, skip_special_tokens=skip), text)
    same("decode([3, 2, 6, 5, 4, 2, 3])", tokenizer.decode([3, 2, 6, 5, 4, 2, 3]), "bad cab")
    raises_like("decode([7]) (vocab_size 7)", lambda: tokenizer.decode([7]), ValueError)
