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
