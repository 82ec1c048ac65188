"""``ember course list | start NN [DIR] | test NN | status | milestone NAME | grade DIR --csv F``:
ember's own code as graded build-it-yourself exercises (see docs/course/)."""
import sys
from pathlib import Path

from ..course import grader, notebook, syllabus
from ..course.workspace import STATE_FILE, Workspace, WorkspaceError
from .table import format_table

DEFAULT_DIR = "ember-course"


def add_parser(subparsers):
    parser = subparsers.add_parser("course", help="build ember yourself: graded exercises",
                                   description="Build ember yourself: graded exercises made from its own code.")
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    actions.add_parser("list", help="the modules in their tiers").set_defaults(handler=list_modules)
    start = actions.add_parser("start", help="write a module's exercises into a workspace")
    start.add_argument("number", metavar="NN")
    start.add_argument("dir", metavar="DIR", nargs="?", default=None,
                       help=f"the workspace (default: the current one, else ./{DEFAULT_DIR})")
    start.add_argument("--notebook", action="store_true",
                       help="also write the exercises as a Jupyter notebook with nbgrader metadata")
    start.set_defaults(handler=start_module)
    test = actions.add_parser("test", help="grade a module of your workspace against PyTorch")
    test.add_argument("number", metavar="NN")
    _workspace_option(test)
    test.add_argument("--seconds", type=int, default=30, help="time limit per exercise (default 30)")
    test.set_defaults(handler=test_module)
    status = actions.add_parser("status", help="scores, what is unlocked next, milestones passed")
    _workspace_option(status)
    status.set_defaults(handler=show_status)
    milestone = actions.add_parser("milestone", help="run a milestone on your own code")
    milestone.add_argument("name", metavar="NAME")
    milestone.add_argument("--fast", action="store_true", help="fewer epochs; same thresholds")
    _workspace_option(milestone)
    milestone.set_defaults(handler=run_milestone)
    grade = actions.add_parser("grade", help="instructors: grade a folder of student workspaces")
    grade.add_argument("submissions", metavar="SUBMISSIONS_DIR")
    grade.add_argument("--csv", required=True, metavar="FILE", help="the gradebook to write")
    grade.add_argument("--seconds", type=int, default=30, help="time limit per exercise (default 30)")
    grade.set_defaults(handler=grade_folder)


def _workspace_option(parser):
    parser.add_argument("--workspace", "-w", metavar="DIR", default=None,
                        help=f"the workspace (default: the current folder if it is one, else ./{DEFAULT_DIR})")


def _root(value):
    if value is not None:
        return Path(value)
    return Path(".") if Path(STATE_FILE).is_file() else Path(DEFAULT_DIR)


def _fail(message):
    print(f"ember course: {message}", file=sys.stderr)
    return 1


def list_modules(args):
    rows = [(m.number, m.tier, m.title, len(syllabus.exercises(m.number)))
            for m in syllabus.MODULES.values()]
    print(format_table(["NN", "tier", "module", "exercises"], rows))
    print("Each module's guide (docs/course/NN-name.md) says what to build and the question it answers.")
    return 0


def start_module(args):
    try:
        module = syllabus.get(args.number)
        ws = Workspace.open(_root(args.dir), create=True)
        written = ws.start(module.number)
    except (KeyError, WorkspaceError) as exc:
        return _fail(exc.args[0])
    print(f"module {module.number}: {module.title} -> {ws.root}")
    for path in written:
        print(f"  {path}")
    if args.notebook:
        try:
            print(f"  {notebook.write(ws, module.number).name}")
        except ImportError:
            return _fail("--notebook needs jupytext: pip install 'ember[course]'")
    print(f"guide: {module.guide}; grade with: ember course test {module.number}"
          + ("" if ws.root == Path(".") else f" -w {ws.root}"))
    return 0


def test_module(args):
    try:
        module = syllabus.get(args.number)
        ws = Workspace.open(_root(args.workspace))
        if module.number not in ws.started:
            return _fail(f"module {module.number} is not started in {ws.root}: "
                         f"'ember course start {module.number}' first")
        results = grader.test(ws, module.number, seconds_per_item=args.seconds)
    except (KeyError, WorkspaceError) as exc:
        return _fail(exc.args[0])
    print(grader.report(module.number, results))
    return 0 if all(r["points"] == r["max"] for r in results.values()) else 1


def show_status(args):
    try:
        ws = Workspace.open(_root(args.workspace))
    except WorkspaceError as exc:
        return _fail(exc.args[0])
    rows = []
    for m in syllabus.MODULES.values():
        scores = ws.state["scores"].get(m.number)
        score = f"{sum(p for p, _ in scores.values())}/{sum(x for _, x in scores.values())}" if scores else "-"
        state = "passed" if ws.passed(m.number) else "started" if m.number in ws.started else ""
        rows.append((m.number, m.title, state, score))
    print(format_table(["NN", "module", "state", "score"], rows))
    unlocked = [name for name, needs in syllabus.MILESTONE_REQUIREMENTS.items() if all(ws.passed(n) for n in needs)]
    passed = [name for name, r in ws.state["milestones"].items() if r.get("passed")]
    following = next((m for m in syllabus.MODULES.values() if not ws.passed(m.number)), None)
    print(f"milestones unlocked: {', '.join(unlocked) or 'none yet'}; passed: {', '.join(passed) or 'none yet'}")
    if following is not None:
        print(f"next: module {following.number}, {following.title} ('ember course start {following.number}')")
    return 0


def run_milestone(args):
    needs = syllabus.MILESTONE_REQUIREMENTS.get(args.name)
    if needs is None:
        return _fail(f"unknown milestone {args.name!r}; valid names: {', '.join(syllabus.MILESTONE_REQUIREMENTS)}")
    try:
        ws = Workspace.open(_root(args.workspace))
    except WorkspaceError as exc:
        return _fail(exc.args[0])
    missing = [n for n in needs if not ws.passed(n)]
    if missing:
        return _fail(f"milestone {args.name} unlocks when modules {', '.join(needs)} pass; "
                     f"not yet passed: {', '.join(missing)}")
    student, reference = grader.run_milestone(ws, args.name, fast=args.fast)
    if "error" in student:
        print(f"milestone {args.name} on your code: {student['error']}")
    else:
        for metric, bound, value, ok in student["checks"]:
            print(f"  {metric} {value:.4f} (needs {bound}) {'ok' if ok else 'MISSED'}")
        ref = f"{reference['seconds']:.1f} s" if reference and "seconds" in reference else "n/a"
        print(f"  time: yours {student['seconds']:.1f} s, ember's reference {ref}")
    ws.state["milestones"][args.name] = {"passed": bool(student.get("passed")), "seconds": student.get("seconds")}
    ws.save()
    print(f"milestone {args.name}: {'passed' if student.get('passed') else 'not passed'}")
    return 0 if student.get("passed") else 1


def grade_folder(args):
    if not Path(args.submissions).is_dir():
        return _fail(f"{args.submissions} is not a folder")
    rows = grader.grade(args.submissions, args.csv, args.seconds)
    print(f"graded {len(rows)} workspaces -> {args.csv}")
    return 0
