"""Grading: runs a module's checks on the student's workspace in a separate process with time
limits (:mod:`ember.course.child`), turns the results into a report, and grades folders of
workspaces for an instructor.

Every failure is an item with zero points and a one-line reason: "not implemented yet", a
wrong value (the input, the expected value and the student's), an exception raised by the
student's code, a time limit, or a file that does not import (a syntax error). The grader
itself never fails on a student's code.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from . import checks, syllabus
from .workspace import Workspace, WorkspaceError

__all__ = ["test", "test_modules", "report", "run_milestone", "grade", "CHILD"]

CHILD = Path(__file__).resolve().parent / "child.py"


def _child(args, timeout):
    """Runs the grading process; returns its JSON results, or None past ``timeout`` seconds."""
    handle, results = tempfile.mkstemp(suffix=".json")
    os.close(handle)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        try:
            subprocess.run([sys.executable, str(CHILD), *args[:2], results, *args[2:]],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=timeout, env=env, check=False)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        text = Path(results).read_text(encoding="utf-8")
        data = json.loads(text) if text else None
        return data, timed_out
    finally:
        Path(results).unlink(missing_ok=True)


def test(workspace, number, seconds_per_item=30):
    """Grades module ``number`` of ``workspace`` (a :class:`Workspace`); records and returns
    ``{exercise id: {"status", "points", "max", "detail"?}}``."""
    return test_modules(workspace, [number], seconds_per_item)[syllabus.get(number).number]


def test_modules(workspace, numbers, seconds_per_item=30):
    """:func:`test` for several modules in one grading process: ``{number: results}``."""
    modules = [syllabus.get(n).number for n in numbers]
    items = [e for n in modules for e in syllabus.exercises(n)]
    timeout = seconds_per_item * max(1, len(items)) + 30
    data, timed_out = _child([str(workspace.root), ",".join(modules), str(seconds_per_item)], timeout)
    graded = {}
    for number in modules:
        maxima = {item.id: item.points for item in checks.for_module(number)}
        results = {}
        for exercise in syllabus.exercises(number):
            got = (data or {}).get("items", {}).get(exercise.id)
            if data and data.get("import_error", {}).get(number):
                got = {"status": "error", "points": 0,
                       "detail": f"ember does not load: {data['import_error'][number]}"}
            elif got is None or got.get("status") == "running":
                reason = "time limit (the whole run)" if timed_out else "the grading process stopped"
                got = {"status": "time limit" if timed_out else "error", "points": 0,
                       "detail": f"{reason} before this item finished" if got else reason}
            got["max"] = maxima.get(exercise.id, 1)
            results[exercise.id] = got
        workspace.record(number, results)
        graded[number] = results
    return graded


def report(number, results):
    """The readable report of :func:`test`'s results: one line per exercise, the reason under
    each failure, and the total."""
    module = syllabus.get(number)
    lines = [f"module {module.number}: {module.title}"]
    total = most = 0
    for exercise_id, r in results.items():
        total, most = total + r["points"], most + r["max"]
        mark = "ok " if r["points"] == r["max"] else "-- "
        lines.append(f"  {mark}{exercise_id:<28} {r['points']}/{r['max']}  {r['status']}")
        if r["points"] != r["max"] and r.get("detail"):
            lines.append(f"       {r['detail']}")
    lines.append(f"  score {total}/{most}" + ("  passed" if total == most else ""))
    return "\n".join(lines)


def run_milestone(workspace, name, fast=False, timeout=900):
    """Runs milestone ``name`` on the student's code and on the reference; returns both reports
    (``{"passed", "seconds", "checks"}`` or ``{"error"}``)."""
    student, late = _child([str(workspace.root), "milestone", name, *(["fast"] if fast else [])], timeout)
    reference, _ = _child(["-", "milestone", name, *(["fast"] if fast else [])], timeout)
    if student is None:
        student = {"passed": False, "error": "time limit" if late else "the process stopped"}
    return student, reference


def grade(submissions, csv_path, seconds_per_item=30):
    """Grades every workspace folder in ``submissions`` on every module it started; writes one
    CSV row per student (``student``, one column per module, ``total``) and returns the rows."""
    rows, numbers = [], list(syllabus.MODULES)
    for folder in sorted(p for p in Path(submissions).iterdir() if p.is_dir()):
        row = {"student": folder.name}
        try:
            ws = Workspace.open(folder)
        except WorkspaceError as exc:
            row.update(total=0, note=str(exc))
            rows.append(row)
            continue
        graded = test_modules(ws, sorted(ws.started), seconds_per_item) if ws.started else {}
        for number, results in graded.items():
            row[number] = sum(r["points"] for r in results.values())
        row["total"] = sum(row[n] for n in graded)
        rows.append(row)
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, ["student", *numbers, "total", "note"], restval="")
        writer.writeheader()
        writer.writerows(rows)
    return rows
