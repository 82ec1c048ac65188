"""Exercises as Jupyter notebooks with nbgrader metadata (``ember course start NN --notebook``).

Each exercise becomes a solution cell starting with the ``%%course ID`` cell magic, whose body
running the cell writes into the region of the workspace file (so notebooks and files are one
workspace, graded the same way), and a locked, graded test cell calling :func:`grade`, worth
the exercise's points. The notebook is written with jupytext; nbgrader reads the cells'
``nbgrader`` metadata (solution, grade, locked, points, grade_id).
"""
import textwrap
from pathlib import Path

from . import checks, grader, regions, syllabus
from .workspace import Workspace, _write_atomic

__all__ = ["write", "write_region", "grade", "load_ipython_extension"]

_workspace = {"root": Path(".")}


def _cell_meta(exercise_id, kind, points=0):
    meta = {"grade_id": f"{exercise_id.replace('/', '-')}-{kind}", "schema_version": 3,
            "solution": kind == "solution", "grade": kind == "test", "locked": kind == "test"}
    if kind == "test":
        meta["points"] = points
    return {"nbgrader": meta}


def write(workspace, number):
    """Writes ``NN-slug.ipynb`` for module ``number`` into the workspace; returns its path.

    Raises:
        ImportError: jupytext is not installed (the ``course`` extra brings it).
    """
    import jupytext
    import nbformat.v4 as v4

    module = syllabus.get(number)
    guide = syllabus.source_root().parents[1] / module.guide
    cells = [v4.new_markdown_cell(guide.read_text(encoding="utf-8") if guide.is_file()
                                  else f"# {module.number} · {module.title}\n\n{module.question}"),
             v4.new_code_cell("%load_ext ember.course.notebook\n"
                              f"from ember.course.notebook import grade\n%course_workspace {workspace.root.resolve()}")]
    points = {item.id: item.points for item in checks.for_module(module.number)}
    for exercise in syllabus.exercises(module.number):
        text = (workspace.root / exercise.relpath).read_text(encoding="utf-8")
        parts = [r for r in regions.find(text) if r.id == exercise.id]
        lines = text.splitlines(keepends=True)
        for k, region in enumerate(parts, 1):
            body = textwrap.dedent("".join(lines[region.begin + 1:region.end]))
            part = f" {k}" if len(parts) > 1 else ""
            cells.append(v4.new_markdown_cell(
                f"### {exercise.id}{f', part {k} of {len(parts)}' if part else ''}\n\nThe body of the region "
                f"in `{exercise.relpath}` (line {region.begin + 2}); its function's docstring there "
                f"states the contract."))
            cells.append(v4.new_code_cell(f"%%course {exercise.id}{part}\n{body}",
                                          metadata=_cell_meta(exercise.id + part.replace(" ", "."), "solution")))
        cells.append(v4.new_code_cell(f'grade("{exercise.id}")',
                                      metadata=_cell_meta(exercise.id, "test", points.get(exercise.id, 1))))
    notebook = v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                     "language": "python"}})
    path = workspace.root / f"{module.number}-{module.slug}.ipynb"
    _write_atomic(path, jupytext.writes(notebook, fmt="ipynb"))
    return path


def write_region(exercise_id, body, root=None, part=1):
    """Puts ``body`` (dedented code) into part ``part`` of region ``exercise_id`` of the
    workspace file."""
    root = Path(root or _workspace["root"])
    exercise = next((e for e in syllabus.exercises() if e.id == exercise_id), None)
    if exercise is None:
        raise KeyError(f"no exercise {exercise_id!r}")
    path = root / exercise.relpath
    text = path.read_text(encoding="utf-8")
    region = [r for r in regions.find(text, str(path)) if r.id == exercise_id][part - 1]
    lines = [region.indent + line if line.strip() else "\n"
             for line in textwrap.dedent(body).strip("\n").splitlines(keepends=True)]
    lines[-1] = lines[-1].rstrip("\n") + "\n"
    parts = [None] * (part - 1) + [lines]
    _write_atomic(path, regions.merge(text, {exercise_id: parts}, str(path)))


def grade(exercise_id, root=None, seconds_per_item=30):
    """Grades ``exercise_id``'s module in the workspace and asserts the exercise scored fully
    (the graded test cell: nbgrader gives zero when it raises).

    Raises:
        AssertionError: the exercise did not pass; the message is the grader's reason.
    """
    ws = Workspace.open(root or _workspace["root"])
    results = grader.test(ws, exercise_id[:2], seconds_per_item)
    result = results[exercise_id]
    print(f"{exercise_id}: {result['points']}/{result['max']} {result['status']}")
    assert result["points"] == result["max"], result.get("detail", result["status"])


def load_ipython_extension(ipython):
    """``%load_ext ember.course.notebook``: the ``%%course ID`` and ``%course_workspace DIR`` magics."""
    def course(line, cell):
        exercise_id, _, part = line.strip().partition(" ")
        write_region(exercise_id, cell, part=int(part or 1))

    def course_workspace(line):
        _workspace["root"] = Path(line.strip())

    ipython.register_magic_function(course, "cell", "course")
    ipython.register_magic_function(course_workspace, "line", "course_workspace")
