"""The docstrings a newcomer reads first (issue 14) stay true: each names the PyTorch page it
follows, lists the errors it raises, and has an example that runs as written (doctest)."""
import doctest

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


def _public_callables():
    """(qualified name, object) of every public function and class of ember's public
    namespaces, every public Tensor method, and the nn modules and optimizers (issue 9: every
    public function has a docstring)."""
    import inspect
    namespaces = {"ember": ember, "ember.nn.functional": F, "ember.linalg": ember.linalg, "ember.fft": ember.fft,
                  "ember.special": ember.special, "ember.nn": nn, "ember.optim": ember.optim,
                  "ember.optim.lr_scheduler": ember.optim.lr_scheduler}
    for prefix, namespace in namespaces.items():
        for name in dir(namespace):
            obj = getattr(namespace, name)
            module = getattr(obj, "__module__", None) or ""
            if name.startswith("_") or not callable(obj) or not module.startswith("ember"):
                continue
            yield f"{prefix}.{name}", obj
    for name in dir(ember.Tensor):
        obj = inspect.getattr_static(ember.Tensor, name)
        if not name.startswith("_") and callable(getattr(ember.Tensor, name)) and not isinstance(obj, property):
            yield f"Tensor.{name}", getattr(ember.Tensor, name)


def test_every_public_function_has_a_docstring():
    missing = sorted(name for name, obj in _public_callables() if not (obj.__doc__ or "").strip())
    assert not missing, f"{len(missing)} public callables without a docstring:\n" + "\n".join(missing)


def test_the_docstring_walk_finds_the_public_surface():
    """The walk above can fail: it reaches functions, Tensor methods, modules and optimizers."""
    names = dict(_public_callables())
    assert {"ember.add", "ember.nn.functional.conv2d", "ember.linalg.svd", "ember.fft.rfft", "ember.special.erf",
            "Tensor.add", "Tensor.backward", "ember.nn.Linear", "ember.optim.Adam"} <= set(names)
    assert len(names) > 1200
