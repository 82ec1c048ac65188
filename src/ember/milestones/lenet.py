"""1998 — LeCun, Bottou, Bengio & Haffner: a convolutional network reads handwriting.

*Gradient-Based Learning Applied to Document Recognition* (Proc. IEEE 86(11), 1998)
described LeNet-5: small learned filters slid over the image (convolutions share their
weights across positions, so a stroke detector works anywhere), each followed by
subsampling, which buys tolerance to small shifts and distortions, and a few fully
connected layers on top. Trained by backpropagation end to end, it reached 0.95 % test
error on MNIST and read cheques in production. Its layout, for a 32×32 input::

    C1  Conv2d(C, 6, 5)    → 6 × 28 × 28      S2  MaxPool2d(2) → 6 × 14 × 14
    C3  Conv2d(6, 16, 5)   → 16 × 10 × 10     S4  MaxPool2d(2) → 16 × 5 × 5
    C5  Linear(400, 120)   F6  Linear(120, 84)   output  Linear(84, 10)

This is the network as a PyTorch user writes it today: ReLU where the paper had a scaled
tanh, max pooling where it had a trainable average, every C3 map reading all six S2 maps
(the paper used a sparse table), softmax cross-entropy instead of RBF output units, and
Adam instead of the paper's diagonal Levenberg–Marquardt step. As the paper fed MNIST's
28×28 digits centred in a 32×32 field, so do we (``Pad(2)``); training adds random shifts
of up to 2 pixels (``RandomCrop(32, padding=2)``), the simplest of the paper's distortions.

**Data.** By default the milestone runs on scikit-learn's bundled handwritten digits
(1,437 train / 360 test images, no download). Each of their 8×8 pixels counts the ink, 0–16,
in a 4×4 block of the original 32×32 bitmap (see :mod:`ember.datasets.digits`); repeating
every pixel over its 4×4 block restores a 32×32 image (blocky: the detail is gone) with grey
level ``count · 255 / 16``. Inputs are normalised with the training set's mean and standard
deviation.

With ``--data-dir DIR`` (:func:`milestone` with ``data_dir``) it trains on files the user
has instead, chosen by their names:

- ``DIR/cifar-10-batches-py/data_batch_1`` or ``DIR/data_batch_1`` (CIFAR-10 Python batches):
  CIFAR-10, 3 × 32 × 32 colour images, also randomly flipped left–right;
  threshold 0.55, 10 epochs (fast: 2).
- ``train-images-idx3-ubyte[.gz]`` in ``DIR``, ``DIR/MNIST/raw`` or ``DIR/FashionMNIST/raw``
  (IDX files): Fashion-MNIST if they lie in ``FashionMNIST/raw`` or ``DIR``'s own name
  contains "fashion" (the two share file names), else MNIST; threshold 0.98 for MNIST,
  0.85 for Fashion-MNIST, 4 epochs (fast: 1).

Those thresholds are what LeNet-5 is known to reach on the full data sets; a run on them
takes minutes, not seconds.
"""
import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import ember as torch
from ember import nn
from ember.datasets import CIFAR10, MNIST, FashionMNIST, load_digits
from ember.utils.data import DataLoader, Dataset
from ember.vision import transforms

from .milestone import Milestone, Threshold
from .training import fit

INPUT_SIZE = 32
NUM_CLASSES = 10
_DIGIT_BLOCK = 4  # each 8×8 digits pixel summarises a 4×4 block of a 32×32 bitmap
_IDX_TRAIN_IMAGES = "train-images-idx3-ubyte"


def lenet5(in_channels=1):
    """LeNet-5 with today's layers: ``(N, in_channels, 32, 32)`` → logits ``(N, 10)``."""
    return nn.Sequential(
        nn.Conv2d(in_channels, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, NUM_CLASSES))


class BlockDigits(Dataset):
    """scikit-learn's digits as 32×32 grey images: ``(32, 32)`` uint8 arrays, int labels.

    Args:
        train: the training part of :func:`~ember.datasets.load_digits`'s split, else the test part.
        transform: callable applied to each image, or None.
        seed: seed of the split.
    """

    def __init__(self, train, transform, seed):
        split = load_digits(seed=seed, flatten=False)
        images, labels = (split.x_train, split.y_train) if train else (split.x_test, split.y_test)
        grey = np.rint(images[:, 0] * 255).astype(np.uint8)
        self.data = grey.repeat(_DIGIT_BLOCK, axis=1).repeat(_DIGIT_BLOCK, axis=2)
        self.targets = labels
        self.transform = transform

    def __getitem__(self, index):
        image = self.data[index]
        if self.transform is not None:
            image = self.transform(image)
        return image, int(self.targets[index])

    def __len__(self):
        return len(self.data)


@dataclass(frozen=True)
class ImageData:
    """One source of images and how LeNet-5 trains on it.

    Attributes:
        name: shown in the story and the curves' legend.
        dataset: ``dataset(train, transform, seed)`` → a Dataset of uint8 images
            ``(H, W)`` or ``(H, W, C)`` with a ``data`` attribute holding all of them.
        channels: ``C`` of the network's input.
        augment: transforms applied to training images only, before ``ToTensor``.
        prepare: transforms applied to every image first (bringing it to 32×32).
        threshold: the test accuracy a run must reach.
        epochs, fast_epochs: passes over the training set, normally and with ``fast``.
        batch_size: images per step.
    """

    name: str
    dataset: Callable
    channels: int
    augment: tuple
    prepare: tuple
    threshold: float
    epochs: int
    fast_epochs: int
    batch_size: int


DIGITS = ImageData("scikit-learn digits", BlockDigits, channels=1,
                   augment=(transforms.RandomCrop(INPUT_SIZE, padding=2),), prepare=(),
                   threshold=0.97, epochs=12, fast_epochs=6, batch_size=32)


