"""Course mode: ember's own code as graded build-it-yourself exercises (``ember course``).

Solution regions are marked in ember's source (:mod:`ember.course.regions`); a student's
workspace holds copies of the files of the modules they started with those regions to write
(:mod:`ember.course.workspace`); the grader loads ember with the student's files in place of
the reference ones and compares them with PyTorch (:mod:`ember.course.grader`,
:mod:`ember.course.checks`). The twenty modules and the milestones they unlock are in
:mod:`ember.course.syllabus`. The instructors' guide is docs/course/instructors.md.
"""
from .syllabus import MILESTONE_REQUIREMENTS, MODULES, TIERS, exercises, get
from .workspace import Workspace, WorkspaceError

__all__ = ["MODULES", "TIERS", "MILESTONE_REQUIREMENTS", "Workspace", "WorkspaceError", "exercises", "get"]
