"""Runs a program from pytorch/examples unchanged, with ``torch`` bound to torch or to ember.

``run_example(lib, program, argv, cwd)`` executes ``<checkout>/<program>`` as
``__main__`` and returns what it printed. For ember, every ``import torch...`` in the program
(and in the modules beside it) gives the matching ``ember...`` module, as if its first line
were ``import ember as torch``. ``torchvision`` (not installed here, and its datasets need a
download) is a stand-in written on the running library (``vision_stand_in``), and so are the
other packages the programs import that are not installed.

The programs are not copied into ember: the tests run a checkout of github.com/pytorch/examples
(tested at commit 77f55b9) found at ``$EMBER_PUBLIC_PROGRAMS/examples``, and skip without one.

Not collected by pytest; ``test_pytorch_examples.py`` uses it.
"""
import contextlib
import importlib
import importlib.abc
import importlib.util
import io
import logging
import os
import random
import re
import runpy
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from text_stand_in import stand_in_torchtext
from vision_stand_in import stand_in_torchvision

EXAMPLES = Path(os.environ.get("EMBER_PUBLIC_PROGRAMS", "/nonexistent")) / "examples"


def example(program):
    """The path of ``program`` in the pytorch/examples checkout; skips the test without it."""
    path = EXAMPLES / program
    if not path.is_file():
        pytest.skip(f"no checkout of pytorch/examples with {program} in $EMBER_PUBLIC_PROGRAMS/examples")
    return path


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


_REPLACED = ("torch", "torchvision", "torchtext", "matplotlib", "six", "requests", "gymnasium", "tiktoken")  # bound to a library or a stand-in


@contextlib.contextmanager
def _torch_is(lib, program_dir):
    """Within: ``torch`` resolves to ``lib``'s modules and the other _REPLACED names to stand-ins; the program's
    folder is importable; the root logger has no handlers, as in a new process (``basicConfig``
    works); afterwards sys.modules, sys.path and the root logger are as they were."""
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
    sys.modules.update(stand_in_torchvision(lib))
    sys.modules.update(stand_in_torchtext(lib))
    sys.modules.update(_stand_in_matplotlib())
    sys.modules.update(_stand_in_six())
    sys.modules.update(_stand_in_requests())
    sys.modules.update(_stand_in_gymnasium())
    sys.modules.update(_stand_in_tiktoken())
    sys.path.insert(0, str(program_dir))
    root = logging.getLogger()
    kept_handlers, kept_level = root.handlers, root.level
    root.handlers = []
    try:
        yield
    finally:
        for handler in root.handlers:  # the program's (a log file's is closed)
            handler.close()
        root.handlers = kept_handlers
        root.setLevel(kept_level)
        sys.path.remove(str(program_dir))
        if finder is not None:
            sys.meta_path.remove(finder)
        for name, module in list(sys.modules.items()):
            top = name.split(".")[0]
            spec = getattr(module, "__spec__", None)  # a folder's (namespace package's) places too
            files = [getattr(module, "__file__", None) or ""] + list(getattr(spec, "submodule_search_locations", None) or [])
            beside = any(str(f).startswith(str(program_dir)) for f in files)
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


def run_example(lib, program, argv, cwd, monkeypatch, stdin=None):
    """Runs ``program`` (a path in the pytorch/examples checkout, or an absolute path) with
    ``argv`` in ``cwd`` under ``lib``; returns stdout.
    With ``stdin`` (text), the program reads it, and the EOFError of reading past its end ends
    the session (an interactive loop's only way out). An exception the program raises carries
    what it printed before as ``stdout``."""
    path = example(program)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", [str(path)] + list(argv))
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    out = io.StringIO()
    lib.manual_seed(0)
    random.seed(0)  # some programs draw from Python's generator without seeding it
    with _torch_is(lib, path.parent), contextlib.redirect_stdout(out):
        try:
            scope = runpy.run_path(str(path), run_name="__main__")
        except EOFError:
            if stdin is None or sys.stdin.read():
                raise
            scope = {"torch": sys.modules["torch"]}
        except Exception as error:
            error.stdout = out.getvalue()  # what the program printed before it failed
            raise
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


def _stand_in_tiktoken():
    """tiktoken (not installed; its encodings are a download): nanoGPT's sample.py imports it
    unconditionally and uses it only for GPT-2's tokens, which need the network anyway."""
    tiktoken = types.ModuleType("tiktoken")

    def get_encoding(name):
        raise ConnectionError(f"no network in the programs sweep: tiktoken encoding {name}")

    tiktoken.get_encoding = get_encoding
    return {"tiktoken": tiktoken}


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