def _idx_data(name, dataset_class, threshold, root):
    return ImageData(name, lambda train, transform, seed: dataset_class(root, train, transform),
                     channels=1, augment=(transforms.RandomCrop(INPUT_SIZE, padding=2),),
                     prepare=(transforms.Pad(2),), threshold=threshold, epochs=4, fast_epochs=1,
                     batch_size=64)


def _cifar_data(root):
    return ImageData("CIFAR-10", lambda train, transform, seed: CIFAR10(root, train, transform),
                     channels=3, augment=(transforms.RandomCrop(INPUT_SIZE, padding=4),
                                          transforms.RandomHorizontalFlip()),
                     prepare=(), threshold=0.55, epochs=10, fast_epochs=2, batch_size=64)


def find_image_data(data_dir):
    """The :class:`ImageData` for the files in ``data_dir``, told apart by their names (see
    the module's docstring).

    Raises:
        FileNotFoundError: ``data_dir`` holds neither CIFAR-10 batches nor MNIST-format files;
            the message names the files looked for.
    """
    root = Path(data_dir).expanduser()
    if any((d / "data_batch_1").is_file() for d in (root / "cifar-10-batches-py", root)):
        return _cifar_data(root)
    if _holds_idx_files(root):
        fashion = "fashion" in root.resolve().name.lower()
    elif _holds_idx_files(root / "MNIST" / "raw"):
        fashion = False
    elif _holds_idx_files(root / "FashionMNIST" / "raw"):
        fashion = True
    else:
        raise FileNotFoundError(
            f"{root}: found neither CIFAR-10 batches (cifar-10-batches-py/data_batch_1 ... "
            f"test_batch) nor MNIST-format files ({_IDX_TRAIN_IMAGES}[.gz] and the other three, "
            "in the directory, MNIST/raw or FashionMNIST/raw)")
    if fashion:
        return _idx_data("Fashion-MNIST", FashionMNIST, 0.85, root)
    return _idx_data("MNIST", MNIST, 0.98, root)


def _holds_idx_files(directory):
    return any((directory / name).is_file()
               for name in (_IDX_TRAIN_IMAGES, _IDX_TRAIN_IMAGES + ".gz"))


def channel_statistics(images):
    """Per-channel mean and standard deviation of uint8 images ``(N, H, W)`` or
    ``(N, H, W, C)``, on ``ToTensor``'s ``[0, 1]`` scale: tuples of ``C`` floats.

    Counting the 256 grey levels gives the exact values with no float copy of the images.
    """
    images = np.asarray(images)
    if images.ndim == 3:
        images = images[..., None]
    levels = np.arange(256) / 255
    means, stds = [], []
    for channel in range(images.shape[-1]):
        counts = np.bincount(images[..., channel].ravel(), minlength=256)
        mean = counts @ levels / counts.sum()
        means.append(float(mean))
        stds.append(math.sqrt(counts @ (levels - mean) ** 2 / counts.sum()))
    return tuple(means), tuple(stds)


def accuracy(model, loader):
    """``(accuracy, cross-entropy)``: the fraction of ``loader``'s images whose largest logit is
    at their label, and the mean loss over them, from one pass."""
    correct = total = loss = 0.0
    for inputs, targets in loader:
        logits = model(inputs)
        correct += (logits.argmax(dim=1) == targets).sum().item()
        loss += nn.functional.cross_entropy(logits, targets, reduction="sum").item()
        total += len(targets)
    return correct / total, loss / total


def train(fast=False, seed=0, quiet=False, data=DIGITS):
    _, history, _ = train_lenet(fast, seed, quiet, data)
    return {"test accuracy": history.accuracy[-1]}, {f"LeNet-5 on {data.name}": history}


def train_lenet(fast=False, seed=0, quiet=False, data=DIGITS):
    """The trained LeNet-5 (in eval mode), its :class:`History` and the test loader
    (normalised ``(N, C, 32, 32)`` float32 images, int64 labels, batches of 1000)."""
    torch.manual_seed(seed)
    train_set = data.dataset(True, None, seed)
    normalize = transforms.Normalize(*channel_statistics(train_set.data))
    to_input = (transforms.ToTensor(), normalize)
    train_set.transform = transforms.Compose([*data.prepare, *data.augment, *to_input])
    test_set = data.dataset(False, transforms.Compose([*data.prepare, *to_input]), seed)
    loader = DataLoader(train_set, batch_size=data.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    test_loader = DataLoader(test_set, batch_size=1000)
    model = lenet5(data.channels)
    epochs = data.fast_epochs if fast else data.epochs
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=max(1, 2 * epochs // 3),
                                                gamma=0.1)
    history = fit(model, loader, nn.CrossEntropyLoss(), optimizer, epochs,
                  evaluate=lambda model: accuracy(model, test_loader),
                  desc=f"lenet: {data.name}", scheduler=scheduler, quiet=quiet)
    return model.eval(), history, test_loader


def milestone(data_dir=None):
    """The ``lenet`` milestone on the bundled digits, or on the image files in ``data_dir``.

    Raises:
        FileNotFoundError: ``data_dir`` holds no image files this milestone reads.
    """
    data = DIGITS if data_dir is None else find_image_data(data_dir)
    return Milestone(
        name="lenet", year=1998,
        story="LeCun, Bottou, Bengio & Haffner: LeNet-5, a convolutional network, reads "
              + ("handwriting" if data is DIGITS else data.name),
        thresholds=(Threshold("test accuracy", data.threshold),),
        train=functools.partial(train, data=data), accuracy_label="test accuracy")


MILESTONE = milestone()
