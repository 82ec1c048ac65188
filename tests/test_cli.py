"""The ``ember`` command: milestones list/run, exit statuses, usage errors, python -m ember."""
import os
import subprocess
import sys

import pytest

from ember import milestones as registry
from ember.cli import main
from ember.milestones import History, Milestone, Threshold


def stub(name, value, bound=0.9):
    def train(fast, seed, quiet):
        return {"accuracy": value}, {"model": History(loss=[1.0, 0.5], accuracy=[0.5, value])}
    return Milestone(name, 2000, f"{name} story", (Threshold("accuracy", bound),), train)


@pytest.fixture
def stubs(monkeypatch):
    ladder = {"good": stub("good", 0.97), "bad": stub("bad", 0.42)}
    monkeypatch.setattr(registry, "MILESTONES", ladder)
    return ladder


def test_list_shows_name_year_threshold_story(capsys):
    assert main(["milestones", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "year", "threshold", "story"]
    assert lines[2].split()[:6] == ["perceptron", "1958", "test", "accuracy", ">=", "0.95"]
    assert "separating two classes" in lines[3]  # a long story wraps onto a continuation line
    assert lines[4].startswith("xor") and "one-layer accuracy <= 0.75" in lines[4]
    assert "MLP accuracy >= 1.00" in lines[5]
    assert lines[6].startswith("backprop") and "Rumelhart" in lines[6]
    assert max(len(line) for line in lines) <= 100  # fits a 100-column terminal


def test_run_passing_milestone_exits_zero(capsys, stubs):
    assert main(["milestones", "run", "good", "--quiet"]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0].split() == ["milestone", "metric", "value", "threshold", "result", "seconds"]
    assert lines[2].split()[:5] == ["good", "accuracy", "0.9700", ">=", "0.90"]
    assert lines[2].split()[5] == "pass"
    assert out.err == ""


def test_run_all_reports_the_missed_threshold_and_exits_one(capsys, stubs):
    assert main(["milestones", "run", "all", "--quiet"]) == 1
    out = capsys.readouterr()
    rows = out.out.splitlines()[2:]
    assert [row.split()[0] for row in rows] == ["good", "bad"]
    assert rows[1].split()[2:6] == ["0.4200", ">=", "0.90", "FAIL"]
    assert out.err.strip() == "missed: bad: accuracy = 0.4200, needs >= 0.90"


def test_run_repeats_run_once_and_plot_writes_pngs(capsys, stubs, tmp_path):
    assert main(["milestones", "run", "good", "all", "good", "--plot", str(tmp_path), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[2:4]] == ["good", "bad"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bad-accuracy.png", "bad-loss.png", "good-accuracy.png", "good-loss.png"]
    assert f"wrote {tmp_path / 'good-loss.png'}" in out


def test_unknown_milestone_is_a_usage_error_naming_the_valid_ones(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["milestones", "run", "xor", "alexnet"])
    assert exit_info.value.code == 2
    assert ("unknown milestone 'alexnet'; valid names: perceptron, xor, backprop, lenet, transformer, ddp, mlperf, all"
            in capsys.readouterr().err)


@pytest.mark.parametrize("argv", [[], ["milestones"], ["milestones", "run"]])
def test_missing_arguments_are_usage_errors(argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2


def test_python_dash_m_ember_runs_a_real_milestone(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "ember", "milestones", "run", "xor", "--fast", "--plot", str(tmp_path)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONWARNINGS": "error"})
    assert completed.returncode == 0, completed.stderr
    rows = [line.split() for line in completed.stdout.splitlines()[2:4]]
    assert rows[0][:5] == ["xor", "one-layer", "accuracy", rows[0][3], "<="]
    assert rows[1][:6] == ["xor", "MLP", "accuracy", "1.0000", ">=", "1.00"]
    assert (tmp_path / "xor-loss.png").stat().st_size > 1000


def test_run_compile_trains_the_steps_compiled_and_meets_the_threshold(capsys):
    """``--compile`` routes fit's training step through ember.compile: whole-step graphs are
    captured (torch's counters; the one break is the first call, which creates the optimizer's
    state), and the threshold is the same."""
    import ember
    ember.compiler.reset()
    assert main(["milestones", "run", "backprop", "--fast", "--compile", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "backprop (compiled)" in out and "pass" in out
    # what compiling cost, against the steps' time
    assert "backprop (compiled): 270 training steps in " in out and "(1 graph captured" in out
    counters = ember._dynamo.utils.counters
    # the training step (full batches and the short last one: the line's "1 graph") and, since
    # session 32, the evaluation's forward (compiled too under --compile)
    assert counters["stats"]["unique_graphs"] == 2
    assert all("optimizer's state" in reason for reason in counters["graph_break"])
    ember.compiler.reset()
