"""Plain-text tables for terminal output."""
import textwrap


def format_table(headers, rows, wrap=None):
    """Left-aligned columns separated by two spaces, with a rule under the headers.

    Args:
        headers: column titles.
        rows: sequences of cells, each as long as ``headers``; cells are shown with ``str``,
            and a cell with newlines takes several lines.
        wrap: ``{column index: width}``: cells of those columns are wrapped to that width,
            so a table fits a terminal (continuation lines leave the other columns empty).
    """
    wrap = wrap or {}
    lines = []
    for row in rows:
        pieces = []
        for i, cell in enumerate(row):
            parts = str(cell).split("\n")
            if i in wrap:
                parts = [line for part in parts for line in (textwrap.wrap(part, wrap[i]) or [""])]
            pieces.append(parts)
        height = max(len(p) for p in pieces)
        lines += [[p[k] if k < len(p) else "" for p in pieces] for k in range(height)]
    widths = [max(len(line[i]) for line in [headers, *lines]) for i in range(len(headers))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
                     for line in [headers, ["-" * width for width in widths], *lines])
