"""A program that imports a class from the file where torch defines it finds it in ember too,
and ember's layers derive from the same (private) bases torch's do, so ``isinstance`` checks
written against torch's bases (``_BatchNorm``, ``_ConvNd``, ``_Loss``, ...) hold."""
import importlib
import inspect

import pytest
import torch.nn

import ember.nn

NAMED = [
    ("nn.modules.activation", "MultiheadAttention"),
    ("nn.modules.linear", "NonDynamicallyQuantizableLinear"),
    ("nn.modules.module", "Module"),
    ("nn.modules.loss", "_Loss"),
    ("nn.modules.loss", "_WeightedLoss"),
    ("nn.modules.batchnorm", "_BatchNorm"),
    ("nn.modules.batchnorm", "_NormBase"),
    ("nn.modules.conv", "_ConvNd"),
    ("nn.modules.conv", "_ConvTransposeNd"),
    ("nn.modules.pooling", "_AvgPoolNd"),
    ("nn.modules.pooling", "_AdaptiveAvgPoolNd"),
    ("nn.modules.pooling", "_MaxPoolNd"),
    ("nn.modules.padding", "_ReflectionPadNd"),
    ("nn.modules.padding", "_ReplicationPadNd"),
    ("nn.modules.container", "Sequential"),
    ("nn.parameter", "Parameter"),
    ("nn.parameter", "Buffer"),
]


def _both(path, name):
    return (getattr(importlib.import_module("torch." + path), name),
            getattr(importlib.import_module("ember." + path), name))


@pytest.mark.parametrize("path,name", NAMED, ids=[f"{p}.{n}" for p, n in NAMED])
def test_class_imports_from_where_torch_defines_it(path, name):
    theirs, ours = _both(path, name)
    assert inspect.isclass(ours) and ours.__name__ == theirs.__name__


def test_non_dynamically_quantizable_linear_is_a_linear_as_in_torch():
    _, ours = _both("nn.modules.linear", "NonDynamicallyQuantizableLinear")
    assert issubclass(ours, ember.nn.Linear)
    attention = ember.nn.MultiheadAttention(8, 2)
    assert type(attention.out_proj) is ours


def _layers():
    return [name for name in ember.nn.modules.__all__ if inspect.isclass(getattr(torch.nn, name, None))]


@pytest.mark.parametrize("name", _layers())
def test_layer_lives_where_torch_defines_it_and_has_its_bases(name):
    theirs, ours = getattr(torch.nn, name), getattr(ember.nn, name)
    path = theirs.__module__.removeprefix("torch.")
    assert getattr(importlib.import_module("ember." + path), name) is ours
    for base in theirs.__mro__[1:]:
        if base.__module__.startswith("torch.nn.modules."):
            ours_base = getattr(importlib.import_module("ember." + base.__module__[len("torch."):]),
                                base.__name__)
            assert issubclass(ours, ours_base), (name, base.__name__)
