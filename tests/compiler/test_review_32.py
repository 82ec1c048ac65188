"""Adversarial checks of session 32's changes against torch 2.13 (issue 10, REVIEW32): what the
review found wrong, each fixed where it was made."""
import pytest
import torch

from graph_counts import graph_counts

import ember
from ember._logging import log_enabled


def _two_slices_of_one_float(x, lr):
    return x[int(lr):] + x[:int(lr * 2)].sum()


def test_two_ints_of_one_float_as_slice_bounds():
    """Two ints Python makes of ``lr`` (``int(lr)``, ``int(lr * 2)``) read as slice bounds: at the
    third call they became derived ints while the float recording had swapped the function's code
    (``float_constants``), and ``put_cells`` looked them up under the swapped code: an IndexError
    of ember's own (was: ``tuple index out of range`` at ``lr = 3.0``). torch's values."""
    lrs = [(v,) for v in (1.4, 2.6, 3.0, -1.6)]
    _, want = graph_counts(_two_slices_of_one_float, torch, lrs)
    _, got = graph_counts(_two_slices_of_one_float, ember, lrs)
    assert repr(got) == repr(want)


@pytest.mark.parametrize("setting", ["graph,,guards", " graph_code", "graph_code,", "+-graph", "graph ,guards", "nope.nope"])
def test_ember_logs_not_of_torch_s_form_raise_as_torch_logs(monkeypatch, setting):
    """torch reads ``TORCH_LOGS`` by a pattern (names with one ``+``/``-`` prefix, spaces only after
    a comma) and takes a module name only where ``importlib`` finds one: these raise its ValueError
    (ember took them, ``nope.nope`` as a module's name)."""
    monkeypatch.setenv("EMBER_LOGS", setting)
    with pytest.raises(ValueError, match=r"Invalid log settings: "):
        log_enabled("graph")


def test_ember_logs_take_a_module_name_as_torch_does(monkeypatch):
    """``numpy`` (a module torch's ``TORCH_LOGS`` takes: its logs) was ember's ValueError."""
    monkeypatch.setenv("EMBER_LOGS", "numpy, +graph_code")
    assert log_enabled("graph") and not log_enabled("guards")


def test_a_recompile_reason_names_a_closure_int_and_a_keyword(monkeypatch, capsys):
    """A guard on a position past the tensors (an int or float argument, a keyword, a closure
    cell's int) said ``argument 3: expected 2, got 3`` of a function of three arguments; torch's
    reasons name what they read (``L['k'] == 3``): now ``(closure int 'n')``, ``(keyword 'k')``."""
    monkeypatch.setenv("EMBER_LOGS", "recompiles")
    ember.compiler.reset()
    n = 2

    def f(x, lr, *, k=3):
        return x[:n] * k * lr
    compiled = ember.compile(f)
    for n, k in ((2, 3), (3, 3), (3, 4)):
        compiled(ember.arange(6.0), 0.5, k=k)
    err = capsys.readouterr().err
    assert "argument 3: expected 2, got 3 (closure int 'n')" in err
    assert "argument 2: expected 3, got 4 (keyword 'k')" in err
    ember.compiler.reset()
