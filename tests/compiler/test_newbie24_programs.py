"""What a newcomer's ``torch.compile`` programs found (session 24, NEWBIE24), each small.

Programs tried under ``import ember as torch`` (ember compiled with the C backend and
``aot_eager`` == torch 2.13 eager, losses and parameters to 1e-5): a llama-style block (RMSNorm,
rotary embedding by ``einsum``, SwiGLU, ``scaled_dot_product_attention``) compiled region by
region (``for layer in model.layers: layer.compile()``, PyTorch's "regional compilation"
recipe); the "compiling the optimizer" tutorial (``@torch.compile def fn(): opt.step();
sched.step()`` with a tensor learning rate); a GAN step with two Adam optimizers and gradient
accumulation; a custom ``autograd.Function`` in a ``model.compile(mode="reduce-overhead")``
with a compiled ``cross_entropy`` and ``no_grad`` evaluation; a DDPM on 2-D points (compiled
noise predictor, sampling loop under ``no_grad``); a char-RNN (GRU and LSTM, truncated BPTT,
``clip_grad_norm_``). Those matched. What broke was the API of the tutorials and of the
"torch.compile troubleshooting" page: ``torch._dynamo.graph_break()``,
``torch.compiler.allow_in_graph``, ``is_dynamo_compiling``, ``list_backends``,
``cudagraph_mark_step_begin`` (reduce-overhead loops) and ``torch._logging.set_logs`` were
missing, and ``torch._dynamo.config.cache_size_limit = 64`` raised AttributeError.
"""
import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _forced_break(lib, calls):
    def f(x):
        y = x.sin()
        calls.append(1)
        lib._dynamo.graph_break()
        return y.cos() + 1
    return f


def test_graph_break_splits_as_torchs_and_fullgraph_refuses_it():
    """``torch._dynamo.graph_break()``: two graphs and one break in ``explain`` (as torch's),
    the Python between them runs on every call, ``fullgraph=True`` raises Unsupported, and
    outside a compile it does nothing."""
    x0 = np.arange(4.0, dtype=np.float32)
    counts = {}
    for lib in (torch, ember):
        calls = []
        f = _forced_break(lib, calls)
        ex = lib._dynamo.explain(f)(lib.tensor(x0))
        counts[lib.__name__] = (ex.graph_count, ex.graph_break_count)
        with pytest.raises(lib._dynamo.exc.Unsupported, match="graph_break"):
            lib.compile(f, fullgraph=True, backend="aot_eager")(lib.tensor(x0) + 1)
    assert counts["ember"] == counts["torch"] == (2, 1)
    calls = []
    f = _forced_break(ember, calls)
    cf = ember.compile(f, backend="aot_eager")
    outs = [cf(ember.tensor(x0)).numpy() for _ in range(3)] + [f(ember.tensor(x0)).numpy()]
    assert len(calls) == 4  # the Python between the graphs ran on every call
    for o in outs:
        np.testing.assert_allclose(o, np.cos(np.sin(x0)) + 1, rtol=1e-6)


def test_allow_in_graph_keeps_the_function_in_one_graph():
    """``torch.compiler.allow_in_graph(fn)`` returns ``fn`` (a list for a list) and refuses a
    non-callable with torch's AssertionError; the compiled caller stays one graph."""
    def helper(x):
        return x.relu() * 2
    for lib in (torch, ember):
        assert lib.compiler.allow_in_graph(helper) is helper
        assert lib._dynamo.allow_in_graph([helper, helper]) == [helper, helper]
        with pytest.raises(AssertionError, match="^allow_in_graph expects a callable$"):
            lib.compiler.allow_in_graph(3)
    ex = ember._dynamo.explain(lambda x: helper(x) + 1)(ember.ones(3))
    assert (ex.graph_count, ex.graph_break_count) == (1, 0)


