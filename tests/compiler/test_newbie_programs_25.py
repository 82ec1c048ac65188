"""What a newcomer's public PyTorch programs found under ``import ember as torch`` (session 25, NEWBIE25).

Run unchanged but for the import (synthetic data of the datasets' shapes, sizes shrunk with the
programs' own flags), eagerly and with ``torch.compile`` added, against torch 2.13: nanoGPT's
``train.py`` (its ``--compile=True``), pytorch/examples' mnist, vae, dcgan, word_language_model
(LSTM and Transformer) and time_sequence_prediction (LBFGS over an unrolled ``LSTMCell`` loop)
matched torch eager's losses. What broke was the "Introduction to torch.compile" tutorial's
comparison with FX tracing: ``torch.fx.symbolic_trace(f1, concrete_args={"x": inp1})`` gave a
GraphModule without the ``x`` argument, so calling it as ``fx_f1(inp1, inp2)`` raised TypeError.
"""
import warnings

import numpy as np
import pytest
import torch

import ember


def _f1(x, y):  # the tutorial's data-dependent branch
    if x.sum() < 0:
        return -y
    return y


def _flagged(x, y, flag, opt=None):
    if flag:
        return x + y
    if opt is None:
        return x - y
    return x


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_symbolic_trace_concrete_args_keep_the_argument_and_check_it(lib):
    """``concrete_args`` fixes a value but the GraphModule still takes the argument, as a
    placeholder ``<name>_1`` (the tutorial calls ``fx_f1(inp1, inp2)``); a tensor value is not
    checked (a warning says so), a bool or number is checked by ``torch._assert``, None by an
    is-None check, each raising torch's AssertionError on another value (before: the argument
    was dropped from ``forward``)."""
    inp1, inp2 = lib.ones(2, 2), lib.arange(4.0).view(2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fx_f1 = lib.fx.symbolic_trace(_f1, concrete_args={"x": inp1})
    assert any("Was not able to add assertion to guarantee correct input x" in str(w.message) for w in caught)
    assert [n.name for n in fx_f1.graph.nodes] == ["x_1", "y", "output"]
    np.testing.assert_array_equal(fx_f1(inp1, inp2).numpy(), inp2.numpy())
    np.testing.assert_array_equal(fx_f1(-inp1, inp2).numpy(), inp2.numpy())  # (specialised: not -y)
    g = lib.fx.symbolic_trace(_flagged, concrete_args={"flag": True, "opt": None})
    assert [n.name for n in g.graph.nodes] == ["x", "y", "flag_1", "eq", "_assert", "opt_1", "_assert_is_none",
                                               "add", "output"]
    assert "torch._assert(eq, 'flag has been specialized to have value True but got another value')" in g.code
    np.testing.assert_array_equal(g(inp1, inp2, True).numpy(), (inp1 + inp2).numpy())
    with pytest.raises(AssertionError, match="^flag has been specialized to have value True but got another value$"):
        g(inp1, inp2, False)
    with pytest.raises(AssertionError, match="^opt has been specialized to have value None but got another value$"):
        g(inp1, inp2, True, 3)


def test_assert_is_torchs():
    """``torch._assert(condition, message)`` (torchvision's models call it): nothing when true,
    AssertionError(message) when false, for a bool or a one-element tensor."""
    for lib in (torch, ember):
        assert lib._assert(True, "x") is None
        assert lib._assert(lib.tensor(True), "x") is None
        for false in (False, lib.tensor(False)):
            with pytest.raises(AssertionError, match="^boom$"):
                lib._assert(false, "boom")
