"""A train/test split of NumPy arrays, made deterministic and stratified."""
from typing import NamedTuple

import numpy as np


class ArraySplit(NamedTuple):
    """Inputs and labels of a train/test split, as NumPy arrays.

    Attributes:
        x_train: inputs, shape ``(N_train, *feature_shape)``, dtype ``float32``.
        y_train: class labels, shape ``(N_train,)``, dtype ``int64``.
        x_test: inputs, shape ``(N_test, *feature_shape)``, dtype ``float32``.
        y_test: class labels, shape ``(N_test,)``, dtype ``int64``.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def stratified_split(x, y, test_size, seed):
    """Split ``x`` and ``y`` so each class keeps its share in both parts.

    Args:
        x: inputs, shape ``(N, ...)``.
        y: class labels, shape ``(N,)``.
        test_size: fraction of the samples in the test part, in ``(0, 1)``.
        seed: seed of the shuffle; the same seed gives the same split.

    Raises:
        ValueError: ``test_size`` is outside ``(0, 1)`` (from scikit-learn's
            ``train_test_split``, which does the work), or a class has fewer than two samples.
    """
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be a fraction in (0, 1), got {test_size!r}")
    # scikit-learn takes seconds to import; only code that splits data should pay for it.
    from sklearn.model_selection import train_test_split
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=test_size, random_state=seed, stratify=y)
    return ArraySplit(np.ascontiguousarray(x_train), np.ascontiguousarray(y_train),
                      np.ascontiguousarray(x_test), np.ascontiguousarray(y_test))