def test_is_dynamo_compiling_list_backends_mark_step_and_cache_size_limit():
    """``is_dynamo_compiling()`` is True while captured and False eagerly; ``list_backends()``
    leaves out the debug backends as torch's; ``cudagraph_mark_step_begin()`` returns None;
    ``config.cache_size_limit = n`` sets ``recompile_limit`` (torch's alias)."""
    seen = {}
    for lib in (torch, ember):
        flags = []

        def h(x):
            flags.append(lib.compiler.is_dynamo_compiling())
            return x + 1
        lib.compile(h, backend="eager")(lib.ones(2))
        seen[lib.__name__] = (flags[0], lib.compiler.is_dynamo_compiling())
        assert lib.compiler.cudagraph_mark_step_begin() is None
        config, before = lib._dynamo.config, lib._dynamo.config.recompile_limit
        with config.patch(recompile_limit=before):  # (restores it)
            config.cache_size_limit = 3
            assert config.recompile_limit == config.cache_size_limit == 3
        assert config.recompile_limit == before
    assert seen["ember"] == seen["torch"] == (True, False)
    assert "inductor" in torch.compiler.list_backends() and "eager" not in torch.compiler.list_backends()
    assert ember.compiler.list_backends() == ["inductor"]
    assert ember._dynamo.list_backends(exclude_tags=()) == ["aot_eager", "eager", "inductor"]
    assert {"aot_eager", "eager", "inductor"} <= set(torch._dynamo.list_backends(exclude_tags=()))


def test_set_logs_turns_the_graph_break_log_on_and_off(capsys):
    """``torch._logging.set_logs(graph_breaks=True)`` (the troubleshooting page's first step)
    prints each graph break with the user's line; ``set_logs()`` turns it off again; a name
    torch's ``set_logs`` lacks is torch's TypeError."""
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1
    try:
        ember._logging.set_logs(graph_breaks=True, dynamo=20)
        ember.compile(f, backend="aot_eager")(ember.ones(3))
        err = capsys.readouterr().err
        assert "graph break in" in err and "if x.sum() > 0:" in err
        ember._logging.set_logs()
        ember.compile(f, backend="aot_eager")(-ember.ones(3))
        ember.compiler.reset()
        ember.compile(f, backend="aot_eager")(ember.ones(3))
        assert "graph break" not in capsys.readouterr().err
    finally:
        ember._logging.set_logs()
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="^set_logs\\(\\) got an unexpected keyword argument 'graph_brakes'$"):
            lib._logging.set_logs(graph_brakes=True)


def test_set_stance_as_context_manager_and_decorator_and_config_patch():
    """The set_stance tutorial's forms: ``with set_stance("force_eager"):`` runs a compiled
    function eagerly inside and restores the stance after; ``@set_stance("force_eager")`` does
    so while the decorated function runs. ``config.patch`` (with, decorator) restores the
    settings, ``cache_size_limit`` included (before: set_stance returned None, config had no patch)."""
    from ember._dynamo.utils import counters
    f = ember.compile(lambda x: x * 2, backend="aot_eager")
    with ember.compiler.set_stance("force_eager"):
        assert f(ember.ones(2)).tolist() == [2.0, 2.0]
    assert counters["stats"]["unique_graphs"] == 0

    @ember.compiler.set_stance("force_eager")
    def run(x):
        return f(x)
    run(ember.ones(2))
    assert counters["stats"]["unique_graphs"] == 0
    f(ember.ones(2))  # the stance after both is the default again: compiled
    assert counters["stats"]["unique_graphs"] == 1
    config = ember._dynamo.config
    before = config.recompile_limit
    with config.patch(cache_size_limit=2, suppress_errors=True):
        assert config.recompile_limit == 2 and config.suppress_errors is True
    assert config.recompile_limit == before and config.suppress_errors is False  # (torch's default)
    assert config.patch("recompile_limit", 3)(lambda: config.recompile_limit)() == 3
    assert config.patch({"recompile_limit": 5})(lambda: config.recompile_limit)() == 5
    assert config.recompile_limit == before


