"""Course mode: regions, workspaces, and a grader that grades the student's code (stubs fail,
the reference passes, a wrong answer fails that exercise alone), never crashing on bad work."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ember.course import MILESTONE_REQUIREMENTS, checks, regions, syllabus
from ember.course.grader import report, test as grade_module, test_modules as grade_module_all
from ember.course.workspace import STATE_FILE, Workspace, WorkspaceError

from wrong_answers import WRONG

ROOT = syllabus.source_root().parent
NUMBERS = sorted({e.number for e in syllabus.exercises()})


def ember_cli(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "ember", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def test_regions_find_stub_and_merge():
    text = ("def f(x):\n    '''doc'''\n    # course:begin 02/f\n    # hint: double it\n    y = 2 * x\n"
            "    return y\n    # course:end 02/f\n")
    (region,) = regions.find(text)
    assert (region.id, region.module, region.begin, region.end) == ("02/f", "02", 2, 6)
    stubbed = regions.stub(text, {"02/f"}, lambda i: f"write {i}")
    assert "y = 2 * x" not in stubbed and "# hint: double it" in stubbed and "# write 02/f" in stubbed
    two_parts = text + text.replace("def f", "def g")
    assert [r.id for r in regions.find(two_parts)] == ["02/f", "02/f"]
    assert len(regions.bodies(two_parts)["02/f"]) == 2
    namespace = {}
    exec(stubbed, namespace)
    with pytest.raises(NotImplementedError, match="02/f: not implemented yet"):
        namespace["f"](1)
    assert regions.merge(stubbed, regions.bodies(text)) == text
    for bad, message in (("# course:begin 02/f\n", "never ends"), ("# course:end 02/f\n", "was not begun"),
                         ("# course:begin 02/f\n# course:begin 02/g\n", "begins inside")):
        with pytest.raises(regions.RegionError, match=message):
            regions.find(bad, "x.py")


def test_every_exercise_has_a_check_and_every_check_an_exercise():
    ids = {e.id for e in syllabus.exercises()}
    for number in NUMBERS:
        checks.for_module(number)
    assert ids and ids == set(checks.CHECKS)
    assert set(WRONG) == ids, "each exercise needs a wrong answer in wrong_answers.py"


def test_markers_are_comments_only():
    # Stripping every marker and hint leaves the same program (ember runs the same code).
    for relpath in {e.relpath for e in syllabus.exercises()}:
        text = (ROOT / relpath).read_text()
        stripped = "\n".join(line for line in text.splitlines()
                             if not line.lstrip().startswith(("# course:", "# hint:")))
        assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(stripped)), relpath


def _solution_lines(relpath):
    """Lines of the region bodies of a reference file that occur nowhere outside its regions."""
    text = (ROOT / relpath).read_text()
    inside = set()
    for parts in regions.bodies(text).values():
        inside |= {line.strip() for body in parts for line in body if not regions.is_hint(line)}
    emptied = {i: [[]] * len(parts) for i, parts in regions.bodies(text).items()}
    outside = {line.strip() for line in regions.merge(text, emptied).splitlines()}
    return {line for line in inside - outside if line}


def _leaks(root):
    """Solution lines found in a workspace: a file's own, and any distinctive one elsewhere."""
    files = {p.relative_to(root).as_posix(): {line.strip() for line in p.read_text().splitlines()}
             for p in Path(root).rglob("*.py")}
    distinctive = {line for e in syllabus.exercises() for line in _solution_lines(e.relpath) if len(line) > 24}
    return {line for relpath, lines in files.items()
            for line in (_solution_lines(relpath) | distinctive) & lines}


def test_no_generated_workspace_contains_a_solution_line(tmp_path):
    assert sum(len(_solution_lines(e.relpath)) for e in syllabus.exercises()) > 20
    everything = Workspace.open(tmp_path / "all", create=True)
    for number in NUMBERS:
        alone = Workspace.open(tmp_path / number, create=True)
        alone.start(number)
        everything.start(number)
        assert not _leaks(alone.root), number
    assert not _leaks(everything.root)
    _fill(everything)
    assert _leaks(everything.root), "the check finds solution lines when they are there"


