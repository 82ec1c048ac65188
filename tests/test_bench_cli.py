"""``ember bench``: finding the suites, running them as subprocesses, parsing their JSON lines
and printing one table (with torch: ratios; without: ember's own figures)."""
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from ember.cli import bench, main

REPO = Path(__file__).resolve().parents[1]

# A tiny suite in the form of the real ones: options, its own table, one JSON line last. It
# echoes its command line so that tests see the options it was given.
TINY = textwrap.dedent('''\
    import argparse, json, sys
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cpu-time", action="store_true")
    args = parser.parse_args()
    print("case   ember   torch")
    print(json.dumps({"benchmark": "tiny", "timer": "cpu" if args.cpu_time else "wall",
                      "argv": sys.argv[1:],
                      "ember_over_torch": {"add": 1.25, "matmul": 0.5},
                      "ember": {"add": [2.5e-6, "s"], "matmul": [0.004, "s"],
                                "peak": [3 * 2**20, "B"]}}))
''')
# Without torch: ember's figures only.
ALONE = textwrap.dedent('''\
    import json
    print(json.dumps({"benchmark": "alone", "timer": "wall", "ember": {"add": [2.5e-6, "s"]}}))
''')
# The older form: a bare JSON object of ratios, no options but --repeat.
BARE = textwrap.dedent('''\
    import argparse, json
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.parse_args()
    print(json.dumps({"lstm_fwd_bwd": 1.5}))
''')


@pytest.fixture
def suites(tmp_path, monkeypatch):
    directory = tmp_path / "benchmarks"
    directory.mkdir()
    (directory / "bench_tiny.py").write_text(TINY)
    (directory / "bench_bare.py").write_text(BARE)
    (directory / "bench_alone.py").write_text(ALONE)
    (directory / "bench_broken.py").write_text("import sys\nsys.exit('no torch here')\n")
    (directory / "helper.py").write_text("raise SystemExit('not a suite')\n")
    monkeypatch.setattr(bench, "benchmarks_dir", lambda: directory)
    return directory


def table_rows(out):
    """The table's rows (split into words) and headers; the last line is a note."""
    lines = out.splitlines()
    return [re.split(r"\s{2,}", line.strip()) for line in lines[2:-1]], lines[0].split()


def test_finds_the_checkouts_suites():
    directory = bench.benchmarks_dir()
    assert directory == REPO / "benchmarks"
    assert {"core", "conv", "cnn", "lstm", "gpt"} <= set(bench.find_suites(directory))


def test_one_suite_prints_ratios_and_its_own_figures(suites, capsys):
    assert main(["bench", "tiny"]) == 0
    out = capsys.readouterr()
    rows, headers = table_rows(out.out)
    assert out.out.splitlines()[-1].startswith("ratio: ember/torch, unless")
    assert headers == ["suite", "case", "ember", "ratio", "better", "timer"]
    assert rows == [["tiny", "add", "2.5 us", "1.25", "lower", "wall"],
                    ["tiny", "matmul", "4 ms", "0.50", "lower", "wall"],
                    ["tiny", "peak", "3 MB", "lower", "wall"]]
    assert "running bench_tiny.py" in out.err


def test_cpu_time_and_quick_reach_the_suites(suites, capsys, monkeypatch):
    lines = []
    real_run = bench.subprocess.run

    def run(command, **kwargs):
        completed = real_run(command, **kwargs)
        lines.append(bench.last_json_line(completed.stdout))
        return completed
    monkeypatch.setattr(bench.subprocess, "run", run)
    assert main(["bench", "tiny", "bare", "--cpu-time", "--quick"]) == 0
    tiny, bare = lines
    assert tiny["argv"] == ["--cpu-time", "--repeat", "1"]
    assert bare is not None
    rows, _ = table_rows(capsys.readouterr().out)
    assert rows[0][-1] == "cpu"
    assert rows[-1] == ["bare", "LSTM forward backward", "1.50", "lower"]
    # A suite without --cpu-time runs on one thread instead (checked through the command).
    command, env = bench.suite_command(suites / "bench_bare.py", cpu_time=True, quick=True)
    assert command == [sys.executable, str(suites / "bench_bare.py"), "--repeat", "1"]
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"


