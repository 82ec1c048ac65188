"""ember.vision: what ``torchvision`` gives a PyTorch user, for ember.

- :mod:`ember.vision.transforms`: ``Compose``, ``ToTensor``, ``Normalize``, ``RandomCrop``,
  ``RandomHorizontalFlip``, ``Pad``, ``Lambda``, with torchvision's arguments.
- ``ember.vision.datasets``: the image data sets of :mod:`ember.datasets` (``MNIST``,
  ``FashionMNIST``, ``CIFAR10``), read from local files only.

torchvision code ports by changing its imports::

    import torch                          →  import ember as torch
    import torchvision                    →  import ember.vision as torchvision
    from torchvision import transforms    →  from ember.vision import transforms
    from torchvision.datasets import MNIST  →  from ember.datasets import MNIST

after which ``torchvision.transforms.ToTensor()`` and
``torchvision.datasets.MNIST(root, train=True, transform=...)`` read as before
(``download=True`` is refused: ember never downloads).
"""
from .. import datasets
from . import transforms

__all__ = ["datasets", "transforms"]
