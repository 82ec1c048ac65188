"""Text for language models: tokenizers and bundled data (no downloads).

Tokenizers (both save to and load from JSON; loading never executes code):

- :class:`CharTokenizer`: one token per character of a fixed alphabet, optional special
  tokens, ``"<unk>"`` for characters outside the alphabet.
- :class:`BPETokenizer`: byte-level byte-pair encoding as in GPT-2, trained on a corpus with
  :meth:`BPETokenizer.train`; round-trips any UTF-8 text exactly.

Data (``data/*_datasheet.md`` give sources, counts, licence and limitations):

- :func:`load_qa`: a few hundred short conversational question–answer pairs in ten
  categories, with a fixed stratified train/validation split.
- :func:`load_corpus`: about 57 KB of English prose for character-level language modelling.
- :func:`format_prompt`, :func:`format_qa`, :func:`encode_qa`, :func:`qa_blocks`: the
  ``"Q: ...\\nA: ..."`` format a GPT is trained on and answers in (see :mod:`ember.text.data`).
"""
from ._tokenizer import BOS, EOS, PAD, SPECIAL_TOKENS, UNK, Tokenizer
from .bpe import GPT2_SPLIT_PATTERN, BPETokenizer
from .char import CharTokenizer
from .data import IGNORE_INDEX, encode_qa, format_prompt, format_qa, load_corpus, load_qa, qa_blocks

__all__ = ["BOS", "BPETokenizer", "CharTokenizer", "EOS", "GPT2_SPLIT_PATTERN", "IGNORE_INDEX",
           "PAD", "SPECIAL_TOKENS", "Tokenizer", "UNK", "encode_qa", "format_prompt",
           "format_qa", "load_corpus", "load_qa", "qa_blocks"]