def test_mark_static_address_and_eval_frame_optimized_module():
    """``torch._dynamo.mark_static_address(t)`` accepts a tensor and refuses anything else with
    torch's TypeError; ``isinstance(m, torch._dynamo.eval_frame.OptimizedModule)`` (how trainers
    find a compiled model) holds for a compiled module."""
    for lib in (torch, ember):
        assert lib._dynamo.mark_static_address(lib.ones(2)) is None
        with pytest.raises(TypeError, match="^mark_static_address expects a tensor but received <class 'list'>$"):
            lib._dynamo.mark_static_address([1.0])
        model = lib.nn.Linear(2, 2)
        assert isinstance(lib.compile(model), lib._dynamo.eval_frame.OptimizedModule)
        assert not isinstance(model, lib._dynamo.eval_frame.OptimizedModule)


def _export_both(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(4, 2)
            self.register_buffer("seen", lib.ones(2))
            self.register_buffer("scratch", lib.ones(2), persistent=False)

        def forward(self, x, y):
            return self.lin(x + y) + self.seen + self.scratch, x * 2
    x = lib.ones(3, 4)
    return lib.export.export(M(), (x, x))


def test_export_graph_signature_specs_and_run_decompositions_as_torchs():
    """The torch.export tutorial's ``ep.graph_signature.input_specs`` / ``output_specs`` (kinds,
    names, targets, persistence; printed as torch's) and ``ep.run_decompositions()`` (a program
    giving the same results) were missing. One tensor passed as both ``x`` and ``y``: the second
    placeholder is ``y`` as torch's (was ``input_1``)."""
    got = {}
    for lib in (torch, ember):
        ep = _export_both(lib)
        sig = ep.graph_signature
        got[lib.__name__] = ([str(s) for s in sig.input_specs], [s.kind.name for s in sig.output_specs],
                             [(s.kind.value, s.arg.name, s.target) for s in sig.input_specs])
        x = lib.arange(12.0).reshape(3, 4)
        decomposed = ep.run_decompositions()
        assert isinstance(decomposed, lib.export.ExportedProgram)
        for a, b in zip(decomposed.module()(x, x), ep.module()(x, x)):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
    assert got["ember"][0][:5] == got["torch"][0][:5] == [
        "p_lin_weight: PARAMETER target='lin.weight'", "p_lin_bias: PARAMETER target='lin.bias'",
        "b_seen: BUFFER target='seen' persistent=True", "b_scratch: BUFFER target='scratch' persistent=False",
        "x: USER_INPUT"]
    assert got["ember"][1:] == got["torch"][1:]


def _top_k_sample(lib):
    """nanoGPT's ``generate`` step: keep the top 3 logits, sample one token per row."""
    def step(logits):
        v, _ = lib.topk(logits, 3)
        logits = logits.masked_fill(logits < v[:, [-1]], -float("inf"))
        return lib.multinomial(lib.nn.functional.softmax(logits, dim=-1), num_samples=1)
    return step


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_multinomial_is_captured_and_draws_torchs_tokens(backend, fresh_cache):
    """``torch.multinomial`` in a compiled sampling step: one graph and no break, as torch's
    (before: two breaks, "random numbers drawn outside an op"), and the tokens of every call
    are torch's for the seed; a NaN row is still torch's RuntimeError."""
    logits = np.random.default_rng(0).standard_normal((2, 10)).astype(np.float32)
    draws = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        f = _top_k_sample(lib) if lib is torch else ember.compile(_top_k_sample(ember), backend=backend)
        draws[lib.__name__] = [f(lib.tensor(logits)).tolist() for _ in range(4)] + [f(lib.tensor(logits[:1])).tolist()]
        draws[lib.__name__].append(lib.multinomial(lib.ones(2, 5), 3, replacement=True).tolist())
    assert draws["ember"] == draws["torch"]
    ex = ember._dynamo.explain(_top_k_sample(ember))(ember.tensor(logits))
    assert (ex.graph_count, ex.graph_break_count) == (1, 0)
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        ember.compile(_top_k_sample(ember), backend=backend)(ember.full((2, 10), float("nan")))