def _fill(ws, wrong=()):
    """Puts the reference body into every region, or the wrong answer for the ids in ``wrong``."""
    for path in ws.root.rglob("*.py"):
        relpath = path.relative_to(ws.root).as_posix()
        replacements = regions.bodies((ROOT / relpath).read_text())
        for region in regions.find(path.read_text()):
            if region.id in wrong:
                answer = WRONG[region.id]
                parts = answer if isinstance(answer, list) else [answer]
                replacements[region.id] = [None if part is None else
                                           [region.indent + line + "\n" for line in part.splitlines()]
                                           for part in parts]
        path.write_text(regions.merge(path.read_text(), replacements))


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    ws = Workspace.open(tmp_path_factory.mktemp("ws"), create=True)
    for number in NUMBERS:
        ws.start(number)
    return ws


def test_untouched_stubs_fail_every_exercise_with_not_implemented(started):
    for number, results in grade_module_all(started, NUMBERS, seconds_per_item=60).items():
        assert results and all(r["points"] == 0 and r["status"] == "not implemented" for r in results.values())
        assert "not implemented yet" in report(number, results)


def test_the_reference_passes_and_each_wrong_answer_fails_only_its_exercise(tmp_path):
    # Round k puts a wrong answer into the k-th exercise of every module at once (round 0: none),
    # so the whole sweep takes a few grading processes, not one per exercise.
    by_module = {n: [e.id for e in syllabus.exercises(n)] for n in NUMBERS}
    for k in range(1 + max(map(len, by_module.values()))):
        wrong = {ids[k - 1] for ids in by_module.values() if 0 < k <= len(ids)}
        ws = Workspace.open(tmp_path / f"round{k}", create=True)
        for number in NUMBERS:
            ws.start(number)
        _fill(ws, wrong=wrong)
        graded = grade_module_all(ws, NUMBERS, seconds_per_item=60)
        for number, results in graded.items():
            failed = {i for i, r in results.items() if r["points"] < r["max"]}
            assert failed == wrong & set(results), report(number, results)
            assert all(results[i]["detail"] for i in failed), "a failure says why"
            if k == 0:
                assert ws.passed(number)


def test_bad_work_never_crashes_the_grader(tmp_path):
    number = NUMBERS[0]
    exercise = syllabus.exercises(number)[0]
    ws = Workspace.open(tmp_path / "loop", create=True)
    ws.start(number)
    path = ws.root / exercise.relpath
    region = next(r for r in regions.find(path.read_text()) if r.id == exercise.id)
    path.write_text(regions.merge(path.read_text(), {exercise.id: [[region.indent + "while True:\n",
                                                                     region.indent + "    pass\n"]]}))
    results = grade_module(ws, number, seconds_per_item=2)
    assert results[exercise.id]["status"] == "time limit" and results[exercise.id]["points"] == 0
    path.write_text(path.read_text() + "\ndef broken(:\n")
    results = grade_module(ws, number, seconds_per_item=5)
    assert all(r["points"] == 0 for r in results.values())
    assert "SyntaxError" in results[exercise.id]["detail"] and path.name in results[exercise.id]["detail"]


def test_cli_start_test_status_and_clear_errors(tmp_path):
    number = NUMBERS[0]
    out = ember_cli("course", "start", number, str(tmp_path / "w"))
    assert out.returncode == 0 and "grade with" in out.stdout, out.stderr
    out = ember_cli("course", "test", number, "-w", str(tmp_path / "w"), "--seconds", "60")
    assert out.returncode == 1 and "not implemented" in out.stdout and "Traceback" not in out.stderr
    out = ember_cli("course", "status", "-w", str(tmp_path / "w"))
    assert out.returncode == 0 and "started" in out.stdout and "next: module" in out.stdout
    for args, message in ((("start", "99", str(tmp_path / "x")), "unknown course module '99'"),
                          (("test", number, "-w", str(tmp_path / "none")), "is not a course workspace"),
                          (("milestone", "perceptron", "-w", str(tmp_path / "w")), "unlocks when modules")):
        out = ember_cli("course", *args)
        assert out.returncode == 1 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
    state = json.loads((tmp_path / "w" / STATE_FILE).read_text())
    state["ember_version"] = "0.0.1"
    (tmp_path / "w" / STATE_FILE).write_text(json.dumps(state))
    with pytest.raises(WorkspaceError, match="made by ember 0.0.1"):
        Workspace.open(tmp_path / "w")
    out = ember_cli("course", "list")
    assert out.returncode == 0 and len(out.stdout.splitlines()) >= 22
    assert max(len(line) for line in out.stdout.splitlines()) <= 100


