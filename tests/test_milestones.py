"""ember.milestones: each milestone reproduces its result with fast settings, deterministically;
thresholds, the registry and plotting."""
import math
import os
import sys

import pytest

from ember import milestones
from ember.milestones import Check, History, Milestone, Threshold

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def fast_results():
    """Each milestone run once with fast settings, shared by the tests below. The transformer,
    ddp and mlperf milestones write files (a checkpoint, dumps, a report), so
    tests/test_transformer_milestone.py, tests/distributed/test_ddp_milestone.py and
    tests/test_mlperf_milestone.py run them into temporary directories instead."""
    return {name: m.run(fast=True, quiet=True) for name, m in milestones.MILESTONES.items()
            if name not in ("transformer", "ddp", "mlperf")}


def test_registry_is_the_ladder_in_order():
    assert [(m.name, m.year) for m in milestones.MILESTONES.values()] == [
        ("perceptron", 1958), ("xor", 1969), ("backprop", 1986), ("lenet", 1998), ("transformer", 2017),
        ("ddp", 2017), ("mlperf", 2018)]
    assert milestones.get("xor") is milestones.MILESTONES["xor"]
    with pytest.raises(KeyError, match="unknown milestone 'alexnet'; valid names: perceptron, xor, backprop, lenet, transformer, ddp, mlperf"):
        milestones.get("alexnet")


def test_perceptron_separates_the_clouds(fast_results):
    result = fast_results["perceptron"]
    assert result.metrics["test accuracy"] >= 0.95
    assert result.passed
    history = result.histories["perceptron"]
    assert len(history.loss) == len(history.accuracy) == 2


def test_xor_needs_a_hidden_layer(fast_results):
    result = fast_results["xor"]
    assert result.metrics["one-layer accuracy"] <= 0.75
    assert result.metrics["MLP accuracy"] == 1.0
    assert result.passed
    assert set(result.histories) == {"one layer", "two-layer MLP"}
    mlp = result.histories["two-layer MLP"]
    assert mlp.loss[-1] < 0.1 < mlp.loss[0]


def test_backprop_learns_the_digits(fast_results):
    result = fast_results["backprop"]
    assert result.metrics["test accuracy"] >= 0.95
    assert result.passed
    history = result.histories["MLP"]
    assert len(history.accuracy) == 6
    assert history.loss[-1] < history.loss[0] / 4


def test_results_report_time_and_finite_curves(fast_results):
    for result in fast_results.values():
        assert result.seconds > 0 and result.plots == []
        for history in result.histories.values():
            assert all(math.isfinite(v) for v in history.loss)
            assert all(0.0 <= v <= 1.0 for v in history.accuracy)


def test_runs_are_deterministic(fast_results):
    again = milestones.get("perceptron").run(fast=True, quiet=True)
    assert again.histories == fast_results["perceptron"].histories


def test_threshold_and_check():
    at_least, at_most = Threshold("accuracy", 0.95), Threshold("accuracy", 0.75, at_most=True)
    assert str(at_least) == ">= 0.95" and str(at_most) == "<= 0.75"
    assert Check(at_least, 0.95).passed and not Check(at_least, 0.9499).passed
    assert Check(at_most, 0.75).passed and not Check(at_most, 1.0).passed


def stub(value):
    def train(fast, seed, quiet):
        return {"accuracy": value}, {"model": History(loss=[1.0, 0.5], accuracy=[0.5, value])}
    return Milestone("stub", 2000, "a stub", (Threshold("accuracy", 0.9),), train)


def test_run_reports_a_missed_threshold():
    result = stub(0.8).run()
    assert not result.passed and result.metrics == {"accuracy": 0.8}
    assert result.checks == [Check(Threshold("accuracy", 0.9), 0.8)]


def test_step_note_gives_the_step_time_and_where_compiling_pays():
    # a compiled run says what its first calls cost beyond the median step, summed over its
    # models, and the eager step time above which compiling pays; an eager run its step time
    def result(compiled, *timings):
        histories = {f"m{i}": History(steps=100, step_seconds=total, compile_seconds=compiling,
                                      graphs=2 if compiled else 0)
                     for i, (total, compiling) in enumerate(timings)}
        return milestones.Result("stub", [], histories, 1.0, compiled=compiled)
    assert result(True, (3.0, 1.0), (2.0, 0.5)).step_note() == (
        "stub (compiled): 200 training steps in 5.00 s, 1.50 s of it first calls (4 graphs captured, "
        "compiled or loaded from the cache), 17.50 ms a step after: compiling pays where an eager "
        "step takes over 25.00 ms")
    assert result(False, (3.0, None)).step_note() == "stub: 100 training steps in 3.00 s, 30.00 ms a step"
    assert stub(0.95).run().step_note() is None  # no steps timed


def test_plot_dir_gets_non_empty_pngs(tmp_path):
    result = milestones.get("xor").run(fast=True, quiet=True, plot_dir=tmp_path / "plots")
    assert result.plots == [tmp_path / "plots" / "xor-loss.png", tmp_path / "plots" / "xor-accuracy.png"]
    umask = os.umask(0)
    os.umask(umask)
    for path in result.plots:
        assert path.read_bytes().startswith(PNG_SIGNATURE) and path.stat().st_size > 1000
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(os.listdir(tmp_path / "plots")) == ["xor-accuracy.png", "xor-loss.png"]


def test_plotting_without_matplotlib_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with pytest.raises(ImportError, match=r"install ember\[plot\]"):
        stub(0.95).run(plot_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_ddp_without_mpi_says_how_to_install_it_in_one_line(monkeypatch, capsys):
    from ember.milestones import ddp
    monkeypatch.setattr(ddp.dist, "is_available", lambda: False)
    result = milestones.get("ddp").run(fast=True, quiet=True)
    assert not result.passed and result.metrics["test accuracy"] == 0.0
    assert capsys.readouterr().err == 'ddp: needs mpi4py and Open MPI: pip install "ember[distributed]"\n'
