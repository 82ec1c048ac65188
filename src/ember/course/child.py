"""The grading process: loads ember with the student's files in place of the reference ones,
then runs one module's checks and writes the results as JSON.

Run by path, never as ``ember.course.child``: importing anything of ember before the import
hook is installed would load the reference files. So this file uses the standard library only
until :func:`install` has run, and loads :mod:`regions` (also standard library only) by path.

    python .../ember/course/child.py WORKSPACE NN[,NN...] RESULTS.json [SECONDS_PER_ITEM]
    python .../ember/course/child.py WORKSPACE|- milestone RESULTS.json NAME [fast]

The substitution (an import hook, explicit and documented in docs/course/instructors.md): for
every ``ember`` module whose file is in the workspace, the student's file is loaded instead.
Grading module NN, the bodies of its regions are the student's and those of other modules the
reference's, so each module is graded on its own; a milestone runs with the student's regions
of every started module.
"""
import importlib.abc
import importlib.util
import json
import signal
import sys
import time
import traceback
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_ember_course_regions", _HERE / "regions.py")
regions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regions)


class _StudentLoader(importlib.abc.SourceLoader):
    def __init__(self, student_path, reference_path, active):
        self.student_path, self.reference_path, self.active = student_path, reference_path, active

    def get_filename(self, fullname):
        return str(self.student_path)

    def get_data(self, path):
        student = Path(path).read_text(encoding="utf-8")
        reference = self.reference_path.read_text(encoding="utf-8")
        kept = {rid: parts for rid, parts in regions.bodies(reference, str(self.reference_path)).items()
                if rid[:2] not in self.active}
        return regions.merge(student, kept, str(path)).encode("utf-8")


class _StudentFinder(importlib.abc.MetaPathFinder):
    """Finds ``ember.*`` modules whose file the workspace holds."""

    def __init__(self, workspace, package_root, active):
        self.workspace, self.package_root, self.active = workspace, package_root, active

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "ember" and not fullname.startswith("ember."):
            return None
        rel = Path(*fullname.split("."))
        for candidate, is_package in ((rel.with_suffix(".py"), False), (rel / "__init__.py", True)):
            student = self.workspace / candidate
            if student.is_file():
                reference = self.package_root.parent / candidate
                loader = _StudentLoader(student, reference, self.active)
                locations = [str(reference.parent)] if is_package else None
                return importlib.util.spec_from_file_location(
                    fullname, student, loader=loader, submodule_search_locations=locations)
        return None


def install(workspace, active):
    """Puts the student's files in front of the reference package, their regions of the modules
    in ``active`` being the student's and the rest the reference's (see the module doc)."""
    for finder in [f for f in sys.meta_path if isinstance(f, _StudentFinder)]:
        sys.meta_path.remove(finder)
    for name in [n for n in sys.modules if n == "ember" or n.startswith("ember.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _StudentFinder(Path(workspace), _HERE.parent, frozenset(active)))


class _TimeLimit(Exception):
    pass


def _alarm(signum, frame):
    raise _TimeLimit()


def _describe(exc):
    """One line for an exception raised by the student's code: class, message, where."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)]
    where = ""
    for frame in reversed(frames):
        if "/course/" not in frame.filename.replace("\\", "/"):
            where = f" (at {Path(frame.filename).name}:{frame.lineno})"
            break
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}{where}" if message else f"{type(exc).__name__}{where}"


def run(workspace, numbers, results_path, seconds):
    """Grades the modules ``numbers`` (comma-separated) of ``workspace`` in this process, each
    with the student's regions of that module alone (a bug in another module costs no points
    here), ember imported afresh for each."""
    results = {"items": {}, "import_error": {}}
    out = Path(results_path)

    def save():
        out.write_text(json.dumps(results), encoding="utf-8")

    signal.signal(signal.SIGALRM, _alarm)
    for number in numbers.split(","):
        install(workspace, {number})
        try:
            import ember  # noqa: F401  (the student's files load here)
            from ember.course import checks
            items = checks.for_module(number)
        except BaseException as exc:  # a syntax error in a student file, say
            results["import_error"][number] = _describe(exc) if not isinstance(exc, SyntaxError) else \
                f"SyntaxError in {Path(exc.filename or '?').name} line {exc.lineno}: {exc.msg}"
            save()
            continue
        for item in items:
            results["items"][item.id] = {"status": "running", "points": 0, "max": item.points}
            save()
            results["items"][item.id] = _grade_item(item, checks, seconds)
            save()


def _grade_item(item, checks, seconds):
    start = time.perf_counter()
    signal.alarm(seconds)
    try:
        item.fn()
        outcome = {"status": "passed", "points": item.points}
    except NotImplementedError as exc:
        outcome = {"status": "not implemented", "detail": str(exc) or "not implemented yet"}
    except checks.Mismatch as exc:
        outcome = {"status": "wrong", "detail": str(exc)}
    except _TimeLimit:
        outcome = {"status": "time limit", "detail": f"still running after {seconds} s"}
    except BaseException as exc:
        outcome = {"status": "error", "detail": _describe(exc)}
    finally:
        signal.alarm(0)
    outcome.setdefault("points", 0)
    outcome.update(max=item.points, seconds=round(time.perf_counter() - start, 3))
    return outcome


def run_milestone(workspace, name, results_path, fast):
    """Trains milestone ``name`` on the student's files (the reference's when ``workspace`` is
    "-") and writes its metrics, whether it passed, and its training time."""
    if workspace != "-":
        state = json.loads((Path(workspace) / "ember-course.json").read_text(encoding="utf-8"))
        install(workspace, state.get("started", {}))
    out = Path(results_path)
    try:
        from ember import milestones
        result = milestones.get(name).run(fast=fast, quiet=True)
        report = {"passed": result.passed, "seconds": result.seconds,
                  "checks": [[c.metric, str(c.threshold), c.value, c.passed] for c in result.checks]}
    except BaseException as exc:
        report = {"passed": False, "error": _describe(exc)}
    out.write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[2] == "milestone":
        run_milestone(sys.argv[1], sys.argv[4], sys.argv[3], fast=len(sys.argv) > 5 and sys.argv[5] == "fast")
    else:
        run(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 30)
