"""Issue 10's list audited against torch 2.13 (session 32): a clock read in a compiled function
a draw from the user's own random stream or ``next()`` of an iterator is input (a graph break, as torch's dynamo),
``explain``'s ``user_stack`` holds FrameSummary objects and ``print(t)`` is one break, an
unusable compile cache never stops the run, ``EMBER_LOGS`` reads as ``TORCH_LOGS``
(torch's names, ``all``, ``-name``, an unknown name a ValueError), and ``ember._dynamo.config``
takes torch's keys (``fail_on_recompile_limit_hit`` honoured) and refuses a typo."""
import datetime
import itertools
import random
import time
import warnings

import numpy as np
import pytest

import ember
from ember import _logging
from ember.compiler import backends, config_module


def _timed():
    def step(x):
        t0 = time.perf_counter()
        y = x * 2
        return y + (time.perf_counter() - t0 > -1.0), time.perf_counter()
    return step


def test_a_clock_read_runs_again_on_every_call_as_under_torch_compile():
    # (torch.compile's: 3 different times, dynamo breaks at time.perf_counter; not run here: 8 s)
    ember._dynamo.reset()
    step = ember.compile(_timed(), backend="eager")
    stamps = [step(ember.ones(2))[1] for _ in range(3)]
    assert len(set(stamps)) == 3  # (the replay gave the recording's time back)
    assert float(step(ember.ones(2))[0][0]) == 3.0
    ember._dynamo.reset()
    now = ember.compile(lambda x: x + datetime.datetime.now().microsecond, backend="eager")
    assert len({float(now(ember.zeros(1))[0]) for _ in range(3)} | {-1.0}) >= 3
    out = ember._dynamo.explain(_timed())(ember.ones(2))
    assert out.graph_break_count >= 1 and "time.perf_counter()" in out.break_reasons[0].reason


