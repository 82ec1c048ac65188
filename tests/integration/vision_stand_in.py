"""A stand-in for ``torchvision`` written on the running library (``torch`` or ``ember``), for
the pytorch/examples sweep (``examples_harness``): torchvision is not installed here and its
datasets and pretrained weights need a download.

- ``datasets``: MNIST, FashionMNIST, CIFAR10 and FakeData of the real shapes built from the bundled 8x8 digits,
  ImageFolder over a folder of class folders (:func:`write_image_folder` makes one).
- ``transforms``: ToTensor, Normalize, Resize, CenterCrop, Pad, RandomCrop, RandomResizedCrop,
  RandomHorizontalFlip, Lambda, Compose, with torchvision's sizes and its draws from the
  library's generator (so the same seed crops and flips alike under both libraries).
- ``models``: resnet18 and vgg16 with torchvision's module names and layout; vgg16's
  "pretrained" weights are drawn by NumPy from a fixed seed.
- ``utils.save_image`` saves nothing (images are side output).

Not collected by pytest.
"""
import enum
import math
import os
import types

import numpy as np

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def stand_in_torchvision(lib):
    """The modules ``torchvision``, ``.datasets``, ``.transforms``, ``.utils``, ``.models``
    on ``lib``, by name."""
    tv, datasets, transforms, utils, models = (types.ModuleType(n) for n in (
        "torchvision", "torchvision.datasets", "torchvision.transforms", "torchvision.utils",
        "torchvision.models"))
    vars(datasets).update(_datasets(lib))
    datasets.LSUN = None  # needs files: not used here
    vars(transforms).update(_transforms(lib))
    transforms.Scale = transforms.Resize
    utils.save_image = lambda tensor, fp, **kwargs: None
    models.resnet18 = lambda weights=None, pretrained=False: _resnet18(lib)
    models.vgg16 = lambda weights=None: _vgg16(lib, weights)
    models.VGG16_Weights = VGG16_Weights
    tv.datasets, tv.transforms, tv.utils, tv.models = datasets, transforms, utils, models
    for module in (datasets, transforms):  # named where pickle finds them (spawned processes)
        for name, value in vars(module).items():
            if isinstance(value, type):
                value.__module__, value.__qualname__ = module.__name__, name
    return {m.__name__: m for m in (tv, datasets, transforms, utils, models)}


# ---- data on disk ---------------------------------------------------------------------------------
def digits_images(train, size=28, count=64):
    """``count`` uint8 images (count, size, size) and int64 labels: the bundled 8x8 digits,
    each pixel repeated 3x3 and padded to ``size`` (MNIST's 28x28 layout)."""
    from ember.datasets import load_digits
    d = load_digits(flatten=False)
    x, y = (d.x_train, d.y_train) if train else (d.x_test, d.y_test)
    x = np.kron(np.asarray(x)[:count].reshape(-1, 8, 8), np.ones((3, 3)))
    pad = (size - 24) // 2
    x = np.pad(x, ((0, 0), (pad, size - 24 - pad), (pad, size - 24 - pad)))
    return (x * 255).clip(0, 255).astype(np.uint8), np.asarray(y)[:count].astype(np.int64)


def _write_smooth_images(folder, count, size, rng, start=0):
    """``count`` smooth RGB PNGs (sums of sines), ``size`` = (width, height), named k.png."""
    from PIL import Image
    folder.mkdir(parents=True, exist_ok=True)
    yy, xx = np.mgrid[0:size[1], 0:size[0]] / max(size)
    for k in range(start, start + count):
        f = rng.uniform(1, 6, (3, 2))
        rgb = np.stack([np.sin(f[c, 0] * 6 * xx + f[c, 1] * 4 * yy) for c in range(3)], -1)
        Image.fromarray(((rgb + 1) * 127.5).astype(np.uint8)).save(folder / f"{k}.png")


def write_bsds_like(root, count=2, size=256):
    """``dataset/BSDS300/images/{train,test}`` under ``root``: ``count`` smooth RGB PNGs of
    ``size`` x ``size`` per split, where super_resolution's data.py expects BSDS300."""
    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        _write_smooth_images(root / "dataset" / "BSDS300" / "images" / split, count, (size, size), rng)


def write_image_folder(root, classes, per_class, size=(40, 30), seed=0):
    """ImageFolder's layout under ``root``: a folder per class name in ``classes``, each with
    ``per_class`` smooth RGB PNGs of ``size`` = (width, height)."""
    rng = np.random.default_rng(seed)
    for name in classes:
        _write_smooth_images(root / name, per_class, size, rng)


