"""Loss and accuracy curves as PNG files (matplotlib, the optional ``plot`` extra)."""
import os
import secrets
from pathlib import Path


def plot_histories(histories, directory, stem, title="", accuracy_label="accuracy"):
    """Write ``<stem>-loss.png`` and ``<stem>-accuracy.png`` into ``directory``.

    Each figure has one line per entry of ``histories`` (label → :class:`History`), epochs
    on the x-axis; the loss figure draws a history's test loss dashed beside its training
    loss. The accuracy axis is labelled ``accuracy_label`` and zoomed to the range the curves
    span. Files are written atomically: a reader never sees a half-written PNG.

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
    has_test = any(history.test_loss for history in histories.values())
    for curve, ylabel in (("loss", "loss: training (solid), test (dashed)" if has_test else "training loss"),
                          ("accuracy", accuracy_label)):
        # A bare Figure on the Agg canvas leaves pyplot and the user's backend untouched.
        figure = Figure(figsize=(6, 4), dpi=100)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        for index, (label, history) in enumerate(histories.items()):
            values = getattr(history, curve)
            axes.plot(range(1, len(values) + 1), values, label=label, color=f"C{index}")
            if curve == "loss" and history.test_loss:
                axes.plot(range(1, len(history.test_loss) + 1), history.test_loss, "--", color=f"C{index}",
                          label=f"{label}: test")
        axes.set_xlabel("epoch")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylabel(ylabel)
        if curve == "accuracy":
            axes.set_ylim(*_zoom([v for history in histories.values() for v in history.accuracy]))
        axes.set_title(title)
        axes.grid(alpha=0.3)
        axes.legend()
        figure.tight_layout()
        path = directory / f"{stem}-{curve}.png"
        _save_atomically(figure, path)
        paths.append(path)
    return paths


def _zoom(values):
    """Accuracy limits around where the curves are, padded, within ``[0, 1.02]``."""
    if not values:
        return 0.0, 1.02
    low, high = min(values), max(values)
    pad = max(0.02, 0.1 * (high - low))
    return max(0.0, low - pad), min(1.02, high + pad)


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
