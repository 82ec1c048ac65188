"""The docstrings a newcomer reads first (issue 14) stay true: each names the PyTorch page it
follows, lists the errors it raises, and has an example that runs as written (doctest)."""
import doctest
import importlib
import inspect
import pkgutil

import pytest

import ember
from ember import nn
from ember.nn import functional as F
from ember.utils.data import DataLoader

FIRST_READ = {
    "Tensor.backward": ember.Tensor.backward,
    "optim.Adam": ember.optim.Adam,
    "utils.data.DataLoader": DataLoader,
    "nn.functional.cross_entropy": F.cross_entropy,
    "save": ember.save,
    "load": ember.load,
    "nn.Module": nn.Module,
}


@pytest.mark.parametrize("name", sorted(FIRST_READ))
def test_docstring_is_complete_and_its_example_runs(name):
    obj = FIRST_READ[name]
    text = obj.__doc__
    assert "https://pytorch.org/docs/" in text and "Raises:" in text and "Example::" in text
    # recurse=False: only the docstring of the object itself, not of its methods
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={})
    assert sum(len(test.examples) for test in tests) >= 4
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test, out=report.append)
    assert runner.summarize(verbose=False).failed == 0, "".join(report)


def test_a_wrong_example_is_reported():
    """The check above can fail: an example whose printed output is wrong fails doctest."""
    def wrong():
        """>>> 1 + 1
        3
        """
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(wrong, "wrong", globs={}):
        runner.run(test, out=lambda _: None)
    assert runner.summarize(verbose=False).failed == 1


# The programs a person runs (``ember ...``): they have no Python API of their own.
APPS = ("ember.__main__", "ember.cli", "ember.course", "ember.milestones")


def _public_modules():
    """ember and every module under it with no ``_``-prefixed part, but the programs (APPS)."""
    yield ember
    for info in pkgutil.walk_packages(ember.__path__, "ember."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]) and not info.name.startswith(APPS):
            yield importlib.import_module(info.name)


def _key(obj, name):
    return f"{getattr(obj, '__module__', None)}:{getattr(obj, '__qualname__', name)}"


def _public_callables():
    """``{"module:qualname": docstring}`` for every public function and class of every public
    module of ember (its ``__all__``, else its public names, defined in ember) and every public
    method of those classes, Tensor's included (issue 9: every public function has a
    docstring). A method overriding a documented one inherits its docstring (``inspect.getdoc``),
    as ``help()`` shows it; a class does not."""
    found = {}
    for module in _public_modules():
        for name in getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]:
            obj = getattr(module, name, None)
            if name.startswith("_") or not callable(obj) or not (getattr(obj, "__module__", None) or "").startswith("ember"):
                continue
            found.setdefault(_key(obj, name), obj.__doc__)
            if not inspect.isclass(obj):
                continue
            for attr in dir(obj):
                method = getattr(obj, attr, None)
                if attr.startswith("_") or isinstance(inspect.getattr_static(obj, attr), property) \
                        or not callable(method) or not (getattr(method, "__module__", None) or "").startswith("ember"):
                    continue
                found.setdefault(_key(method, attr), inspect.getdoc(method))
    return found


def test_every_public_function_has_a_docstring():
    found = _public_callables()
    missing = sorted(key for key, doc in found.items() if not (doc or "").strip())
    assert not missing, f"{len(missing)} public callables without a docstring:\n" + "\n".join(missing)


def test_the_docstring_walk_finds_the_public_surface(monkeypatch):
    """The walk above can fail: it reaches functions, Tensor methods, modules, optimizers and
    the methods of classes, in every public module; a callable without a docstring is missing."""
    found = _public_callables()
    # (Tensor.backward: ember._tensor:Tensor.backward once overrides are on, importing ember.overrides)
    assert {"ember._ops.pointwise_binary:add", "ember.nn.functional.conv:conv2d", "ember.linalg.factorizations:svd",
            "ember._ops.special:xlog1py", _key(ember.Tensor.backward, "backward"),
            "ember.nn.modules.linear:Linear", "ember.optim.adam:Adam", "ember.nn.modules.module:Module.buffers",
            "ember.distributions.normal:Normal", "ember.utils.data.dataloader:DataLoader"} <= set(found)
    assert len(found) > 2000
    monkeypatch.setattr(ember.nn.Module.buffers, "__doc__", None)
    monkeypatch.setattr(ember.special.xlog1py, "__doc__", "")
    found = _public_callables()
    assert not found["ember.nn.modules.module:Module.buffers"] and not found["ember._ops.special:xlog1py"]
