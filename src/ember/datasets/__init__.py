"""Small bundled data sets for learning and testing: no downloads.

Each loader returns NumPy arrays (``float32`` inputs, ``int64`` class labels), the form a
PyTorch user turns into tensors with ``torch.from_numpy``; :func:`digits` is the one-line
shortcut to a :class:`~ember.utils.data.TensorDataset`. Every split is deterministic for a
given ``seed`` and stratified, so each class keeps its share in train and test.

- :func:`load_digits`: scikit-learn's 1,797 handwritten digits (8×8 grey images, 10 classes).
- :func:`xor`: the four points of the XOR truth table, optionally as noisy clouds.
- :func:`linearly_separable`: two 2-D point clouds a straight line separates with a margin.

Image data sets read from files the user already has (ember never downloads), with
``torchvision.datasets``' constructors ``(root, train=True, transform=None,
target_transform=None)``; each is a map-style ``Dataset`` for a ``DataLoader``:

- :class:`MNIST`, :class:`FashionMNIST`: the IDX files ``train-images-idx3-ubyte``,
  ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``
  (optionally ``.gz``); images ``(28, 28)`` uint8.
- :class:`CIFAR10`: the Python batches ``data_batch_1`` … ``data_batch_5`` and
  ``test_batch`` in ``cifar-10-batches-py/``; images ``(32, 32, 3)`` uint8.
"""
from .cifar import CIFAR10
from .digits import digits, load_digits
from .mnist import MNIST, FashionMNIST
from .split import ArraySplit
from .synthetic import linearly_separable, xor

__all__ = ["ArraySplit", "CIFAR10", "FashionMNIST", "MNIST", "digits", "linearly_separable",
           "load_digits", "xor"]
