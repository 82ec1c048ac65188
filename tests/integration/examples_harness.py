"""Runs a program from pytorch/examples unchanged, with ``torch`` bound to torch or to ember.

``run_example(lib, program, argv, cwd)`` executes ``pytorch_examples/<program>`` as
``__main__`` and returns what it printed. For ember, every ``import torch...`` in the program
(and in the modules beside it) gives the matching ``ember...`` module, as if its first line
were ``import ember as torch``. ``torchvision`` (not installed here, and its datasets need a
download) is a stand-in written on the running library: MNIST and FakeData of the real
shapes built from the bundled 8x8 digits, ToTensor/Normalize/Resize/CenterCrop/Lambda/Compose,
``utils.save_image`` and ``models.resnet18``.

Not collected by pytest; ``test_pytorch_examples.py`` uses it.
"""
import contextlib
import importlib
import importlib.abc
import importlib.util
import io
import random
import re
import runpy
import sys
import types
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).parent / "pytorch_examples"


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``torch.x.y`` as ``ember.x.y`` (the same module object under both names)."""

    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        module = importlib.import_module("ember" + spec.name[len("torch"):])
        self.spec = module.__spec__  # the import system overwrites it; exec_module restores it
        return module

    def exec_module(self, module):
        module.__spec__ = self.spec


_REPLACED = ("torch", "torchvision", "matplotlib", "six", "requests", "gymnasium")  # bound to a library or a stand-in


@contextlib.contextmanager
def _torch_is(lib, program_dir):
    """Within: ``torch`` resolves to ``lib``'s modules and the other _REPLACED names to stand-ins; the program's
    folder is importable; afterwards sys.modules and sys.path are as they were."""
    saved = {k: v for k, v in sys.modules.items()
             if k.split(".")[0] in _REPLACED}
    finder = None
    if lib.__name__ == "ember":
        for name in saved:
            del sys.modules[name]
        for name, module in list(sys.modules.items()):
            if name == "ember" or name.startswith("ember."):
                sys.modules["torch" + name[len("ember"):]] = module
        finder = _AliasFinder()
        sys.meta_path.insert(0, finder)
    sys.modules.update(_stand_in_torchvision(lib))
    sys.modules.update(_stand_in_matplotlib())
    sys.modules.update(_stand_in_six())
    sys.modules.update(_stand_in_requests())
    sys.modules.update(_stand_in_gymnasium())
    sys.path.insert(0, str(program_dir))
    try:
        yield
    finally:
        sys.path.remove(str(program_dir))
        if finder is not None:
            sys.meta_path.remove(finder)
        for name, module in list(sys.modules.items()):
            top = name.split(".")[0]
            beside = str(getattr(module, "__file__", None) or "").startswith(str(program_dir))
            if top in _REPLACED[1:] or (finder and top == "torch") or beside:
                del sys.modules[name]
        sys.modules.update(saved)


def install(lib_name, program_dir):
    """For a process started to run a program: ``torch`` resolves to ``lib_name``'s modules and
    the stand-ins replace the other packages, from now on (a ``sitecustomize`` calls this, so
    the processes the program spawns get the same)."""
    _INSTALLED.append(_torch_is(importlib.import_module(lib_name), Path(program_dir)))
    _INSTALLED[-1].__enter__()  # kept referenced: collecting it would run its exit


_INSTALLED = []


def run_example(lib, program, argv, cwd, monkeypatch):
    """Runs ``pytorch_examples/<program>`` with ``argv`` in ``cwd`` under ``lib``; returns stdout."""
    path = EXAMPLES / program
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", [str(path)] + list(argv))
    out = io.StringIO()
    lib.manual_seed(0)
    random.seed(0)  # some programs draw from Python's generator without seeding it
    with _torch_is(lib, path.parent), contextlib.redirect_stdout(out):
        scope = runpy.run_path(str(path), run_name="__main__")
    assert scope["torch"] is lib, scope["torch"]  # the program really ran on ``lib``
    return out.getvalue()


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def assert_same_output(ember_out, torch_out, rtol, atol):
    """The two programs printed the same text, numbers equal within ``rtol``/``atol``."""
    assert _NUMBER.sub("#", ember_out) == _NUMBER.sub("#", torch_out), (ember_out, torch_out)
    e = np.array([float(x) for x in _NUMBER.findall(ember_out)])
    t = np.array([float(x) for x in _NUMBER.findall(torch_out)])
    assert len(t) > 0
    np.testing.assert_allclose(e, t, rtol=rtol, atol=atol, err_msg=f"ember:\n{ember_out}\ntorch:\n{torch_out}")


def numbers_after(text, label):
    """The numbers printed right after ``label`` (e.g. every ``Loss:``) as floats."""
    return [float(m) for m in re.findall(re.escape(label) + r"\s*([-+0-9.eE]+)", text)]


# ---- stand-ins for packages the programs import ------------------------------------------------
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


def _stand_in_torchvision(lib):
    from PIL import Image
    tv, datasets, transforms, utils, models = (types.ModuleType(n) for n in (
        "torchvision", "torchvision.datasets", "torchvision.transforms", "torchvision.utils",
        "torchvision.models"))

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
        def __init__(self, size):
            self.size = size

        def __call__(self, img):
            w, h = img.size
            scale = self.size / min(w, h)
            return img.resize((round(w * scale), round(h * scale)), Image.BILINEAR)

    class CenterCrop:
        def __init__(self, size):
            self.size = size

        def __call__(self, img):
            w, h = img.size
            left, top = (w - self.size) // 2, (h - self.size) // 2
            return img.crop((left, top, left + self.size, top + self.size))

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

    datasets.MNIST, datasets.FakeData = MNIST, FakeData
    datasets.ImageFolder = datasets.LSUN = datasets.CIFAR10 = None  # need files: not used here
    transforms.ToTensor, transforms.Normalize, transforms.Compose = ToTensor, Normalize, Compose
    transforms.Resize, transforms.Scale, transforms.CenterCrop = Resize, Resize, CenterCrop
    transforms.Lambda = Lambda
    utils.save_image = lambda tensor, fp, **kwargs: None  # images are side output
    models.resnet18 = lambda weights=None: _resnet18(lib)
    tv.datasets, tv.transforms, tv.utils, tv.models = datasets, transforms, utils, models
    for module in (datasets, transforms):  # named where pickle finds them (spawned processes)
        for name, value in vars(module).items():
            if isinstance(value, type):
                value.__module__, value.__qualname__ = module.__name__, name
    return {m.__name__: m for m in (tv, datasets, transforms, utils, models)}


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


def _stand_in_matplotlib():
    """matplotlib with pyplot calls that draw nothing (the programs save plots as side output)."""
    mpl, pyplot = types.ModuleType("matplotlib"), types.ModuleType("matplotlib.pyplot")
    mpl.use = lambda backend: None
    def draw_nothing(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None

    pyplot.__getattr__ = draw_nothing
    mpl.pyplot = pyplot
    return {"matplotlib": mpl, "matplotlib.pyplot": pyplot}


def _stand_in_six():
    """six (Python 2 compatibility, not installed): ``six.moves.urllib`` is Python 3's."""
    import urllib.request
    six, moves = types.ModuleType("six"), types.ModuleType("six.moves")
    moves.urllib = urllib
    six.moves = moves
    return {"six": six, "six.moves": moves}


