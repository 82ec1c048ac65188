"""Small bundled data sets for learning and testing: no downloads.

Each loader returns NumPy arrays (``float32`` inputs, ``int64`` class labels), the form a
PyTorch user turns into tensors with ``torch.from_numpy``; :func:`digits` is the one-line
shortcut to a :class:`~ember.utils.data.TensorDataset`. Every split is deterministic for a
given ``seed`` and stratified, so each class keeps its share in train and test.

- :func:`load_digits`: scikit-learn's 1,797 handwritten digits (8×8 grey images, 10 classes).
- :func:`xor`: the four points of the XOR truth table, optionally as noisy clouds.
- :func:`linearly_separable`: two 2-D point clouds a straight line separates with a margin.
"""
from .digits import digits, load_digits
from .split import ArraySplit
from .synthetic import linearly_separable, xor

__all__ = ["ArraySplit", "digits", "linearly_separable", "load_digits", "xor"]
