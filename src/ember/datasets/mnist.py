"""MNIST and Fashion-MNIST read from their IDX files (``torchvision.datasets.MNIST`` without
downloads).

The IDX format (LeCun, Cortes & Burges, http://yann.lecun.com/exdb/mnist/): two zero bytes,
a type byte (``0x08`` unsigned byte, ``0x09`` signed byte, ``0x0B`` int16, ``0x0C`` int32,
``0x0D`` float32, ``0x0E`` float64), a byte giving the number of dimensions, one big-endian
uint32 per dimension, then the values in C order, big-endian. Fashion-MNIST (Xiao, Rasul &
Vollgraf, 2017) uses the same format and the same file names.
"""
import gzip
import math
import struct
import zlib

import numpy as np

from .._creation import from_numpy
from ._image import ImageDataset, find_files

__all__ = ["MNIST", "FashionMNIST", "read_idx"]

_IDX_TYPES = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_GZIP_MAGIC = b"\x1f\x8b"


def read_idx(path):
    """The array stored in the IDX file ``path``, gzipped or not.

    Returns:
        A writable ``numpy.ndarray`` in native byte order with the file's shape and type
        (``uint8`` for MNIST's images ``(N, 28, 28)`` and labels ``(N,)``).

    Raises:
        ValueError: the file is not IDX, is truncated, has bytes after the data, or is a
            damaged gzip stream. Nothing is returned in part.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as file:
        raw = file.read()
    if raw[:2] == _GZIP_MAGIC:  # detected by content: a renamed .gz file still reads
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as error:
            raise ValueError(f"{path}: damaged or truncated gzip data ({error})") from error
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{path}: not an IDX file (magic number {raw[:4].hex() or 'missing'}, "
                         "expected 0000 followed by a type byte 08, 09, 0b, 0c, 0d or 0e)")
    ndim, dtype = raw[3], np.dtype(_IDX_TYPES[raw[2]])
    offset = 4 + 4 * ndim
    if len(raw) < offset:
        raise ValueError(f"{path}: truncated IDX header ({len(raw)} bytes, {offset} needed "
                         f"for {ndim} dimensions)")
    shape = struct.unpack(f">{ndim}I", raw[4:offset])
    expected = offset + math.prod(shape) * dtype.itemsize
    if len(raw) != expected:
        raise ValueError(f"{path}: {len(raw)} bytes, but an IDX array of shape {shape} and type "
                         f"{dtype} takes {expected}: the file is truncated or corrupt")
    array = np.frombuffer(raw, dtype=dtype, offset=offset).reshape(shape)
    return array.astype(dtype.newbyteorder("="))


class MNIST(ImageDataset):
    """The MNIST handwritten digits (LeCun et al., 1998) from the IDX files in ``root``.

    ``torchvision.datasets.MNIST``'s interface, except that ember never downloads and an
    image is a NumPy array where torchvision gives a PIL image (``transforms.ToTensor``
    takes either).

    Args:
        root: directory holding the files, or holding ``MNIST/raw/`` with them (torchvision's
            layout; ``FashionMNIST/raw/`` for :class:`FashionMNIST`).
        train: read ``train-images-idx3-ubyte`` and ``train-labels-idx1-ubyte`` (60,000
            images) if True, else ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte``
            (10,000). Each file may be gzipped and named with ``.gz`` appended.
        transform: callable applied to each image, e.g. ``transforms.ToTensor()``.
        target_transform: callable applied to each label.
        download: must be False.

    Attributes:
        data: uint8 tensor ``(N, H, W)`` (``(N, 28, 28)`` for MNIST), 0 = background.
        targets: int64 tensor ``(N,)`` of class indices.
        classes: the class names; ``class_to_idx`` maps them to indices.

    A sample is ``(image, target)``: without a transform, ``image`` is a ``(H, W)`` uint8
    NumPy array and ``target`` an ``int``.

    Raises:
        ValueError: ``download=True``; or a file is not IDX, is truncated or corrupt, the
            images are not ``(N, H, W)`` uint8, the label count differs from the image count,
            or a label is not a class index.
        FileNotFoundError: the two files are in neither ``root`` nor torchvision's
            ``root/MNIST/raw``; the message names them.

    Example::

        >>> from ember.datasets import MNIST
        >>> from ember.vision import transforms
        >>> train = MNIST("data", train=True, transform=transforms.ToTensor())  # doctest: +SKIP
        >>> image, label = train[0]  # doctest: +SKIP
        >>> image.shape, image.dtype, label  # doctest: +SKIP
        (torch.Size([1, 28, 28]), ember.float32, 5)
    """

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, train, transform, target_transform, download)
        split = "train" if train else "t10k"
        names = [f"{split}-images-idx3-ubyte", f"{split}-labels-idx1-ubyte"]
        dataset = type(self).__name__
        paths = find_files(dataset, [self.root, f"{self.root}/{dataset}/raw"], names)
        images, labels = (read_idx(paths[name]) for name in names)
        if images.ndim != 3 or images.dtype != np.uint8:
            raise ValueError(f"{paths[names[0]]}: expected uint8 images (N, H, W), got "
                             f"{images.dtype} of shape {images.shape}")
        if labels.shape != images.shape[:1]:
            raise ValueError(f"{paths[names[1]]}: expected {len(images)} labels (one per image) "
                             f"of shape ({len(images)},), got shape {labels.shape}")
        if labels.size and labels.max() >= len(self.classes):
            raise ValueError(f"{paths[names[1]]}: label {labels.max()} is not one of the "
                             f"{len(self.classes)} class indices")
        self.data = from_numpy(images)
        self.targets = from_numpy(labels.astype(np.int64))

    def _image(self, index):
        return self.data[index].numpy()

    def _target(self, index):
        return int(self.targets[index])


class FashionMNIST(MNIST):
    """Fashion-MNIST (Xiao, Rasul & Vollgraf, 2017): 28×28 grey images of 10 kinds of clothing,
    in MNIST's IDX files under MNIST's file names. Arguments, attributes and errors as in
    :class:`MNIST` (torchvision's layout directory is ``root/FashionMNIST/raw``)."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]