def _stand_in_requests():
    """requests (not installed, and no network): ``get`` of the Cora URL the graph programs
    download returns :func:`cora_like_archive`; any other URL is refused."""
    requests = types.ModuleType("requests")

    def get(url, stream=False, **kwargs):
        if not url.endswith("/cora.tgz"):
            raise ConnectionError(f"no network in the examples sweep: {url}")
        return contextlib.nullcontext(types.SimpleNamespace(raw=io.BytesIO(cora_like_archive())))

    requests.get = get
    return {"requests": requests}


def cora_like_archive(nodes=1650, features=24, classes=3, edges=3300):
    """A ``cora.tgz`` in Cora's format (``cora/cora.content``: paper id, binary word features,
    class name; ``cora/cora.cites``: pairs of paper ids), drawn so that the class shows in the
    features and most citations stay within a class: a graph a GCN can learn, with enough nodes
    for the programs' fixed splits (1,000 + 500 or 1,200 + 400 evaluation nodes)."""
    import tarfile
    rng = np.random.default_rng(0)
    ids = rng.choice(1_000_000, nodes, replace=False)
    label = rng.integers(0, classes, nodes)
    prototypes = rng.random((classes, features)) < 0.3
    words = prototypes[label] ^ (rng.random((nodes, features)) < 0.15)
    names = ["Neural_Networks", "Theory", "Genetic_Algorithms"]
    content = "\n".join(f"{i}\t" + "\t".join(map(str, w.astype(int))) + f"\t{names[c]}"
                        for i, w, c in zip(ids, words, label))
    src = rng.integers(0, nodes, edges)
    members = [np.flatnonzero(label == c) for c in range(classes)]
    dst = np.array([rng.choice(members[label[a]]) if rng.random() < 0.85 else rng.integers(0, nodes)
                    for a in src])
    keep = src != dst
    cites = "\n".join(f"{ids[a]}\t{ids[b]}" for a, b in zip(src[keep], dst[keep]))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tgz:
        for name, text in (("cora/cora.content", content), ("cora/cora.cites", cites)):
            data = (text + "\n").encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tgz.addfile(info, io.BytesIO(data))
    return out.getvalue()


