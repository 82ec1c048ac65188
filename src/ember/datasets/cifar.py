"""CIFAR-10 read from its Python batch files (``torchvision.datasets.CIFAR10`` without
downloads).

Source: Krizhevsky, *Learning Multiple Layers of Features from Tiny Images* (2009),
https://www.cs.toronto.edu/~kriz/cifar.html. The "python version" archive unpacks to
``cifar-10-batches-py/`` with five training batches ``data_batch_1`` … ``data_batch_5`` and
``test_batch``, 10,000 images each. A batch is a pickled dict: ``data``, a ``(10000, 3072)``
uint8 array whose rows hold the red, green and blue 32×32 planes in turn, and ``labels``, a
list of class indices 0–9.

The pickles are read by an unpickler that builds only dicts, lists, strings, bytes, numbers
and NumPy arrays: any other global a file names (``os.system``, ``builtins.eval``, ...) is
refused before anything is called, so opening a file from the internet runs no code.
"""
import pickle

import numpy as np

from ._image import ImageDataset, find_files

__all__ = ["CIFAR10", "read_cifar_batch"]

try:
    from numpy._core.multiarray import _reconstruct
    from numpy._core.numeric import _frombuffer
except ImportError:  # NumPy < 2
    from numpy.core.multiarray import _reconstruct
    from numpy.core.numeric import _frombuffer

_IMAGE_SHAPE = (3, 32, 32)


def _reconstruct_ndarray(subtype, shape, dtype):
    if subtype is not np.ndarray:
        raise pickle.UnpicklingError(f"refusing to build {subtype!r}: only numpy.ndarray")
    return _reconstruct(subtype, shape, dtype)


def _latin1_encode(text, encoding):
    # Python 3 pickles of protocol < 3 spell bytes as _codecs.encode(str, "latin1").
    if encoding != "latin1":
        raise pickle.UnpicklingError(f"refusing _codecs.encode with encoding {encoding!r}")
    return text.encode("latin1")


# Both the NumPy 1 and NumPy 2 module paths occur in files written by either version.
_ALLOWED_GLOBALS = {
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct_ndarray,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct_ndarray,
    ("numpy.core.numeric", "_frombuffer"): _frombuffer,
    ("numpy._core.numeric", "_frombuffer"): _frombuffer,
    ("_codecs", "encode"): _latin1_encode,
}


class _BatchUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        try:
            return _ALLOWED_GLOBALS[module, name]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refusing global {module}.{name}: a CIFAR-10 batch holds only dicts, lists, "
                "strings, numbers and NumPy arrays") from None


def read_cifar_batch(path):
    """The images and labels of one CIFAR-10 batch file.

    Returns:
        ``(images, labels)``: uint8 array ``(N, 32, 32, 3)`` (height, width, RGB channel) and
        int64 array ``(N,)`` of class indices 0–9.

    Raises:
        ValueError: the file is truncated or not a CIFAR-10 batch (no ``data``/``labels``,
            wrong shapes or types, labels outside 0–9), or it names a global other than
            NumPy's array reconstructors (the message says which; nothing was called).
        OSError: the file cannot be read.
    """
    with open(path, "rb") as file:
        try:
            # latin1 is how Python 3 reads the Python 2 strings of the original files.
            batch = _BatchUnpickler(file, encoding="latin1").load()
        except Exception as error:  # any failure inside a hostile or damaged pickle
            raise ValueError(f"{path}: not a readable CIFAR-10 batch: {error}") from error
    if not isinstance(batch, dict):
        raise ValueError(f"{path}: a CIFAR-10 batch is a dict, got {type(batch).__name__}")
    batch = {key.decode("latin1") if isinstance(key, bytes) else key: value
             for key, value in batch.items()}
    data, labels = batch.get("data"), batch.get("labels")
    columns = int(np.prod(_IMAGE_SHAPE))
    if not (isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 2
            and data.shape[1] == columns):
        described = (f"{data.dtype} array of shape {data.shape}" if isinstance(data, np.ndarray)
                     else type(data).__name__)
        raise ValueError(f"{path}: 'data' must be a uint8 array (N, {columns}), got {described}")
    labels = np.asarray(labels if labels is not None else [])
    if labels.shape != (len(data),) or (labels.size and labels.dtype.kind not in "iu"):
        raise ValueError(f"{path}: 'labels' must be {len(data)} integers (one per row of 'data'), "
                         f"got {labels.dtype} of shape {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= len(CIFAR10.classes)):
        raise ValueError(f"{path}: labels must lie in 0-{len(CIFAR10.classes) - 1}, "
                         f"got {labels.min()}..{labels.max()}")
    images = data.reshape(-1, *_IMAGE_SHAPE).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), labels.astype(np.int64)


class CIFAR10(ImageDataset):
    """CIFAR-10: 32×32 colour images of 10 classes, from the Python batch files in ``root``.

    ``torchvision.datasets.CIFAR10``'s interface, except that ember never downloads and an
    image is a NumPy array where torchvision gives a PIL image (``transforms.ToTensor``
    takes either).

    Args:
        root: directory holding ``cifar-10-batches-py/``, or holding the batch files itself.
        train: read ``data_batch_1`` … ``data_batch_5`` (50,000 images) if True, else
            ``test_batch`` (10,000).
        transform: callable applied to each image, e.g. ``transforms.ToTensor()``.
        target_transform: callable applied to each label.
        download: must be False.

    Attributes:
        data: uint8 NumPy array ``(N, 32, 32, 3)``, height × width × RGB (as torchvision).
        targets: list of ``N`` ints, the class indices.
        classes: the class names; ``class_to_idx`` maps them to indices.

    A sample is ``(image, target)``: without a transform, ``image`` is a ``(32, 32, 3)``
    uint8 NumPy array and ``target`` an ``int``.

    Raises:
        ValueError: ``download=True``; or a batch is truncated, malformed, or names a global
            other than NumPy's array reconstructors (see :func:`read_cifar_batch`).
        FileNotFoundError: a batch file is missing; the message names the files expected.

    Example::

        >>> from ember.datasets import CIFAR10
        >>> from ember.vision import transforms
        >>> test = CIFAR10("data", train=False, transform=transforms.ToTensor())  # doctest: +SKIP
        >>> test[0][0].shape  # doctest: +SKIP
        torch.Size([3, 32, 32])
    """

    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, train, transform, target_transform, download)
        names = [f"data_batch_{i}" for i in range(1, 6)] if train else ["test_batch"]
        paths = find_files(type(self).__name__, [f"{self.root}/cifar-10-batches-py", self.root],
                           names, gzipped=False)
        batches = [read_cifar_batch(paths[name]) for name in names]
        self.data = np.concatenate([images for images, _ in batches])
        self.targets = np.concatenate([labels for _, labels in batches]).tolist()

    def _image(self, index):
        return self.data[index]

    def _target(self, index):
        return self.targets[index]
