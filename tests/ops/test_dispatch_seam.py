"""The dispatcher (``ember._ops.core``) reaches arrays only through ``ember._backend``: it
imports no array library, and a training step's conversions and in-place writes go through
the backend's functions (so a second array library is a second ``_backend`` module)."""
import ast
import collections
import pathlib

import ember
from ember import _backend
from ember._ops import core


def test_the_dispatcher_names_no_array_library():
    tree = ast.parse(pathlib.Path(core.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {"numpy", "cupy", "scipy"} & imported
    assert not any(isinstance(node, ast.Name) and node.id in ("np", "numpy") for node in ast.walk(tree))


def test_a_training_step_converts_and_writes_through_the_backend(monkeypatch):
    calls = collections.Counter()
    for name in ("as_array", "copy_into", "broadcast_shapes"):
        def counted(*args, name=name, original=getattr(_backend, name)):
            calls[name] += 1
            return original(*args)
        monkeypatch.setattr(_backend, name, counted)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
    x, y = ember.randn(5, 4), ember.tensor([0, 1, 0, 1, 1])
    loss = ember.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    x.add_(1)  # an in-place op: the dispatcher's write
    x.sum()  # a full reduction: NumPy returns a scalar, which the dispatcher converts
    assert calls["as_array"] and calls["copy_into"], calls
