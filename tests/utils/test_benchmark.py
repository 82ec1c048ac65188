"""ember.utils.benchmark against torch.utils.benchmark: statistics, printed forms, Timer."""
import time

import numpy as np
import pytest
import torch.utils.benchmark as tb

from ember.utils import benchmark as eb


def pair(number, raw_times, **spec):
    spec = {"stmt": "x + y", "setup": "pass", **spec}
    return (eb.Measurement(number, list(raw_times), eb.TaskSpec(**spec)),
            tb.Measurement(number, list(raw_times), tb.utils.common.TaskSpec(**spec)))


def without_address(text):
    return "\n".join(text.splitlines()[1:])


RNG = np.random.default_rng(0)
SAMPLES = {
    "steady": 1e-3 * (1 + 0.01 * RNG.standard_normal(20)),
    "noisy": 2e-5 * (1 + 0.3 * RNG.random(9)),
    "single": [3.2e-2],
    "three": [1e-6, 1.1e-6, 0.9e-6],
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_measurement_statistics_and_repr_equal_torch(name):
    ours, theirs = pair(100, SAMPLES[name], label="add", sub_label="small",
                        setup="x = torch.ones(3)\ny = x", description="desc")
    assert ours.median == pytest.approx(theirs.median, rel=1e-12)
    assert ours.mean == pytest.approx(theirs.mean, rel=1e-12)
    assert ours.iqr == pytest.approx(theirs.iqr, rel=1e-9, abs=1e-18)
    assert ours.times == theirs.times
    assert ours.significant_figures == theirs.significant_figures
    assert ours.has_warnings == theirs.has_warnings
    assert ours.title == theirs.title and ours.as_row_name == theirs.as_row_name
    assert without_address(repr(ours)) == without_address(repr(theirs))
    assert repr(ours).startswith("<ember.utils.benchmark.common.Measurement object at ")


@pytest.mark.parametrize("trim", [False, True])
@pytest.mark.parametrize("highlight", [False, True])
@pytest.mark.parametrize("colorize", [None, "columns", "rows"])
def test_compare_table_equals_torch(trim, highlight, colorize):
    tables = []
    for lib in (eb, tb):
        results = []
        for label, scale in (("add", 1), ("matmul", 1000)):
            for threads in (1, 4):
                for size, base in (("n=10", 2e-6), ("n=1000", 9e-5)):
                    for desc, factor in (("ember", 1.0), ("torch", 2.5)):
                        spread = 0.4 if (size, desc) == ("n=10", "torch") else 0.01
                        times = scale * base * factor / threads * (1 + spread * np.random.default_rng(7).random(12))
                        spec_cls = lib.TaskSpec if lib is eb else tb.utils.common.TaskSpec
                        results.append(lib.Measurement(10, list(times * 10), spec_cls(
                            stmt="f()", setup="pass", label=label, sub_label=size, description=desc,
                            num_threads=threads)))
        compare = lib.Compare(results)
        if trim:
            compare.trim_significant_figures()
        if highlight:
            compare.highlight_warnings()
        if colorize:
            compare.colorize(rowwise=colorize == "rows")
        tables.append(str(compare))
    assert tables[0] == tables[1]
    assert ("(! " in tables[0]) == highlight and ("\033[" in tables[0]) == bool(colorize)
    assert tables[0].count("Times are in nanoseconds (ns).") == 1  # add: 2e-6 / 4 threads
    assert tables[0].count("Times are in microseconds (us).") == 1  # matmul


def test_compare_merges_replicates_and_marks_missing_cells():
    tables = []
    for lib, spec_cls in ((eb, eb.TaskSpec), (tb, tb.utils.common.TaskSpec)):
        spec = spec_cls(stmt="f()", setup="pass", label="L", sub_label="row", description="a")
        other = spec_cls(stmt="g()", setup="pass", label="L", sub_label="row2", description="b")
        results = [lib.Measurement(1, [1e-3, 1.1e-3], spec), lib.Measurement(2, [2.2e-3], spec),
                   lib.Measurement(1, [5e-4], other)]
        tables.append(str(lib.Compare(results)))
    assert tables[0] == tables[1]
    with pytest.raises(ValueError, match="Measurement"):
        eb.Compare([1.0])


def test_blocked_autorange_runs_setup_once_and_fills_min_run_time():
    calls = {"setup": 0, "stmt": 0}

    def setup():
        calls["setup"] += 1

    def step():
        calls["stmt"] += 1
        time.sleep(1e-4)
    blocks = []
    timer = eb.Timer("step()", setup="setup()", globals={"setup": setup, "step": step},
                     label="sleep", description="ember")
    m = timer.blocked_autorange(callback=lambda number, seconds: blocks.append((number, seconds)),
                                min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02
    assert len(blocks) == len(m.raw_times) and all(n == m.number_per_run for n, _ in blocks)
    assert m.median >= 1e-4 and m.label == "sleep" and m.description == "ember"
    # setup runs once per block (as timeit does), and the statement number_per_run times per block
    assert calls["stmt"] >= m.number_per_run * len(m.raw_times)


def test_timeit_and_adaptive_autorange():
    m = eb.Timer("x.sum()", setup="x = torch.ones(100)").timeit(50)
    assert m.number_per_run == 50 and len(m.raw_times) == 1
    assert m.median > 0
    a = eb.Timer("x.sum()", setup="x = ember.ones(100)").adaptive_autorange(threshold=0.5, max_run_time=0.5)
    assert len(a.raw_times) > 3 or sum(a.raw_times) > 0.5


def test_statement_sees_ember_as_torch():
    m = eb.Timer("assert torch is ember and torch.ones(1).item() == 1.0").timeit(3)
    assert m.median > 0


def test_bad_arguments_raise_like_torch():
    with pytest.raises(ValueError):
        tb.Timer(stmt=lambda: None)
    with pytest.raises(ValueError, match="str"):
        eb.Timer(stmt=lambda: None)
    with pytest.raises(NotImplementedError):
        eb.Timer("1", language="c++")
    with pytest.raises(ValueError, match="language"):
        eb.Timer("1", language="rust")
    with pytest.raises(NotImplementedError):
        eb.Timer("1").repeat()


def test_num_threads_limits_blas_while_timing():
    from threadpoolctl import threadpool_info
    seen = []
    eb.Timer("seen.append(max((p['num_threads'] for p in info()), default=1))",
             globals={"seen": seen, "info": threadpool_info}, num_threads=1).timeit(2)
    assert seen and all(n == 1 for n in seen)
