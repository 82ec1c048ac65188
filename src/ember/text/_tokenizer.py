"""What the character and byte-pair tokenizers share: special tokens, id checks, JSON files."""
import json
import operator
import os
import secrets

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)
_FORMAT_VERSION = 1


class Tokenizer:
    """Base of :class:`CharTokenizer` and :class:`BPETokenizer`.

    A subclass fills ``_special_tokens`` (a tuple of strings) and ``_special_ids`` (token →
    id), and implements ``vocab_size``, ``encode``, ``decode``, ``_to_json`` and
    ``_from_json``.
    """

    _special_tokens = ()
    _special_ids = {}

    @property
    def special_tokens(self):
        """The special tokens, a tuple of strings in the order their ids were given."""
        return self._special_tokens

    @property
    def pad_id(self):
        """Id of ``"<pad>"``, or ``None`` if it is not a special token."""
        return self._special_ids.get(PAD)

    @property
    def bos_id(self):
        """Id of ``"<bos>"`` (beginning of sequence), or ``None`` if it is not a special token."""
        return self._special_ids.get(BOS)

    @property
    def eos_id(self):
        """Id of ``"<eos>"`` (end of sequence), or ``None`` if it is not a special token."""
        return self._special_ids.get(EOS)

    @property
    def unk_id(self):
        """Id of ``"<unk>"`` (unknown character), or ``None`` if it is not a special token."""
        return self._special_ids.get(UNK)

    def save(self, path):
        """Write the tokenizer to ``path`` as JSON (UTF-8), atomically: a reader sees the old
        file or the new one, never half of one.

        Raises:
            OSError: the file cannot be written (e.g. its folder does not exist).
        """
        data = {"format": type(self).__name__, "version": _FORMAT_VERSION, **self._to_json()}
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
        directory = os.path.dirname(os.path.abspath(path))
        temporary = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
        # O_EXCL: never write through someone else's file or link; 0o666 lets the umask decide.
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise

    @classmethod
    def load(cls, path):
        """Read a tokenizer that :meth:`save` wrote. Only JSON is parsed; nothing is executed.

        Raises:
            OSError: the file cannot be read.
            ValueError: the file is not valid UTF-8 JSON, was written by another tokenizer class or
                format version, or its fields are missing or inconsistent; the message names
                the file and the problem.
        """
        with open(path, "rb") as file:
            content = file.read()
        try:
            data = json.loads(content, parse_constant=_reject_constant)
        except ValueError as error:
            raise ValueError(f"{path}: not a valid JSON file: {error}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
        if data.get("format") != cls.__name__:
            raise ValueError(f"{path}: expected format {cls.__name__!r}, got {data.get('format')!r}")
        if data.get("version") != _FORMAT_VERSION:
            raise ValueError(f"{path}: unsupported version {data.get('version')!r} "
                             f"(this ember reads version {_FORMAT_VERSION})")
        try:
            return cls._from_json(data)
        except (KeyError, TypeError, ValueError) as error:
            problem = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            raise ValueError(f"{path}: {problem}") from None

    def _set_special_tokens(self, special_tokens, first_id):
        tokens = tuple(special_tokens)
        for token in tokens:
            if not isinstance(token, str) or not token:
                raise ValueError(f"special tokens must be non-empty strings, got {token!r}")
        if len(set(tokens)) != len(tokens):
            raise ValueError(f"special tokens must be distinct, got {list(tokens)}")
        self._special_tokens = tokens
        self._special_ids = {token: first_id + k for k, token in enumerate(tokens)}

    def _check_id(self, token_id):
        token_id = operator.index(token_id)
        if not 0 <= token_id < self.vocab_size:
            raise ValueError(f"token id {token_id} is out of range for a vocabulary of "
                             f"{self.vocab_size} tokens")
        return token_id


def _reject_constant(name):
    raise ValueError(f"{name} is not allowed")