class CartPole:
    """The cart-pole balancing task (Barto, Sutton & Anderson, 1983) with gymnasium's
    ``CartPole-v1`` interface: a 4-float32 state (cart position and velocity, pole angle and
    angular velocity), actions 0/1 push left/right with 10 N, reward 1 per step, the episode
    ends when the pole leans past 12 degrees or the cart leaves [-2.4, 2.4], and is truncated
    at 500 steps. Euler steps of 20 ms. ``spec.reward_threshold`` is ``threshold`` (the real
    task's 475 would make the examples train for minutes)."""

    def __init__(self, threshold):
        self.spec = types.SimpleNamespace(reward_threshold=threshold)
        self.rng = np.random.default_rng()
        self.state, self.steps = None, 0

    def reset(self, seed=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.state, self.steps = self.rng.uniform(-0.05, 0.05, 4), 0
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if action == 1 else -10.0
        cos, sin = np.cos(theta), np.sin(theta)
        mass, pole_mass, half_length = 1.1, 0.1, 0.5
        temp = (force + pole_mass * half_length * theta_dot ** 2 * sin) / mass
        theta_acc = (9.8 * sin - cos * temp) / (half_length * (4 / 3 - pole_mass * cos ** 2 / mass))
        x_acc = temp - pole_mass * half_length * theta_acc * cos / mass
        self.state = np.array([x + 0.02 * x_dot, x_dot + 0.02 * x_acc,
                               theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc])
        self.steps += 1
        terminated = bool(abs(self.state[0]) > 2.4 or abs(self.state[2]) > 12 * np.pi / 180)
        return self.state.astype(np.float32), 1.0, terminated, self.steps >= 500, {}


def _stand_in_gymnasium(threshold=12):
    """gymnasium (not installed): ``make("CartPole-v1")`` gives :class:`CartPole`."""
    gym = types.ModuleType("gymnasium")

    def make(name, render_mode=None):
        if name != "CartPole-v1":
            raise ValueError(f"the stand-in gymnasium has CartPole-v1 only, not {name}")
        return CartPole(threshold)

    gym.make = make
    return {"gymnasium": gym}


def write_bsds_like(root, count=2, size=256):
    """``dataset/BSDS300/images/{train,test}`` under ``root``: ``count`` smooth RGB PNGs of
    ``size`` x ``size`` per split, where super_resolution's data.py expects BSDS300."""
    from PIL import Image
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:size, 0:size] / size
    for split in ("train", "test"):
        folder = root / "dataset" / "BSDS300" / "images" / split
        folder.mkdir(parents=True)
        for k in range(count):
            f = rng.uniform(1, 6, (3, 2))
            rgb = np.stack([np.sin(f[c, 0] * 6 * xx + f[c, 1] * 4 * yy) for c in range(3)], -1)
            Image.fromarray(((rgb + 1) * 127.5).astype(np.uint8)).save(folder / f"{k}.png")
