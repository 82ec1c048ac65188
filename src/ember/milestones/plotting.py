"""Loss and accuracy curves as PNG files (matplotlib, the optional ``plot`` extra)."""
import os
import secrets
from pathlib import Path


def plot_histories(histories, directory, stem, title=""):
    """Write ``<stem>-loss.png`` and ``<stem>-accuracy.png`` into ``directory``.

    Each figure has one line per entry of ``histories`` (label → :class:`History`), epochs
    on the x-axis. Files are written atomically: a reader never sees a half-written PNG.

    Returns:
        The two paths written, loss first.

    Raises:
        ImportError: matplotlib is not installed (``pip install 'ember[plot]'``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError as error:
        raise ImportError("plotting needs matplotlib: install ember[plot] "
                          "(pip install 'ember[plot]')") from error
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for curve, ylabel, ylim in (("loss", "training loss", None), ("accuracy", "accuracy", (0.0, 1.02))):
        # A bare Figure on the Agg canvas leaves pyplot and the user's backend untouched.
        figure = Figure(figsize=(6, 4), dpi=100)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        for label, history in histories.items():
            values = getattr(history, curve)
            axes.plot(range(1, len(values) + 1), values, label=label)
        axes.set_xlabel("epoch")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylabel(ylabel)
        if ylim is not None:
            axes.set_ylim(*ylim)
        axes.set_title(title)
        axes.grid(alpha=0.3)
        axes.legend()
        figure.tight_layout()
        path = directory / f"{stem}-{curve}.png"
        _save_atomically(figure, path)
        paths.append(path)
    return paths


def _save_atomically(figure, path):
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # os.open, unlike tempfile.mkstemp's 0600, gives the PNG the usual umask-derived mode.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            figure.savefig(file, format="png")
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