def test_without_torch_the_table_shows_embers_figures(suites, capsys, monkeypatch):
    real_find_spec = bench.importlib.util.find_spec
    monkeypatch.setattr(bench.importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real_find_spec(name, *a))
    assert main(["bench", "alone"]) == 0
    out = capsys.readouterr().out
    rows, headers = table_rows(out)
    assert headers == ["suite", "case", "ember", "better", "timer"]
    assert rows == [["alone", "add", "2.5 us", "lower", "wall"]]
    assert out.splitlines()[-1].startswith("torch is not installed: ember's own figures;")
    # A suite comparing ember with itself keeps its ratios.
    assert main(["bench", "alone", "bare"]) == 0
    rows, headers = table_rows(capsys.readouterr().out)
    assert headers == ["suite", "case", "ember", "ratio", "better", "timer"]
    assert rows[-1] == ["bare", "LSTM forward backward", "1.50", "lower"]


def test_rows_say_which_way_is_better_and_name_cases_in_words():
    assert [bench.better(unit) for unit in ("s", "B", "tok/s", "x", "")] == \
        ["lower", "lower", "higher", "higher", "lower"]
    assert bench.case_in_words("add_tiny_grad") == "add tiny with gradient"
    assert bench.case_in_words("matmul_512_vs_numpy") == "matmul 512 vs NumPy"
    assert bench.case_in_words("loop.a_over_b") == "loop: a/b"


def test_a_busy_machine_is_warned_about(suites, capsys, monkeypatch):
    monkeypatch.setattr(bench, "machine_load", lambda: (7.5, 2))
    assert main(["bench", "tiny"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: the machine is busy (load average 7.5 on 2 CPUs)") == 1
    monkeypatch.setattr(bench, "machine_load", lambda: (0.2, 2))
    assert main(["bench", "tiny"]) == 0
    assert "busy" not in capsys.readouterr().err


def test_a_failing_suite_is_reported_and_exits_one(suites, capsys):
    assert main(["bench", "broken", "tiny"]) == 1
    out = capsys.readouterr()
    assert "bench_broken.py failed (exit status 1, no JSON line):\nno torch here" in out.err
    assert [row[0] for row in table_rows(out.out)[0]] == ["tiny", "tiny", "tiny"]


def test_unknown_suite_is_a_usage_error_naming_the_valid_ones(suites, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "tiny", "alexnet"])
    assert exit_info.value.code == 2
    assert ("unknown benchmark suite 'alexnet'; valid names: alone, bare, broken, tiny"
            in capsys.readouterr().err)


def test_no_benchmarks_folder_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setattr(bench, "benchmarks_dir", lambda: None)
    assert main(["bench"]) == 1
    assert "no benchmarks/ folder with bench_*.py scripts" in capsys.readouterr().err


def test_locating_from_a_flat_or_src_layout(tmp_path, monkeypatch):
    for layout in ("src/ember", "ember"):
        root = tmp_path / layout.replace("/", "_")
        package = root / layout
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        monkeypatch.setattr(bench.ember, "__file__", str(package / "__init__.py"))
        assert bench.benchmarks_dir() is None
        (root / "benchmarks").mkdir()
        (root / "benchmarks" / "bench_x.py").write_text("")
        assert bench.benchmarks_dir() == root / "benchmarks"


def test_json_line_and_value_formats():
    assert bench.last_json_line('table\n{"a": 1}\n{not json\n') == {"a": 1}
    assert bench.last_json_line("no json") is None
    assert bench.figures(json.loads('{"x": 2.0, "name": "s"}')) == ({"x": 2.0}, {}, None)
    nested = {"timer": "cpu", "ratios": {"loop": {"a_over_b": 1.02}, "step": 0.9}}
    assert bench.figures(nested) == ({"loop.a_over_b": 1.02, "step": 0.9}, {}, "cpu")
    assert bench.format_value(1.5, "s") == "1.5 s"
    assert bench.format_value(2.5e-7, "s") == "0.25 us"
    assert bench.format_value(900.0, "tok/s") == "900 tok/s"
    assert bench.format_value(3.0, "x") == "3 x"
