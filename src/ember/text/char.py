"""A character-level tokenizer: one token per Unicode code point."""
from ._tokenizer import UNK, Tokenizer


class CharTokenizer(Tokenizer):
    """Maps each character (Unicode code point) of a fixed alphabet to one token id.

    Ids ``0 .. k-1`` are the ``k`` special tokens in the order given, then come the alphabet's
    characters in order. Special tokens never come out of :meth:`encode` except ``"<unk>"``:
    if ``"<unk>"`` is one of the special tokens, a character outside the alphabet encodes to
    it (so that text does not round-trip: it decodes to ``"<unk>"``); otherwise encoding such
    a character raises ``ValueError``. Text whose characters all lie in the alphabet
    round-trips exactly: ``decode(encode(text)) == text``.

    Args:
        alphabet: the characters, a string or an iterable of one-character strings, in id
            order; each at most once.
        special_tokens: strings that get their own ids before the alphabet, e.g.
            :data:`ember.text.SPECIAL_TOKENS` ``("<pad>", "<bos>", "<eos>", "<unk>")``.
            Default: none.

    Raises:
        ValueError: a character is not a one-character string or appears twice, a special
            token is empty, repeated, or equal to a character of the alphabet.

    Example::

        >>> from ember.text import CharTokenizer
        >>> tokenizer = CharTokenizer.from_corpus("hello world", special_tokens=["<unk>"])
        >>> tokenizer.vocab_size, tokenizer.encode("hold")
        (9, [4, 6, 5, 2])
        >>> tokenizer.decode(tokenizer.encode("hold!"))
        'hold<unk>'
    """

    def __init__(self, alphabet, special_tokens=()):
        characters = list(alphabet)
        for character in characters:
            if not isinstance(character, str) or len(character) != 1:
                raise ValueError(f"the alphabet must hold one-character strings, got {character!r}")
        if len(set(characters)) != len(characters):
            repeated = sorted({c for c in characters if characters.count(c) > 1})
            raise ValueError(f"the alphabet repeats the characters {repeated}")
        self._set_special_tokens(special_tokens, first_id=0)
        clashes = [token for token in self._special_tokens if token in characters]
        if clashes:
            raise ValueError(f"special tokens {clashes} are also characters of the alphabet")
        self._id_to_token = list(self._special_tokens) + characters
        self._char_to_id = {c: len(self._special_tokens) + k for k, c in enumerate(characters)}

    @classmethod
    def from_corpus(cls, text, special_tokens=()):
        """A tokenizer whose alphabet is every character of ``text``, sorted by code point.

        Args:
            text: a string, or an iterable of strings (e.g. lines or documents).
            special_tokens: as in the constructor.
        """
        texts = [text] if isinstance(text, str) else text
        characters = set()
        for piece in texts:
            characters.update(piece)
        return cls(sorted(characters), special_tokens)

    @property
    def alphabet(self):
        """The alphabet, a string of its characters in id order."""
        return "".join(self._char_to_id)

    @property
    def vocab_size(self):
        """Number of ids: special tokens plus characters."""
        return len(self._id_to_token)

    def token_to_id(self, token):
        """The id of a special token or of a character of the alphabet.

        Raises:
            KeyError: ``token`` is neither.
        """
        if token in self._special_ids:
            return self._special_ids[token]
        return self._char_to_id[token]

    def id_to_token(self, token_id):
        """The character or special token of ``token_id``.

        Raises:
            ValueError: ``token_id`` is not in ``[0, vocab_size)``.
        """
        return self._id_to_token[self._check_id(token_id)]

    def encode(self, text):
        """The token ids of ``text``, one per character: a list of ints.

        Raises:
            ValueError: a character is outside the alphabet and there is no ``"<unk>"`` token.
        """
        # course:begin 11/char-encode
        # hint: self._char_to_id maps a character to its id; unknown characters become the "<unk>" id
        # hint: (self._special_ids.get(UNK)) or raise the ValueError the docstring describes
        unk_id = self._special_ids.get(UNK)
        if unk_id is not None:
            return [self._char_to_id.get(c, unk_id) for c in text]
        try:
            return [self._char_to_id[c] for c in text]
        except KeyError:
            position, character = next((k, c) for k, c in enumerate(text) if c not in self._char_to_id)
            raise ValueError(f"character {character!r} at position {position} is not in the "
                             f"alphabet, and there is no {UNK!r} token") from None
        # course:end 11/char-encode

    def decode(self, ids, skip_special_tokens=False):
        """The text of a sequence of token ids (ints, NumPy integers or ``tensor.tolist()``).

        Special tokens decode to their own strings, e.g. ``"<eos>"``, unless
        ``skip_special_tokens`` is true, when they are left out.

        Raises:
            ValueError: an id is not in ``[0, vocab_size)``.
            TypeError: an id is not an integer.
        """
        # course:begin 11/char-decode
        # hint: self._check_id validates an id; special tokens have the ids below len(self._special_tokens)
        first_character = len(self._special_tokens)
        pieces = []
        for token_id in ids:
            token_id = self._check_id(token_id)
            if token_id >= first_character or not skip_special_tokens:
                pieces.append(self._id_to_token[token_id])
        return "".join(pieces)
        # course:end 11/char-decode

    def _to_json(self):
        return {"special_tokens": list(self._special_tokens), "alphabet": list(self._char_to_id)}

    @classmethod
    def _from_json(cls, data):
        alphabet, special_tokens = data["alphabet"], data["special_tokens"]
        if not isinstance(alphabet, list) or not isinstance(special_tokens, list):
            raise ValueError("'alphabet' and 'special_tokens' must be lists of strings")
        return cls(alphabet, special_tokens)
