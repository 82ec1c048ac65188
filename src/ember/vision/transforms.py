"""Image transforms with ``torchvision.transforms``' names, arguments and semantics
(https://pytorch.org/vision/stable/transforms.html), without PIL.

Images come in two forms. Before :class:`ToTensor`, an image is a NumPy array laid out as
PIL would give it: ``(H, W)`` grey or ``(H, W, C)`` channels-last, usually ``uint8`` (what
``ember.datasets.MNIST`` and ``CIFAR10`` yield). After it, an image is an ember tensor
``(..., C, H, W)``, usually ``float32`` in ``[0, 1]``. The geometric transforms
(:class:`RandomCrop`, :class:`RandomHorizontalFlip`, :class:`Pad`) take either form and
return the same form; :class:`Normalize` takes tensors.

Random transforms draw from ember's default generator, as torchvision's draw from torch's:
``ember.manual_seed(s)`` makes a pipeline repeat its choices. (The numbers differ from
torch's for the same seed: the generators differ.)

Example::

    >>> import numpy as np
    >>> import ember
    >>> from ember.vision import transforms
    >>> pipeline = transforms.Compose([
    ...     transforms.RandomCrop(32, padding=4),
    ...     transforms.RandomHorizontalFlip(),
    ...     transforms.ToTensor(),
    ...     transforms.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
    >>> _ = ember.manual_seed(0)
    >>> image = pipeline(np.zeros((32, 32, 3), dtype=np.uint8))
    >>> image.shape, image.dtype
    (torch.Size([3, 32, 32]), ember.float32)
"""
import numbers
from collections.abc import Sequence

import numpy as np

from .. import _dtype, _random
from .._creation import as_tensor, from_numpy
from .._tensor import Tensor
from ..nn import Module
from ..nn import functional as F

__all__ = ["Compose", "Lambda", "Normalize", "Pad", "RandomCrop", "RandomHorizontalFlip",
           "ToTensor"]

_PADDING_MODES = ("constant", "edge", "reflect", "symmetric")


class Compose:
    """Applies ``transforms`` in order: ``Compose([f, g])(img) == g(f(img))``.

    Args:
        transforms: list of callables, each taking and returning an image.
    """

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for transform in self.transforms:
            img = transform(img)
        return img

    def __repr__(self):
        lines = "".join(f"\n    {transform}" for transform in self.transforms)
        return f"{type(self).__name__}({lines}\n)"


class Lambda:
    """Applies the user's function ``lambd`` as a transform.

    Raises:
        TypeError: ``lambd`` is not callable.
    """

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{type(self).__name__}()"


class ToTensor:
    """A NumPy image ``(H, W)`` or ``(H, W, C)`` (or a PIL image) → tensor ``(C, H, W)``.

    ``uint8`` values 0–255 are scaled to ``[0, 1]`` in the default float dtype (``float32``);
    arrays of other dtypes keep their values and dtype, as in torchvision. The result owns
    its memory.

    Raises:
        TypeError: ``pic`` is a tensor or not array-like.
        ValueError: ``pic`` does not have 2 or 3 dimensions.
    """

    def __call__(self, pic):
        if isinstance(pic, Tensor) or not (isinstance(pic, np.ndarray)
                                           or hasattr(pic, "__array_interface__")):
            raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
        array = np.asarray(pic)
        if array.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {array.ndim} dimensions.")
        if array.ndim == 2:
            array = array[:, :, None]
        chw = array.transpose(2, 0, 1)
        if chw.dtype == np.uint8:
            return from_numpy(chw.astype(_dtype.get_default_dtype().np) / np.float32(255))
        return from_numpy(np.ascontiguousarray(chw))

    def __repr__(self):
        return f"{type(self).__name__}()"


