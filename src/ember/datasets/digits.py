"""The handwritten digits bundled with scikit-learn (no download).

Source: the UCI "Optical Recognition of Handwritten Digits" test set (Alpaydin & Kaynak,
1998) as shipped by ``sklearn.datasets.load_digits``: 1,797 images of 8×8 pixels, each pixel
a count 0–16 of ink in a 4×4 block of the original 32×32 bitmap, digits 0–9 roughly balanced.
"""
import numpy as np

from .._creation import from_numpy
from ..utils.data import TensorDataset
from .split import stratified_split

IMAGE_SIZE = 8
NUM_CLASSES = 10
_MAX_PIXEL = 16.0


def load_digits(test_size=0.2, seed=0, flatten=True):
    """The digits as a stratified train/test split of NumPy arrays.

    Pixels are scaled from 0–16 to ``[0, 1]``. With the defaults the split holds 1,437 train
    and 360 test images.

    Args:
        test_size: fraction of the images held out for testing, in ``(0, 1)``. Default 0.2.
        seed: seed of the split; the same seed gives the same split. Default 0.
        flatten: if True, each image is a row of 64 pixels; if False, a ``(1, 8, 8)``
            single-channel image, the ``(C, H, W)`` layout ``nn.Conv2d`` expects.

    Returns:
        :class:`ArraySplit` with ``x_*`` of shape ``(N, 64)`` or ``(N, 1, 8, 8)``, dtype
        ``float32``, and ``y_*`` of shape ``(N,)``, dtype ``int64``, values 0–9.

    Raises:
        ValueError: ``test_size`` is outside ``(0, 1)``.

    Example::

        >>> from ember.datasets import load_digits
        >>> split = load_digits()
        >>> split.x_train.shape, split.x_train.dtype, split.y_test.shape
        ((1437, 64), dtype('float32'), (360,))
    """
    from sklearn.datasets import load_digits as load_sklearn_digits  # slow import; see split.py
    bunch = load_sklearn_digits()
    x = (bunch.data / _MAX_PIXEL).astype(np.float32)
    if not flatten:
        x = x.reshape(-1, 1, IMAGE_SIZE, IMAGE_SIZE)
    return stratified_split(x, bunch.target.astype(np.int64), test_size, seed)


def digits(split="train", flatten=True, test_size=0.2, seed=0):
    """One part of :func:`load_digits` as a ``TensorDataset`` of ember tensors.

    Args:
        split: ``"train"`` or ``"test"``.
        flatten, test_size, seed: as in :func:`load_digits`.

    Returns:
        ``TensorDataset(images, labels)``: images of shape ``(N, 64)`` or ``(N, 1, 8, 8)``,
        ``float32`` in ``[0, 1]``; labels of shape ``(N,)``, ``int64``.

    Raises:
        ValueError: ``split`` is not ``"train"`` or ``"test"``, or ``test_size`` is outside
            ``(0, 1)``.

    Example::

        >>> from ember.datasets import digits
        >>> len(digits("test")), digits("train")[0][0].shape
        (360, torch.Size([64]))
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    arrays = load_digits(test_size=test_size, seed=seed, flatten=flatten)
    x, y = (arrays.x_train, arrays.y_train) if split == "train" else (arrays.x_test, arrays.y_test)
    return TensorDataset(from_numpy(x), from_numpy(y))
