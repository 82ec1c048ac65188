"""Every public name of ``torch.distributions`` is found in ember at the module path torch
defines it in (``from torch.distributions.chi2 import Chi2``), as programs import them."""
import importlib

import pytest
import torch.distributions

import ember.distributions


@pytest.mark.parametrize("name", torch.distributions.__all__)
def test_a_name_is_where_torch_defines_it(name):
    theirs = getattr(torch.distributions, name)
    ours = getattr(ember.distributions, name)
    module = getattr(theirs, "__module__", None)
    if not (isinstance(theirs, type) or callable(theirs) and hasattr(theirs, "__code__")) \
            or not module.startswith("torch.distributions"):
        return  # constraint objects: found at the package, above
    assert getattr(importlib.import_module("ember" + module[len("torch"):]), name) is ours