def test_grade_writes_one_row_per_student(tmp_path):
    number = NUMBERS[0]
    good = Workspace.open(tmp_path / "subs" / "ada", create=True)
    good.start(number)
    _fill(good)
    Workspace.open(tmp_path / "subs" / "bob", create=True).start(number)
    (tmp_path / "subs" / "eve").mkdir()
    out = ember_cli("course", "grade", str(tmp_path / "subs"), "--csv", str(tmp_path / "book.csv"), timeout=300)
    assert out.returncode == 0, out.stderr
    rows = (tmp_path / "book.csv").read_text().splitlines()
    assert rows[0].startswith("student,01,02") and len(rows) == 4
    most = sum(item.points for item in checks.for_module(number))
    assert rows[1].startswith("ada,") and rows[1].split(",")[-2] == str(most)
    assert rows[2].startswith("bob,") and rows[2].split(",")[-2] == "0"
    assert rows[3].startswith("eve,") and "not a course workspace" in rows[3]


def test_notebook_cells_carry_nbgrader_metadata_and_write_the_workspace(tmp_path):
    jupytext = pytest.importorskip("jupytext")
    from ember.course import notebook
    number = NUMBERS[0]
    ws = Workspace.open(tmp_path / "nb", create=True)
    ws.start(number)
    path = notebook.write(ws, number)
    nb = jupytext.read(path)
    solutions = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    ids = [e.id for e in syllabus.exercises(number)]
    assert len(solutions) == len(tests) == len(ids)
    assert all(c.metadata["nbgrader"]["locked"] and c.metadata["nbgrader"]["points"] > 0 for c in tests)
    assert solutions[0].source.startswith(f"%%course {ids[0]}") and "NotImplementedError" in solutions[0].source
    assert not _leaks(ws.root)
    # The %%course magic's writer puts the reference body into the file: the exercise passes.
    reference = "".join(regions.bodies((ROOT / syllabus.exercises(number)[0].relpath).read_text())[ids[0]][0])
    notebook.write_region(ids[0], reference, root=ws.root)
    notebook.grade(ids[0], root=ws.root, seconds_per_item=60)
    notebook.write_region(ids[0], WRONG[ids[0]], root=ws.root)
    with pytest.raises(AssertionError):
        notebook.grade(ids[0], root=ws.root, seconds_per_item=60)


def test_a_milestone_unlocks_and_runs_on_the_students_code(tmp_path):
    needs = MILESTONE_REQUIREMENTS["perceptron"]
    ws = Workspace.open(tmp_path / "m", create=True)
    for number in needs:
        ws.start(number)
    _fill(ws)
    out = ember_cli("course", "milestone", "perceptron", "--fast", "-w", str(ws.root))
    assert out.returncode == 1 and "unlocks when modules" in out.stderr  # not graded yet
    grade_module_all(ws, needs, seconds_per_item=60)
    out = ember_cli("course", "milestone", "perceptron", "--fast", "-w", str(ws.root), timeout=300)
    assert out.returncode == 0 and "milestone perceptron: passed" in out.stdout, out.stdout + out.stderr
    assert "yours" in out.stdout and "ember's reference" in out.stdout
    # The student's code is what runs: a derivative that is always zero fails the milestone.
    path = ws.root / next(e.relpath for e in syllabus.exercises("02") if e.id == "02/mul-backward")
    region = next(r for r in regions.find(path.read_text()) if r.id == "02/mul-backward")
    path.write_text(regions.merge(path.read_text(), {"02/mul-backward": [[region.indent + "return g * 0, g * 0\n"]]}))
    out = ember_cli("course", "milestone", "perceptron", "--fast", "-w", str(ws.root), timeout=300)
    assert out.returncode == 1 and "not passed" in out.stdout, out.stdout
