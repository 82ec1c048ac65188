"""benchmarks/scaling_table.py: the α/β predictions of docs/distributed.md are its output for
the figures the page records, and its formulas agree with the closed forms they come from."""
import math
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import scaling_table  # noqa: E402  (a script of benchmarks/, not a package)


def test_the_page_table_is_the_scripts_output_for_its_recorded_figures():
    page = (REPO / "docs" / "distributed.md").read_text()
    alpha_us, beta_ns, written = scaling_table.recorded(page)
    assert written == scaling_table.table(alpha_us, beta_ns)


def test_ring_and_tree_match_their_closed_forms():
    alpha, beta, nbytes = 3e-6, 2e-10, 4 << 20
    # two ranks: one exchange each way of half the message (ring), one level down and up (tree)
    assert scaling_table.ring(2, nbytes, alpha, beta) == pytest.approx(2 * alpha + nbytes * beta)
    assert scaling_table.tree(2, nbytes, alpha, beta) == pytest.approx(2 * (alpha + nbytes * beta))
    # the ring's bandwidth term tends to 2 M beta; the tree's grows with log2(p)
    assert scaling_table.ring(1 << 20, nbytes, 0, beta) == pytest.approx(2 * nbytes * beta, rel=1e-5)
    assert scaling_table.tree(1024, nbytes, alpha, 0) == pytest.approx(20 * alpha)
    assert math.isclose(scaling_table.RESNET50_BYTES, 102_228_128)


def test_write_replaces_only_the_table(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("intro\n\n" + scaling_table.table(36, 5.7) + "\nafter the table\n")
    scaling_table.main(["10", "1.5", "--write", str(page)])
    text = page.read_text()
    assert text.startswith("intro\n\n") and text.endswith("\nafter the table\n")
    assert scaling_table.recorded(text)[:2] == (10, 1.5)
    lenet_ring = scaling_table.ring(8, scaling_table.LENET_BYTES, 10e-6, 1.5e-9)
    assert f"| 8 | {lenet_ring * 1e3:.1f} ms |" in text


def test_a_page_without_the_marker_is_a_clear_error():
    with pytest.raises(ValueError, match="scaling-table"):
        scaling_table.recorded("no table here\n")
