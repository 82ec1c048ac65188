"""Plain-text tables for terminal output."""


def format_table(headers, rows):
    """Left-aligned columns separated by two spaces, with a rule under the headers.

    Args:
        headers: column titles.
        rows: sequences of cells, each as long as ``headers``; cells are shown with ``str``.
    """
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(column[i]) for column in [headers, *cells]) for i in range(len(headers))]
    lines = [headers, ["-" * width for width in widths], *cells]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
                     for line in lines)
