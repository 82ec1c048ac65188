"""The ddp milestone (fast): LeNet on 4 ranks, rank 3 killed halfway, survivors reach 0.97;
its timeline of ranks alive per step is printed and, with a plot directory, drawn."""
import pytest

pytest.importorskip("mpi4py", reason="the ddp milestone needs the distributed extra")

from ember.milestones import ddp  # noqa: E402

from .launch import needs_ulfm  # noqa: E402


@needs_ulfm
def test_survivors_finish_above_threshold_and_fr_trace_names_the_dead_rank(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    result = ddp.milestone(tmp_path).run(fast=True, quiet=True, plot_dir=tmp_path / "plots")
    assert result.passed, result.metrics
    out = capsys.readouterr().out
    assert "4 ranks [0, 1, 2, 3]" in out and "3 ranks [0, 1, 2]" in out
    assert "rank 3 wrote no dump" in out
    assert sorted(p.name for p in (tmp_path / "fr").iterdir()) == ["rank_0.json", "rank_1.json", "rank_2.json"]
    run = next(iter(result.histories.values()))
    steps = len(run.alive)
    assert run.alive[:run.killed_at] == [[0, 1, 2, 3]] * run.killed_at
    assert run.alive[run.killed_at:] == [[0, 1, 2]] * (steps - run.killed_at)
    assert [p.name for p in result.plots] == ["ddp-loss.png", "ddp-accuracy.png", "ddp-timeline.png"]
    timeline = (tmp_path / "plots" / "ddp-timeline.png").read_bytes()
    assert timeline.startswith(b"\x89PNG") and len(timeline) > 5000
    assert result.seconds < 180