class _Noisy(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.rng = np.random.default_rng(0)

    def forward(self, x):
        return x + float(self.rng.normal())


def _drawing(stream):
    draw = stream.random if hasattr(stream, "random") else stream.rand
    return lambda x, box: x + float(draw()) + float(box["rng"].uniform())


@pytest.mark.parametrize("stream", [np.random.default_rng(1), np.random.RandomState(1), random.Random(1)],
                         ids=["Generator", "RandomState", "Random"])
def test_a_users_own_random_stream_draws_anew_on_every_call(stream):
    # (torch.compile's: new numbers each call; ember's replay gave the recording's back)
    ember._dynamo.reset()
    noisy, drawing, box = ember.compile(_Noisy()), ember.compile(_drawing(stream)), {"rng": np.random.default_rng(2)}
    assert len({float(noisy(ember.zeros(1))[0]) for _ in range(3)}) == 3
    assert len({float(drawing(ember.zeros(1), box)[0]) for _ in range(3)}) == 3


def _generator():
    for k in range(100):
        yield float(k * k)


def _adding_next(it):
    return lambda x: x + next(it)  # (``it`` a closure cell; a global's the same)


def test_next_of_an_iterator_runs_again_on_every_call():
    # torch.compile's: [1, 2, 3], [10, 11, 12], [1, 10, 100], [0, 1, 4], [50, 51, 52]; ember's replay repeated the first
    cases = [(iter([1.0, 2.0, 3.0]), [1, 2, 3]), (itertools.count(10), [10, 11, 12]),
             (itertools.cycle([1.0, 10.0, 100.0]), [1, 10, 100]), (_generator(), [0, 1, 4]),
             (zip(range(50, 60), "abcdefghij"), None)]
    for it, want in cases:
        ember._dynamo.reset()
        step = ember.compile(_adding_next(it) if want else lambda x: x + next(it)[0], backend="eager")
        assert [float(step(ember.zeros(1))[0]) for _ in range(3)] == (want or [50, 51, 52])
    ember._dynamo.reset()  # passed as an argument (a default value too): watched as well
    step = ember.compile(lambda x, it=iter([1.0, 2.0, 3.0]), rng=np.random.default_rng(0): x + next(it) + rng.random())
    assert len({float(step(ember.zeros(1))[0]) for _ in range(3)}) == 3


def _printing(x):
    y = x.sin()
    print(y)
    return y * 2


def test_explain_user_stack_holds_frame_summaries_and_print_of_a_tensor_is_one_break(capsys):
    # torch 2.13's explain(_printing): 2 graphs, 1 break, user_stack [<FrameSummary ... line (print) in _printing>]
    # (not run here: dynamo's first explain takes 7 s)
    out = ember._dynamo.explain(_printing)(ember.ones(2))
    frame = out.break_reasons[0].user_stack[-1]
    assert (out.graph_count, out.graph_break_count) == (2, 1)
    assert (frame.filename, frame.lineno, frame.name, frame.line) == (
        __file__, _printing.__code__.co_firstlineno + 2, "_printing", "print(y)")
    assert f"      <FrameSummary file {__file__}, line {frame.lineno} in _printing>" in str(out)


def test_an_unusable_compile_cache_runs_generated_python_with_one_warning(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # (ember/compile cannot be made under it)
    monkeypatch.setattr(backends, "_warned", set())
    ember._dynamo.reset()
    f = ember.compile(lambda x, w: ember.nn.functional.gelu(x @ w).sum(1))
    x, w = ember.randn(5, 3), ember.randn(3, 4)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = f(x, w)
        f(x + 1, w)
    assert ember.allclose(got, ember.nn.functional.gelu(x @ w).sum(1), atol=1e-6)
    messages = [str(w.message) for w in seen if "compile cache" in str(w.message)]
    assert len(messages) == 1 and "Not a directory" in messages[0], [str(w.message) for w in seen]


def test_ember_logs_reads_as_torch_logs(monkeypatch):
    for setting, on, off in [("graph_code", {"graph"}, {"output_code"}), ("+kernel_code", {"output_code"}, {"graph"}),
                             ("all,-guards", {"graph", "recompiles", "output_code", "guards"}, set()),
                             ("dynamo,+aot,fake_tensor", set(), {"graph", "guards"})]:
        monkeypatch.setenv("EMBER_LOGS", setting)
        assert {n for n in on | off if _logging.log_enabled(n)} == on, setting
    monkeypatch.setenv("EMBER_LOGS", "graph,grpah")
    with pytest.raises(ValueError, match=r"Invalid log settings: graph,grpah, must be a comma separated(.|\n)*Valid "
                                         r"settings:\n.*graph_code"):
        ember.compile(lambda x: x)


def test_dynamo_config_takes_torchs_keys_and_refuses_a_typo():
    import torch._dynamo  # (its config's defaults, the oracle)
    theirs = torch._dynamo.config.get_config_copy()
    config = ember._dynamo.config
    assert {k: getattr(config, k) for k in config_module._DYNAMO_IGNORED} == \
        {k: theirs[k] for k in config_module._DYNAMO_IGNORED}
    assert config.fail_on_recompile_limit_hit is theirs["fail_on_recompile_limit_hit"] is False
    for wrong in (lambda: setattr(config, "recompile_limt", 3), lambda: config.recompile_limt,
                  lambda: config.patch(recompile_limt=3).__enter__()):
        with pytest.raises(AttributeError, match=r"^ember._dynamo.config.recompile_limt does not exist$"):
            wrong()
    ember._dynamo.reset()
    with config.patch(fail_on_recompile_limit_hit=True, recompile_limit=2, suppress_errors=True):
        double = ember.compile(lambda x: x * 2, backend="eager", dynamic=False)
        double(ember.ones(1)), double(ember.ones(2))
        with pytest.raises(ember._dynamo.exc.FailOnRecompileLimitHit, match="due to fail_on_recompile_limit_hit"):
            double(ember.ones(3))
    assert (config.recompile_limit, config.suppress_errors) == (8, False)


def test_options_take_torchs_inductor_keys_with_their_types():
    # torch.compile(options=...) takes any torch._inductor.config key ("cpp_wrapper", "shape_padding":
    # ember raised "Unexpected optimization option"), checked against the key's type
    sin = lambda x: x.sin()  # noqa: E731
    for options in ({"cpp_wrapper": True}, {"shape_padding": True}, {"compile_threads": 2}, {"cpp.simdlen": 8}):
        assert ember.compile(sin, options=options)  # (resolved at compile(), as torch's)
    with pytest.raises(RuntimeError, match="^Unexpected type of attr compile_threads, got str should be int$"):
        ember.compile(sin, options={"compile_threads": "2"})
    with pytest.raises(RuntimeError, match=r"^Unexpected optimization option nope, known options are \[.*'shape_padding'"):
        ember.compile(sin, options={"nope": True})


def test_a_failed_input_guard_names_the_argument():
    # torch: "last reason: 0/0: tensor 'x' size mismatch at index 0. expected 1, actual 2"
    ember._dynamo.reset()
    step = ember.compile(lambda batch: batch["x"][1] * 2, backend="eager", dynamic=False, recompile_limit=1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        step({"x": [ember.ones(1), ember.ones(1)]}), step({"x": [ember.ones(1), ember.ones(2)]})
    assert [str(w.message)[-46:] for w in seen] == ["""torch.float32, False) (tensor "batch['x'][1]")"""]
