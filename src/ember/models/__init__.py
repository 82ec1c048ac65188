"""Model files written against the PyTorch API, each readable in one sitting.

- :mod:`ember.models.gpt`: a decoder-only transformer language model (GPT) with key–value
  cached generation.
- :mod:`ember.models.reverser`: a one-block attention model that maps a sequence to an output
  per position (the ``transformer`` milestone's sequence-reversal task).
"""
