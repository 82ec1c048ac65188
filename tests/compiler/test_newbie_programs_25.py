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


def _bar(a, b):  # the tutorial's function with a graph break
    x = a / (lib_abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def lib_abs(a):
    return a.abs()


@pytest.mark.usefixtures("fresh_compiler")
def test_dynamo_export_of_a_function_and_a_module_as_torchs():
    """``torch._dynamo.export(f)(*args)`` (the tutorial's last section) returns an
    ``ExportResult`` (torch's fields) whose ``graph_module`` computes ``f`` (a module: torch
    eager's output on the same seeded weights); the deprecated ``export(f, *args)`` warns
    torch's FutureWarning and exports at once; a graph break is Unsupported (before:
    AttributeError, ember._dynamo had no export). torch._dynamo is left out: its import
    costs 3 s of CPU."""
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    outs = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
        outs[lib.__name__] = model(lib.tensor(x)).detach().numpy()
    with pytest.warns(FutureWarning, match="^export\\(f, \\*args, \\*\\*kwargs\\) is deprecated, use export"):
        result = ember._dynamo.export(model, ember.tensor(x))
    assert result._fields == ("graph_module", "guards")  # torch._dynamo.eval_frame.ExportResult's
    np.testing.assert_allclose(result[0](ember.tensor(x)).detach().numpy(), outs["torch"], rtol=1e-5, atol=1e-6)
    gm = ember._dynamo.export(lambda a, b: a * (b + 1))(ember.ones(3), ember.ones(3)).graph_module
    assert gm(ember.full((3,), 2.0), ember.full((3,), 3.0)).tolist() == [8.0, 8.0, 8.0]
    with pytest.raises(ember._dynamo.exc.Unsupported, match="graph break"):
        ember._dynamo.export(_bar)(ember.ones(3), ember.ones(3))