# ---- torchvision.datasets -------------------------------------------------------------------------
def _datasets(lib):
    from PIL import Image

    class MNIST(lib.utils.data.Dataset):
        def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
            images, labels = digits_images(train)
            self.data, self.targets = lib.tensor(images), lib.tensor(labels)
            self.transform, self.target_transform = transform, target_transform

        def __len__(self):
            return len(self.data)

        def __getitem__(self, i):
            img, target = Image.fromarray(self.data[i].numpy(), mode="L"), int(self.targets[i])
            if self.transform is not None:
                img = self.transform(img)
            if self.target_transform is not None:
                target = self.target_transform(target)
            return img, target

    class FakeData(lib.utils.data.Dataset):
        def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None):
            self.size, self.image_size, self.transform = size, image_size, transform

        def __len__(self):
            return self.size

        def __getitem__(self, i):
            rng = np.random.default_rng(i)
            img = rng.integers(0, 256, self.image_size[1:] + self.image_size[:1], dtype=np.uint8)
            img = Image.fromarray(img.squeeze(-1) if img.shape[-1] == 1 else img)
            return (self.transform(img) if self.transform else img), int(rng.integers(10))

    class ImageFolder(lib.utils.data.Dataset):
        """Images under ``root/<class>/...``; classes are the sorted folder names, samples are
        (path, class index) in sorted order; an image loads as RGB."""

        def __init__(self, root, transform=None, target_transform=None):
            self.classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
            if not self.classes:
                raise FileNotFoundError(f"Couldn't find any class folder in {root}.")
            self.class_to_idx = {name: i for i, name in enumerate(self.classes)}
            self.samples = [(os.path.join(folder, f), self.class_to_idx[name])
                            for name in self.classes
                            for folder, _, files in sorted(os.walk(os.path.join(root, name)))
                            for f in sorted(files) if f.lower().endswith(IMG_EXTENSIONS)]
            self.imgs, self.targets = self.samples, [t for _, t in self.samples]
            self.transform, self.target_transform = transform, target_transform

        def __len__(self):
            return len(self.samples)

        def __getitem__(self, i):
            path, target = self.samples[i]
            with open(path, "rb") as f:
                img = Image.open(f).convert("RGB")
            if self.transform is not None:
                img = self.transform(img)
            if self.target_transform is not None:
                target = self.target_transform(target)
            return img, target

    class FashionMNIST(MNIST):
        """MNIST's shapes and files (the tutorials' dataset; here the same digits)."""

    class CIFAR10(MNIST):
        """CIFAR-10's layout: ``data`` a uint8 NumPy array (N, 32, 32, 3), ``targets`` a list of
        ints, RGB PIL images; here the digits, tinted per class."""

        def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
            images, labels = digits_images(train, size=32)
            tint = np.array([[1.0, 0.6, 0.3], [0.3, 1.0, 0.6], [0.6, 0.3, 1.0]])[labels % 3]
            self.data = (images[..., None] * tint[:, None, None, :]).astype(np.uint8)
            self.targets = labels.tolist()
            self.transform, self.target_transform = transform, target_transform

        def __getitem__(self, i):
            img, target = Image.fromarray(self.data[i]), self.targets[i]
            if self.transform is not None:
                img = self.transform(img)
            if self.target_transform is not None:
                target = self.target_transform(target)
            return img, target

    return {"MNIST": MNIST, "FashionMNIST": FashionMNIST, "CIFAR10": CIFAR10, "FakeData": FakeData,
            "ImageFolder": ImageFolder}