class Normalize(Module):
    """Per channel, ``output[c] = (input[c] - mean[c]) / std[c]``.

    Args:
        mean: sequence of ``C`` means (or one number for all channels).
        std: sequence of ``C`` standard deviations (or one number).
        inplace: overwrite the input tensor instead of returning a new one.

    Shape:
        input and output ``(..., C, H, W)``, a floating-point tensor.

    Raises:
        TypeError: the input is not a floating-point tensor.
        ValueError: the input has fewer than 3 dimensions, or a ``std`` is zero in the
            input's dtype.
    """

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace
        self._constants = (None, None)

    def forward(self, tensor):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
        if not tensor.is_floating_point():
            raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
        if tensor.ndim < 3:
            raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). "
                             f"Got tensor.size() = {tensor.size()}")
        mean, std = self._mean_and_std(tensor.dtype, tensor.device)
        if self.inplace:
            return tensor.sub_(mean).div_(std)
        return tensor.sub(mean).div(std)

    def _mean_and_std(self, dtype, device):
        # A pipeline normalises every image of every epoch: the converted constants are kept
        # while mean, std, dtype and device stay the same (tensors and arrays, which cannot be
        # compared cheaply, are converted every time).
        key = (_constant_key(self.mean), _constant_key(self.std), dtype, device)
        if None not in key[:2] and self._constants[0] == key:
            return self._constants[1]
        mean = as_tensor(self.mean, dtype=dtype, device=device)
        std = as_tensor(self.std, dtype=dtype, device=device)
        if (std == 0).any():
            raise ValueError(f"std evaluated to zero after conversion to {dtype}, "
                             "leading to division by zero.")
        if mean.ndim == 1:
            mean = mean.view(-1, 1, 1)
        if std.ndim == 1:
            std = std.view(-1, 1, 1)
        self._constants = (key, (mean, std))
        return mean, std

    def __repr__(self):
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class Pad(Module):
    """Pads the borders of an image.

    Args:
        padding: an int pads all four borders by that many pixels; a pair ``(x, y)`` pads
            left and right by ``x``, top and bottom by ``y``; a 4-tuple gives
            ``(left, top, right, bottom)``.
        fill: value of the new pixels in ``"constant"`` mode (a number).
        padding_mode: ``"constant"``; ``"edge"`` repeats the border pixel; ``"reflect"``
            mirrors without repeating it (``[1, 2, 3]`` → ``[3, 2, 1, 2, 3]``);
            ``"symmetric"`` mirrors repeating it (``[1, 2, 3]`` → ``[2, 1, 1, 2, 3]``).

    Shape:
        a NumPy ``(H, W)`` / ``(H, W, C)`` image or a tensor ``(..., H, W)`` →
        the same form with ``H + top + bottom`` rows and ``W + left + right`` columns.

    Raises:
        TypeError: ``padding`` is not an int, tuple or list, or ``fill`` is not a number.
        ValueError: ``padding`` is negative or has a length other than 1, 2 or 4, or
            ``padding_mode`` is not one of the four.
    """

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        _padding_sides(padding)
        _check_fill_and_mode(fill, padding_mode)
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return _pad(img, _padding_sides(self.padding), self.fill, self.padding_mode)

    def __repr__(self):
        return (f"{type(self).__name__}(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class RandomCrop(Module):
    """Crops a ``size`` window at a uniformly random position, after optional padding.

    Args:
        size: ``(h, w)`` of the crop, or an int for a square crop.
        padding: padding applied first, as in :class:`Pad` (None: none).
        pad_if_needed: pad an image smaller than ``size`` (each side of a short dimension by
            the shortfall, as torchvision does) instead of raising.
        fill, padding_mode: as in :class:`Pad`.

    Shape:
        a NumPy ``(H, W)`` / ``(H, W, C)`` image or a tensor ``(..., H, W)`` → the same form
        with ``h`` rows and ``w`` columns; a tensor batch is cropped at one position.

    Raises:
        ValueError: the (padded) image is smaller than ``size``; ``size`` has more than two
            numbers; bad ``padding`` or ``padding_mode`` (see :class:`Pad`).
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = _setup_size(size)
        if padding is not None:
            _padding_sides(padding)
        _check_fill_and_mode(fill, padding_mode)
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    @staticmethod
    def get_params(img, output_size):
        """``(top, left, height, width)`` of a random crop of ``output_size`` inside ``img``."""
        height, width = _image_size(img)
        crop_height, crop_width = output_size
        if height < crop_height or width < crop_width:
            raise ValueError(f"Required crop size {(crop_height, crop_width)} is larger than "
                             f"input image size {(height, width)}")
        if (height, width) == (crop_height, crop_width):
            return 0, 0, height, width
        top, left = _random.rng().integers(0, (height - crop_height + 1, width - crop_width + 1))
        return int(top), int(left), crop_height, crop_width

    def forward(self, img):
        if self.padding is not None:
            img = _pad(img, _padding_sides(self.padding), self.fill, self.padding_mode)
        height, width = _image_size(img)
        crop_height, crop_width = self.size
        if self.pad_if_needed and (width < crop_width or height < crop_height):
            extra_x, extra_y = max(crop_width - width, 0), max(crop_height - height, 0)
            img = _pad(img, (extra_x, extra_y, extra_x, extra_y), self.fill, self.padding_mode)
        top, left, crop_height, crop_width = self.get_params(img, self.size)
        if isinstance(img, Tensor):
            return img[..., top:top + crop_height, left:left + crop_width]
        return img[top:top + crop_height, left:left + crop_width]

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(Module):
    """Mirrors an image left–right with probability ``p``.

    Shape:
        a NumPy ``(H, W)`` / ``(H, W, C)`` image or a tensor ``(..., H, W)``, unchanged.
    """

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        if _random.rng().random() < self.p:
            return img.flip(-1) if isinstance(img, Tensor) else np.ascontiguousarray(img[:, ::-1])
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


def _constant_key(value):
    """``value`` as a hashable cache key if it is a number or a sequence of numbers, else None."""
    if isinstance(value, numbers.Number):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, numbers.Number) for v in value):
        return tuple(value)
    return None


def _setup_size(size):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    return tuple(size)


def _padding_sides(padding):
    """``padding`` as ``(left, top, right, bottom)``."""
    if isinstance(padding, numbers.Number):
        padding = (padding,)
    if not isinstance(padding, (tuple, list)):
        raise TypeError(f"Got inappropriate padding arg: {padding!r}")
    if len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    sides = tuple(int(p) for p in padding) * (4 // len(padding))
    if min(sides) < 0:
        raise ValueError(f"padding must be non-negative, got {padding}")
    return sides


def _check_fill_and_mode(fill, padding_mode):
    if not isinstance(fill, numbers.Number):
        raise TypeError(f"fill must be a number, got {type(fill).__name__}")
    if padding_mode not in _PADDING_MODES:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")


def _image_size(img):
    """``(height, width)`` of a NumPy ``(H, W[, C])`` image or a tensor ``(..., H, W)``."""
    return tuple(img.shape[-2:]) if isinstance(img, Tensor) else img.shape[:2]


def _pad(img, sides, fill, padding_mode):
    left, top, right, bottom = sides
    if not isinstance(img, Tensor):
        if padding_mode == "constant":  # np.pad costs ~10x more: this runs once per image
            height, width = img.shape[:2]
            out = np.full((top + height + bottom, left + width + right, *img.shape[2:]), fill,
                          dtype=img.dtype)
            out[top:top + height, left:left + width] = img
            return out
        widths = ((top, bottom), (left, right)) + ((0, 0),) * (img.ndim - 2)
        return np.pad(img, widths, mode=padding_mode)
    if padding_mode == "constant":
        return F.pad(img, (left, right, top, bottom), value=fill)
    # np.pad of the positions gives, for each output row (column), the input row it copies,
    # which covers every mode (symmetric included) for tensors of any batch shape.
    rows = np.pad(np.arange(img.shape[-2]), (top, bottom), mode=padding_mode)
    columns = np.pad(np.arange(img.shape[-1]), (left, right), mode=padding_mode)
    rows, columns = (as_tensor(index, device=img.device) for index in (rows, columns))
    return img.index_select(-2, rows).index_select(-1, columns)
