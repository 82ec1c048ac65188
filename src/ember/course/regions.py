"""Solution regions: the marked parts of ember's own source that a student writes.

A region is a run of lines between two comment markers, indented like the code they enclose::

    def forward(self, input):
        \"\"\"...the contract: shapes, formula, source...\"\"\"
        # course:begin 04/linear-forward
        return F.linear(input, self.weight, self.bias)
        # course:end 04/linear-forward

The markers are comments, so they change nothing when ember runs. :func:`stub` replaces each
region's body with ``raise NotImplementedError``, keeping the region's ``# hint:`` lines; :func:`merge` puts region bodies from one
text into another (how a workspace file is loaded with the reference standing in for
exercises of modules not started yet).
"""
import re

__all__ = ["Region", "RegionError", "find", "stub", "bodies", "merge", "is_hint", "STUB_MESSAGE"]

_BEGIN = re.compile(r"^(?P<indent>[ \t]*)# course:begin (?P<id>\d\d/[a-z0-9][a-z0-9-]*)[ \t]*$")
_END = re.compile(r"^[ \t]*# course:end (?P<id>\d\d/[a-z0-9][a-z0-9-]*)[ \t]*$")
STUB_MESSAGE = "not implemented yet"


class RegionError(ValueError):
    """Markers that do not pair up (an unclosed, unopened, nested or duplicated region)."""


class Region:
    """One marked region: ``id`` ("NN/name"), the indentation of its markers, and the line
    numbers (0-based) of its begin and end markers in the text it was found in."""

    __slots__ = ("id", "indent", "begin", "end")

    def __init__(self, id, indent, begin, end):
        self.id, self.indent, self.begin, self.end = id, indent, begin, end

    @property
    def module(self):
        """The two-digit course module the region belongs to ("04")."""
        return self.id[:2]

    def __repr__(self):
        return f"Region({self.id!r}, lines {self.begin + 1}-{self.end + 1})"


def find(text, path="<text>"):
    """The regions of ``text`` in order. An exercise may have several parts in one file (an
    op's forward and its backward): regions with the same id, one after the other.

    Raises:
        RegionError: naming ``path`` and the line, when markers do not pair up.
    """
    regions, open_region = [], None
    for number, line in enumerate(text.splitlines()):
        begin, end = _BEGIN.match(line), _END.match(line)
        if begin:
            if open_region is not None:
                raise RegionError(f"{path}:{number + 1}: region {begin['id']} begins inside "
                                  f"region {open_region.id}")
            open_region = Region(begin["id"], begin["indent"], number, None)
        elif end:
            if open_region is None or open_region.id != end["id"]:
                raise RegionError(f"{path}:{number + 1}: region {end['id']} ends but was not begun")
            open_region.end = number
            regions.append(open_region)
            open_region = None
    if open_region is not None:
        raise RegionError(f"{path}:{open_region.begin + 1}: region {open_region.id} never ends")
    return regions


def stub(text, ids, note, path="<text>"):
    """``text`` with the body of every region whose id is in ``ids`` replaced by a comment
    ``note(id)`` returns and ``raise NotImplementedError``; markers stay, other regions stay."""
    lines = text.splitlines(keepends=True)
    for region in reversed(find(text, path)):
        if region.id in ids:
            pad = region.indent
            hints = [line for line in lines[region.begin + 1:region.end] if is_hint(line)]
            body = [f"{pad}# {line}\n" for line in note(region.id).splitlines()] + hints
            body.append(f'{pad}raise NotImplementedError("{region.id}: {STUB_MESSAGE}")\n')
            lines[region.begin + 1:region.end] = body
    return "".join(lines)


def is_hint(line):
    """Lines ``# hint: ...`` at a region's top are part of the exercise, kept in the stub."""
    return line.lstrip().startswith("# hint:")


def bodies(text, path="<text>"):
    """``{id: [body lines of each part]}`` of every region of ``text``."""
    lines = text.splitlines(keepends=True)
    found = {}
    for r in find(text, path):
        found.setdefault(r.id, []).append(lines[r.begin + 1:r.end])
    return found


def merge(text, replacements, path="<text>"):
    """``text`` with the bodies of the regions named in ``replacements`` replaced:
    ``{id: [lines of part 1, lines of part 2, ...]}`` (a part given as None stays)."""
    lines = text.splitlines(keepends=True)
    regions = find(text, path)
    part = {}
    numbered = []
    for region in regions:
        numbered.append((region, part.get(region.id, 0)))
        part[region.id] = part.get(region.id, 0) + 1
    for region, k in reversed(numbered):
        parts = replacements.get(region.id)
        if parts is not None and k < len(parts) and parts[k] is not None:
            lines[region.begin + 1:region.end] = parts[k]
    return "".join(lines)
