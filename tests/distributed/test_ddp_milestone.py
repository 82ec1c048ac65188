"""The ddp milestone (fast): LeNet on 4 ranks, rank 3 killed halfway, survivors reach 0.97."""
import pytest

pytest.importorskip("mpi4py", reason="the ddp milestone needs the distributed extra")

from ember.milestones import ddp  # noqa: E402


def test_survivors_finish_above_threshold_and_fr_trace_names_the_dead_rank(tmp_path, capsys):
    result = ddp.milestone(tmp_path).run(fast=True, quiet=True)
    assert result.passed, result.metrics
    out = capsys.readouterr().out
    assert "4 ranks [0, 1, 2, 3]" in out and "3 ranks [0, 1, 2]" in out
    assert "rank 3 wrote no dump" in out
    assert sorted(p.name for p in (tmp_path / "fr").iterdir()) == ["rank_0.json", "rank_1.json", "rank_2.json"]
    assert result.seconds < 180
