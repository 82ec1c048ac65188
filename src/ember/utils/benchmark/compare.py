"""``Compare``: many Measurements as one table per label (``torch.utils.benchmark.Compare``,
https://pytorch.org/tutorials/recipes/recipes/benchmark.html).

Rows are sub-labels (grouped by thread count, then environment), columns descriptions; a
cell is the median time per run in the table's unit. Replicates of one TaskSpec are merged.
"""
import enum
import math

from .common import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = ["Compare", "Colorize"]

_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    """How :class:`Compare` colours its table: not at all, by column or by row (the fastest
    entry of each green, the slowest red)."""
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


class Compare:
    """Formats measurements as tables; ``print()`` or ``str()`` renders them.

    Raises ValueError for a result that is not a :class:`Measurement`.
    """

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def extend_results(self, results):
        """Adds ``results`` (Measurements) to the table; ValueError for anything else."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Round each cell to the digits its measurement supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """Colour cells against the best of their column (or row): green within 1%, blue
        within 10%, red from 2x."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Mark noisy cells with ``(! IQR/median %)``."""
        self._highlight_warnings = True

    def print(self):
        """Prints the table (``str(self)``)."""
        print(str(self))

    def __str__(self):
        by_label = {}
        for m in Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return "\n".join(self._table(results) for results in by_label.values())

    def _table(self, results):
        unit, scale = select_unit(min(r.median for r in results))
        row_keys = sorted(ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results),
                          key=lambda k: k[:2])
        col_keys = ordered_unique(r.description for r in results)
        grid = [[None] * len(col_keys) for _ in row_keys]
        for r in results:
            grid[row_keys.index((r.num_threads, r.env, r.as_row_name))][col_keys.index(r.description)] = r
        groups = []  # row indices per thread count
        for i, key in enumerate(row_keys):
            if i == 0 or key[0] != row_keys[i - 1][0]:
                groups.append([])
            groups[-1].append(i)
        columns = [self._column_format([grid[i][j] for i in range(len(row_keys))], scale)
                   for j in range(len(col_keys))]

        envs = {r.env for r in results}
        env_width = max(len(e) for e in envs) if len(envs) > 1 else 0
        text_rows, prior_env = [["", *(k or "" for k in col_keys)]], None
        for i, (threads, env, name) in enumerate(row_keys):
            if i == 0 or threads != row_keys[i - 1][0]:
                prior_env = None
            shown_env = f"({env})" if len(envs) > 1 and env != prior_env else ""
            prior_env = env
            cells = ["  " + shown_env.ljust(env_width + 4) + name]
            for m, fmt in zip(grid[i], columns):
                cells.append(fmt(m))
            text_rows.append(cells)
        widths = [max(len(row[c]) for row in text_rows) for c in range(len(text_rows[0]))]
        header = "  |  ".join(cell.center(w) for cell, w in zip(text_rows[0], widths))
        lines = [header]
        for group in groups:
            for i in group:
                if i == group[0]:
                    lines.append(f"{row_keys[i][0]} threads: ".ljust(len(header), "-"))
                cells = [text_rows[i + 1][0].ljust(widths[0])]
                best = self._best_values(grid, i, group)
                for cell, w, m, b in zip(text_rows[i + 1][1:], widths[1:], grid[i], best):
                    cell = cell.center(w)
                    if self._colorize != Colorize.NONE and m is not None and b is not None:
                        cell = _color(cell, m.median, b)
                    cells.append(cell)
                lines.append("  |  ".join(cells))
        label = results[0].label or ""
        text = f"[{(' ' + label + ' ').center(len(header) - 2, '-')}]\n" + "\n".join(lines) \
            + f"\n\nTimes are in {unit_to_english(unit)}s ({unit}).\n"
        if self._highlight_warnings and any(r.has_warnings for r in results):
            text += "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
        return text

    def _best_values(self, grid, i, group):
        if self._colorize == Colorize.ROWWISE:
            best = min(m.median for m in grid[i] if m is not None)
            return [best] * len(grid[i])
        if self._colorize == Colorize.COLUMNWISE:
            return [min((grid[k][j].median for k in group if grid[k][j] is not None), default=None)
                    for j in range(len(grid[i]))]
        return [None] * len(grid[i])

    def _column_format(self, cells, scale):
        """A function Measurement-or-None -> cell text, with one width and precision per column."""
        present = [m for m in cells if m is not None]
        digits = [int(math.ceil(math.log10(m.median / scale))) for m in present]
        warn = self._highlight_warnings and any(m.has_warnings for m in present)
        decimals = (min(max(m.significant_figures - d, 0) for m, d in zip(present, digits))
                    if self._trim_significant_figures else 1)
        width = max(digits) + decimals + (1 if decimals else 0)

        def number(value, sigfigs, spread):
            if self._trim_significant_figures:
                value = trim_sigfig(value, sigfigs)
            note = f" (! {spread * 100:.0f}%)" if warn and spread is not None else ""
            return f"{value:>{width}.{decimals}f}{note:>{7 if warn else 0}}"

        def fmt(m):
            if m is None:
                return " " * len(number(1, 1, None))
            return number(m.median / scale, m.significant_figures, m.iqr / m.median if m.has_warnings else None)
        return fmt


def _color(cell, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + cell + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + cell + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + cell + _END * 2
    if value >= best * 2:
        return _BAD + cell + _END * 2
    return cell