# ---- torchvision.transforms (PIL images in, CHW float tensors out of ToTensor) --------------------
def _transforms(lib):
    from PIL import Image

    class ToTensor:
        def __call__(self, pic):
            a = np.asarray(pic, dtype=np.float32) / 255
            return lib.tensor(a[None] if a.ndim == 2 else a.transpose(2, 0, 1))

    class Normalize:
        def __init__(self, mean, std):
            self.mean, self.std = mean, std

        def __call__(self, x):
            shape = (-1, 1, 1)
            return (x - lib.tensor(self.mean).view(shape)) / lib.tensor(self.std).view(shape)

    class Resize:
        """An int ``size`` is the shorter side's (the longer one keeps the aspect, truncated);
        a pair is (height, width)."""

        def __init__(self, size):
            self.size = size

        def __call__(self, img):
            w, h = img.size
            if isinstance(self.size, int):
                short, long = sorted((w, h))
                new_long = int(self.size * long / short)
                size = (self.size, new_long) if w <= h else (new_long, self.size)
            else:
                size = self.size[::-1]
            return img.resize(size, Image.BILINEAR)

    class CenterCrop:
        def __init__(self, size):
            self.size = size

        def __call__(self, img):
            w, h = img.size
            left, top = int(round((w - self.size) / 2)), int(round((h - self.size) / 2))
            return img.crop((left, top, left + self.size, top + self.size))

    class Pad:
        """``padding`` zero pixels on every side (an int only)."""

        def __init__(self, padding):
            self.padding = padding

        def __call__(self, img):
            a, p = np.asarray(img), self.padding
            return Image.fromarray(np.pad(a, ((p, p), (p, p)) + ((0, 0),) * (a.ndim - 2)))

    class RandomCrop:
        """A ``size`` crop at a random place: top, then left, each drawn by the library's
        ``randint`` as torchvision draws them."""

        def __init__(self, size):
            self.size = (size, size) if isinstance(size, int) else size

        def __call__(self, img):
            (w, h), (th, tw) = img.size, self.size
            top = lib.randint(0, h - th + 1, size=(1,)).item()
            left = lib.randint(0, w - tw + 1, size=(1,)).item()
            return img.crop((left, top, left + tw, top + th))

    class RandomResizedCrop:
        """A crop of a random area fraction in ``scale`` and aspect ratio in ``ratio`` (drawn
        log-uniformly), resized to ``size``; after 10 misses, the centre crop of the
        nearest allowed ratio. Draws from the library's default generator."""

        def __init__(self, size, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
            self.size, self.scale, self.ratio = (size, size) if isinstance(size, int) else size, scale, ratio

        def params(self, width, height):
            area, log_ratio = width * height, lib.log(lib.tensor(self.ratio))
            for _ in range(10):
                target_area = area * lib.empty(1).uniform_(*self.scale).item()
                aspect = lib.exp(lib.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
                w, h = round(math.sqrt(target_area * aspect)), round(math.sqrt(target_area / aspect))
                if 0 < w <= width and 0 < h <= height:
                    top = lib.randint(0, height - h + 1, size=(1,)).item()
                    left = lib.randint(0, width - w + 1, size=(1,)).item()
                    return top, left, h, w
            in_ratio = width / height
            if in_ratio < min(self.ratio):
                w, h = width, round(width / min(self.ratio))
            elif in_ratio > max(self.ratio):
                w, h = round(height * max(self.ratio)), height
            else:
                w, h = width, height
            return (height - h) // 2, (width - w) // 2, h, w

        def __call__(self, img):
            top, left, h, w = self.params(*img.size)
            return img.crop((left, top, left + w, top + h)).resize(self.size[::-1], Image.BILINEAR)

    class RandomHorizontalFlip:
        def __init__(self, p=0.5):
            self.p = p

        def __call__(self, img):
            return img.transpose(Image.FLIP_LEFT_RIGHT) if lib.rand(1) < self.p else img

    class Lambda:
        def __init__(self, function):
            self.function = function

        def __call__(self, x):
            return self.function(x)

    class Compose:
        def __init__(self, steps):
            self.steps = steps

        def __call__(self, x):
            for step in self.steps:
                x = step(x)
            return x

    return {c.__name__: c for c in (ToTensor, Normalize, Resize, CenterCrop, Pad, RandomCrop, RandomResizedCrop,
                                    RandomHorizontalFlip, Lambda, Compose)}


# ---- torchvision.models ---------------------------------------------------------------------------
def _resnet18(lib):
    """ResNet-18 (He et al., 2015) with torchvision's module names and layout."""
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                                nn.BatchNorm2d(planes))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(out)) + identity)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
            for i, (inplanes, planes, stride) in enumerate(widths, 1):
                setattr(self, f"layer{i}", nn.Sequential(BasicBlock(inplanes, planes, stride),
                                                         BasicBlock(planes, planes)))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(lib.flatten(self.avgpool(x), 1))

    return ResNet()


class VGG16_Weights(enum.Enum):
    IMAGENET1K_V1 = "vgg16-397923af.pth"
    DEFAULT = IMAGENET1K_V1


def _vgg16(lib, weights):
    """VGG-16 (Simonyan & Zisserman, 2014, configuration D) with torchvision's module names.
    With ``weights``, the "pretrained" values of ``features`` are NumPy draws from a fixed seed
    at torchvision's initial scales (N(0, 2/fan_out), zero biases), put in place of layers
    built without an initialisation of their own, and the classifier's 124M parameters, which
    the programs here do not use, stay as allocated (``empty``'s values): drawing them took
    ~40 s under ember and zeroing them ~20 s (first writes to fresh memory) on a loaded machine."""
    nn = lib.nn
    built = (lambda cls: cls) if weights is None else _without_init
    layers, channels = [], 3
    for width in (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"):
        if width == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [built(nn.Conv2d)(channels, width, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            channels = width

    class VGG(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
            self.classifier = nn.Sequential(
                built(nn.Linear)(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(),
                built(nn.Linear)(4096, 4096), nn.ReLU(True), nn.Dropout(),
                built(nn.Linear)(4096, 1000))

        def forward(self, x):
            return self.classifier(lib.flatten(self.avgpool(self.features(x)), 1))

    model = VGG()
    if weights is not None:
        rng = np.random.default_rng(16)
        with lib.no_grad():
            for layer in model.features:
                if isinstance(layer, nn.Conv2d):
                    w = layer.weight
                    std = np.float32(math.sqrt(2 / (w.shape[0] * w[0, 0].numel())))  # fan_out
                    w.copy_(lib.from_numpy(rng.standard_normal(tuple(w.shape), np.float32) * std))
                    layer.bias.zero_()
    return model


def _without_init(cls):
    """``cls`` whose constructor leaves the parameters as allocated (their values come next)."""
    return type(cls.__name__, (cls,), {"reset_parameters": lambda self: None})
