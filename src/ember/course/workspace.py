"""A student's workspace: the exercise files with their regions to write, and the progress
file ``ember-course.json`` (modules started, scores, milestones passed).

:func:`start` writes module NN's files: copies of ember's own source files that hold its
exercises, every marked region replaced by ``raise NotImplementedError`` (the function's
docstring keeps the contract, the region's ``# hint:`` lines stay). Regions of modules not
started yet are stubbed as well, saying that the reference runs there until they start (the
grader loads the reference's body in their place; no solution line is ever written).
"""
import datetime
import json
import os
import tempfile
from pathlib import Path

from .. import __version__
from . import regions, syllabus

__all__ = ["Workspace", "WorkspaceError", "STATE_FILE"]

STATE_FILE = "ember-course.json"
FORMAT = 1


class WorkspaceError(ValueError):
    """A workspace that cannot be used: missing, from another ember version, or damaged."""


def _your_turn(exercise_id):
    module = syllabus.get(exercise_id[:2])
    return (f"Exercise {exercise_id} (module {module.number}, {module.title}): write this part.\n"
            f"The docstring above states the contract; the guide is {module.guide}.\n"
            f"Check your work with: ember course test {module.number}")


def _not_started(exercise_id):
    return (f"Exercise {exercise_id} belongs to module {exercise_id[:2]}, not started yet: ember's\n"
            f"reference runs here until 'ember course start {exercise_id[:2]}'.")


def _write_atomic(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Workspace:
    """The workspace folder ``root`` and its progress state."""

    def __init__(self, root):
        self.root = Path(root)
        self.state = {"format": FORMAT, "ember_version": __version__, "started": {}, "scores": {},
                      "milestones": {}}

    @classmethod
    def open(cls, root, create=False):
        """The workspace at ``root``.

        Raises:
            WorkspaceError: ``root`` holds no progress file (and ``create`` is false), the file
                is damaged, or it was written by another ember version.
        """
        ws = cls(root)
        path = ws.root / STATE_FILE
        if not path.is_file():
            if create:
                return ws
            raise WorkspaceError(f"{ws.root} is not a course workspace (no {STATE_FILE}); "
                                 f"make one with 'ember course start 01 {ws.root}'")
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(state, dict) or state.get("format") != FORMAT:
                raise ValueError("unknown format")
        except ValueError as exc:
            raise WorkspaceError(f"{path} is damaged ({exc}); start a new workspace") from None
        if state.get("ember_version") != __version__:
            raise WorkspaceError(f"{ws.root} was made by ember {state.get('ember_version')}, this is "
                                 f"ember {__version__}: start a new workspace with this version")
        ws.state.update(state)
        return ws

    def save(self):
        _write_atomic(self.root / STATE_FILE, json.dumps(self.state, indent=2, sort_keys=True) + "\n")

    @property
    def started(self):
        return self.state["started"]

    def start(self, number):
        """Writes module ``number``'s exercise files; returns the paths written (relative)."""
        module = syllabus.get(number)
        items = syllabus.exercises(module.number)
        if not items:
            raise WorkspaceError(f"module {module.number} ({module.title}) has no exercises yet")
        self.started.setdefault(module.number, datetime.datetime.now().isoformat(timespec="seconds"))
        written = []
        base = syllabus.source_root().parent
        for relpath in sorted({e.relpath for e in items}):
            target = self.root / relpath
            if target.exists():
                text = target.read_text(encoding="utf-8")
                untouched = {r.id for r in regions.find(text, str(target))
                             if r.module == module.number and self._is_not_started_stub(text, r)}
                text = regions.stub(text, untouched, _your_turn, str(target))
            else:
                reference = (base / relpath).read_text(encoding="utf-8")
                ids = {r.id: r for r in regions.find(reference, relpath)}
                text = regions.stub(reference, {i for i in ids if i[:2] in self.started}, _your_turn, relpath)
                text = regions.stub(text, {i for i in ids if i[:2] not in self.started}, _not_started, relpath)
            _write_atomic(target, text)
            written.append(relpath)
        self.save()
        return written

    @staticmethod
    def _is_not_started_stub(text, region):
        body = text.splitlines()[region.begin + 1:region.end]
        return any("not started yet" in line for line in body)

    def record(self, number, results):
        """Stores module ``number``'s item results ``{id: {"points", "max", ...}}``."""
        self.state["scores"][number] = {k: [v["points"], v["max"]] for k, v in results.items()}
        self.save()

    def passed(self, number):
        """True when every exercise of module ``number`` has full points."""
        scores = self.state["scores"].get(number)
        return bool(scores) and all(points == most for points, most in scores.values())
