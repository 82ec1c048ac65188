"""A byte-level byte-pair-encoding (BPE) tokenizer, trained on a corpus.

Byte-pair encoding (Gage, "A New Algorithm for Data Compression", 1994; for words, Sennrich
et al., "Neural Machine Translation of Rare Words with Subword Units", 2016) starts from a
base vocabulary and repeatedly merges the most frequent adjacent pair of tokens into a new
token. Byte-level BPE (Radford et al., "Language Models are Unsupervised Multitask Learners"
(GPT-2), 2019) takes the 256 byte values as the base vocabulary, so every UTF-8 text encodes
without an unknown token and decodes back exactly.
"""
import heapq
import re
from collections import Counter, defaultdict

from ._tokenizer import Tokenizer

# GPT-2's split pattern (openai/gpt-2, src/encoder.py) written for the standard ``re`` module,
# which lacks ``\p{L}`` and ``\p{N}``: a letter is ``[^\W\d_]``, a number ``\d``, and the
# rest of the non-space characters ``[^\s\w]`` or ``_``. A merge never crosses a piece, so
# words, numbers and punctuation runs stay apart and a word's leading space joins the word.
GPT2_SPLIT_PATTERN = (r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+"""
                      r"""|\s+(?!\S)|\s+""")
_BASE_SIZE = 256
_CACHE_LIMIT = 100_000


def _bytes_to_unicode():
    """GPT-2's printable stand-in for each byte (openai/gpt-2, src/encoder.py): printable
    Latin-1 bytes stand for themselves, the others move to code points from 256 up, so a
    token's bytes read as a string, e.g. ``b" the"`` as ``"Ġthe"``."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    shifted = [b for b in range(_BASE_SIZE) if b not in printable]
    table = {b: chr(b) for b in printable}
    table.update({b: chr(_BASE_SIZE + k) for k, b in enumerate(shifted)})
    return table


_BYTE_TO_CHAR = _bytes_to_unicode()


class BPETokenizer(Tokenizer):
    """Byte-level BPE: ids ``0..255`` are the bytes, id ``256 + r`` is the token that merge
    ``r`` makes, and the special tokens follow the last merge.

    Encoding splits the text into pieces with ``pattern`` (any text between matches is a
    piece too, so nothing is lost), turns each piece into its UTF-8 bytes, and applies the
    merges in rank order: while two adjacent tokens form a learned pair, the pair of lowest
    rank is merged everywhere in the piece. Each piece's ids are cached. ``encode`` never
    emits special tokens, even if their strings occur in the text; add their ids yourself
    (e.g. :attr:`bos_id`, :attr:`eos_id`). For every string that UTF-8 can encode,
    ``decode(encode(text)) == text``.

    Usually built by :meth:`train` or :meth:`load`.

    Args:
        merges: pairs ``(left_id, right_id)`` in rank order; merge ``r`` may use only ids below
            ``256 + r``.
        special_tokens: strings that get the ids after the last merge, e.g. ``("<pad>",
            "<bos>", "<eos>")``. Default: none.
        pattern: regular expression (``re`` syntax) that splits text into pieces before the
            merges. Default: :data:`GPT2_SPLIT_PATTERN`.

    Raises:
        ValueError: a merge refers to an id not yet made or repeats an earlier pair, a
            special token is empty or repeated, or ``pattern`` does not compile.

    Example::

        >>> from ember.text import BPETokenizer
        >>> tokenizer = BPETokenizer.train("low lower lowest " * 50, vocab_size=260)
        >>> [tokenizer.id_to_token(i) for i in tokenizer.encode(" lowest")]
        ['Ġlowe', 's', 't']
        >>> tokenizer.decode(tokenizer.encode("naïve 🙂"))
        'naïve 🙂'
    """

    def __init__(self, merges=(), special_tokens=(), pattern=GPT2_SPLIT_PATTERN):
        self._merges = []
        self._ranks = {}
        for rank, pair in enumerate(merges):
            left, right = pair
            for token_id in (left, right):
                if type(token_id) is not int or not 0 <= token_id < _BASE_SIZE + rank:
                    raise ValueError(f"merge {rank} {list(pair)} refers to id {token_id!r}; "
                                     f"it may use only ids in [0, {_BASE_SIZE + rank})")
            if (left, right) in self._ranks:
                raise ValueError(f"merge {rank} repeats the pair {[left, right]} of merge "
                                 f"{self._ranks[(left, right)]}")
            self._ranks[(left, right)] = rank
            self._merges.append((left, right))
        self._token_bytes = [bytes([b]) for b in range(_BASE_SIZE)]
        for left, right in self._merges:
            self._token_bytes.append(self._token_bytes[left] + self._token_bytes[right])
        self._set_special_tokens(special_tokens, first_id=len(self._token_bytes))
        if not isinstance(pattern, str):
            raise ValueError(f"pattern must be a string, got {pattern!r}")
        try:
            self._regex = re.compile(pattern)
        except re.error as error:
            raise ValueError(f"pattern {pattern!r} does not compile: {error}") from None
        self._pattern = pattern
        self._string_to_id = {self._token_string(i): i for i in range(len(self._token_bytes))}
        self._cache = {}

    @classmethod
    def train(cls, text, vocab_size, special_tokens=(), pattern=GPT2_SPLIT_PATTERN,
              min_frequency=2):
        """Learn merges from ``text`` until the vocabulary holds ``vocab_size`` tokens.

        Each step merges the adjacent pair with the highest count over the corpus (a piece
        that occurs ``n`` times counts ``n`` times; overlapping pairs such as the two in
        ``aaa`` both count); ties go to the smallest ``(left_id, right_id)``, so the same
        corpus always gives the same merges. Each distinct piece is stored once; a step
        rewrites only the pieces that hold the merged pair and moves the counts of its
        neighbouring pairs, and the best pair comes off a heap, so a step costs about the
        length of those pieces rather than the corpus size.

        Args:
            text: the corpus: a string, or an iterable of strings (documents are split into
                pieces separately, so no merge crosses two of them).
            vocab_size: the largest vocabulary wanted, counting the 256 bytes and the special
                tokens. Training stops earlier when no pair occurs ``min_frequency`` times.
            special_tokens, pattern: as in the constructor.
            min_frequency: the fewest occurrences a pair needs to be merged. Default 2.

        Returns:
            a :class:`BPETokenizer`.

        Raises:
            ValueError: ``vocab_size`` is smaller than ``256 + len(special_tokens)``, or as
                the constructor.
        """
        special_tokens = tuple(special_tokens)
        num_merges = vocab_size - _BASE_SIZE - len(special_tokens)
        if num_merges < 0:
            raise ValueError(f"vocab_size must be at least 256 + {len(special_tokens)} special "
                             f"tokens = {_BASE_SIZE + len(special_tokens)}, got {vocab_size}")
        splitter = cls(special_tokens=special_tokens, pattern=pattern)
        pieces = Counter()
        for document in [text] if isinstance(text, str) else text:
            pieces.update(splitter._pieces(document))
        words = [list(piece.encode("utf-8")) for piece in pieces]
        frequencies = list(pieces.values())

        pair_counts = defaultdict(int)
        # Which words may hold a pair; entries go stale as words change and are skipped then.
        holders = defaultdict(set)
        for index, (word, frequency) in enumerate(zip(words, frequencies)):
            for pair in zip(word, word[1:]):
                pair_counts[pair] += frequency
                holders[pair].add(index)
        # Lazy-deletion heap: an entry whose count differs from pair_counts is stale.
        heap = [(-count, pair) for pair, count in pair_counts.items()]
        heapq.heapify(heap)

        merges = []
        while len(merges) < num_merges and heap:
            negative_count, pair = heapq.heappop(heap)
            if -negative_count != pair_counts.get(pair):
                continue
            if -negative_count < min_frequency:
                break
            new_id = _BASE_SIZE + len(merges)
            merges.append(pair)
            changed = set()
            for index in holders.pop(pair):
                words[index] = _merge(words[index], pair, new_id, frequencies[index], index,
                                      pair_counts, holders, changed)
            for changed_pair in changed:
                count = pair_counts[changed_pair]
                if count > 0:
                    heapq.heappush(heap, (-count, changed_pair))
                else:
                    del pair_counts[changed_pair]
        return cls(merges, special_tokens, pattern)

    @property
    def vocab_size(self):
        """Number of ids: 256 bytes, one per merge, and the special tokens."""
        return len(self._token_bytes) + len(self._special_tokens)

    @property
    def merges(self):
        """The merges in rank order, a list of ``(left_id, right_id)`` tuples."""
        return list(self._merges)

    @property
    def pattern(self):
        """The regular expression that splits text into pieces before the merges."""
        return self._pattern

    def token_bytes(self, token_id):
        """The bytes of a token; a special token gives its string's UTF-8 bytes.

        Raises:
            ValueError: ``token_id`` is not in ``[0, vocab_size)``.
        """
        token_id = self._check_id(token_id)
        if token_id < len(self._token_bytes):
            return self._token_bytes[token_id]
        return self._special_tokens[token_id - len(self._token_bytes)].encode("utf-8")

    def id_to_token(self, token_id):
        """A token as a string: a special token as itself, any other in GPT-2's byte-level
        form (one printable character per byte; a space shows as ``"Ġ"``).

        Raises:
            ValueError: ``token_id`` is not in ``[0, vocab_size)``.
        """
        token_id = self._check_id(token_id)
        if token_id < len(self._token_bytes):
            return self._token_string(token_id)
        return self._special_tokens[token_id - len(self._token_bytes)]

    def token_to_id(self, token):
        """The id of a token in the form :meth:`id_to_token` gives. A special token wins over a
        byte-level token with the same spelling.

        Raises:
            KeyError: ``token`` is not in the vocabulary.
        """
        if token in self._special_ids:
            return self._special_ids[token]
        return self._string_to_id[token]

    def encode(self, text):
        """The token ids of ``text``, a list of ints; never a special token's id.

        Raises:
            UnicodeEncodeError: ``text`` holds a lone surrogate, which UTF-8 cannot encode.
        """
        ids = []
        cache = self._cache
        for piece in self._pieces(text):
            piece_ids = cache.get(piece)
            if piece_ids is None:
                piece_ids = self._encode_bytes(piece.encode("utf-8"))
                if len(cache) < _CACHE_LIMIT:
                    cache[piece] = piece_ids
            ids.extend(piece_ids)
        return ids

    def decode(self, ids, skip_special_tokens=False):
        """The text of a sequence of token ids (ints, NumPy integers or ``tensor.tolist()``).

        Special tokens decode to their own strings unless ``skip_special_tokens`` is true.
        Bytes that do not form valid UTF-8 (e.g. a sequence cut inside a character, as a
        model may generate) decode to U+FFFD, as ``bytes.decode(errors="replace")`` does.

        Raises:
            ValueError: an id is not in ``[0, vocab_size)``.
            TypeError: an id is not an integer.
        """
        num_regular = len(self._token_bytes)
        pieces = []
        for token_id in ids:
            token_id = self._check_id(token_id)
            if token_id < num_regular:
                pieces.append(self._token_bytes[token_id])
            elif not skip_special_tokens:
                pieces.append(self._special_tokens[token_id - num_regular].encode("utf-8"))
        return b"".join(pieces).decode("utf-8", errors="replace")

    def _pieces(self, text):
        position = 0
        for match in self._regex.finditer(text):
            start, end = match.span()
            if start > position:
                yield text[position:start]
            if end > start:
                yield text[start:end]
                position = end
        if position < len(text):
            yield text[position:]

    def _encode_bytes(self, data):
        ids = list(data)
        ranks = self._ranks
        while len(ids) > 1:
            pair = min(zip(ids, ids[1:]), key=lambda p: ranks.get(p, len(ranks)))
            rank = ranks.get(pair)
            if rank is None:
                break
            ids = _merge(ids, pair, _BASE_SIZE + rank)
        return ids

    def _token_string(self, token_id):
        return "".join(_BYTE_TO_CHAR[b] for b in self._token_bytes[token_id])

    def _to_json(self):
        return {"pattern": self._pattern, "special_tokens": list(self._special_tokens),
                "merges": [list(pair) for pair in self._merges]}

    @classmethod
    def _from_json(cls, data):
        merges, special_tokens = data["merges"], data["special_tokens"]
        if not isinstance(merges, list) or not all(isinstance(m, list) and len(m) == 2
                                                   for m in merges):
            raise ValueError("'merges' must be a list of [left_id, right_id] pairs")
        if not isinstance(special_tokens, list):
            raise ValueError("'special_tokens' must be a list of strings")
        return cls([tuple(m) for m in merges], special_tokens, data["pattern"])


def _merge(ids, pair, new_id, frequency=0, index=None, pair_counts=None, holders=None,
           changed=None):
    """``ids`` with every occurrence of ``pair``, scanned left to right, replaced by ``new_id``.

    In training (``pair_counts`` given), also moves the counts of the pairs around each
    occurrence, weighted by the word's ``frequency``, to the pairs that replace them, and
    records word ``index`` as a holder of the new pairs, in the manner of Hugging Face
    tokenizers' ``Word::merge``: the left neighbour is already the merged sequence's last
    token, so runs like ``a b a b`` come out right.
    """
    left, right = pair
    merged = []
    k, n = 0, len(ids)
    while True:
        # list.index scans in C; most tokens of a piece are not the pair's left half.
        try:
            k_left = ids.index(left, k)
        except ValueError:
            break
        if k_left + 1 == n or ids[k_left + 1] != right:
            merged += ids[k:k_left + 1]
            k = k_left + 1
            continue
        merged += ids[k:k_left]
        if pair_counts is not None:
            updates = [(pair, -frequency)]
            if merged:
                updates += [((merged[-1], left), -frequency), ((merged[-1], new_id), frequency)]
            if k_left + 2 < n:
                following = ids[k_left + 2]
                updates += [((right, following), -frequency), ((new_id, following), frequency)]
            for updated, delta in updates:
                pair_counts[updated] += delta
                changed.add(updated)
                if delta > 0:
                    holders[updated].add(index)
        merged.append(new_id)
        k = k_left + 2
    merged += ids[k:]
    return merged
