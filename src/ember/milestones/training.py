"""The training loop every milestone shares, written as a PyTorch user writes one."""
import os
import statistics
import sys
import time

from tqdm import trange

import ember as torch

from ..compiler.dynamic import marks
from .milestone import History, compiling


def fit(model, loader, loss_fn, optimizer, epochs, evaluate, desc, scheduler=None, quiet=False):
    """Train ``model`` for ``epochs`` passes over ``loader``; evaluate after each.

    Args:
        model: an ``nn.Module``; put in train mode to learn and eval mode to evaluate.
        loader: yields ``(inputs, targets)`` batches.
        loss_fn: ``loss_fn(model(inputs), targets)`` → scalar tensor.
        optimizer: an ``ember.optim`` optimizer over ``model``'s parameters.
        epochs: number of passes over ``loader``.
        evaluate: ``evaluate(model)`` → accuracy in ``[0, 1]``, or ``(accuracy, test_loss)``
            when it also scores the loss on its held-out data; called under ``no_grad``.
        desc: label of the progress bar.
        scheduler: an ``optim.lr_scheduler`` stepped once per epoch, or None.
        quiet: hide the progress bar. When stderr is not a terminal (a log file, a pipe) the
            bar is replaced by a plain line every few seconds (``EMBER_PROGRESS_SECONDS``,
            default 5), so a redirected run shows it is alive.

    Inside :func:`~.milestone.compiled_steps`, the training step (zero_grad, forward, loss, backward,
    optimizer step) runs through ``ember.compile``, as ``torch.compile(train_step)`` would, and
    ``evaluate`` is given ``torch.compile(model, dynamic=False)`` (the same parameters) instead of
    ``model``.

    Returns:
        :class:`History`: per epoch, the sample-weighted mean training loss and ``evaluate``'s
        accuracy (and test loss).
    """
    history = History()
    # disable=None lets tqdm hide the bar when stderr is not a terminal (logs, CI, pipes).
    bar = trange(epochs, desc=desc, file=sys.stderr, leave=False, disable=True if quiet else None)
    log = None if quiet or sys.stderr.isatty() else _LogLines(desc, epochs)

    def train_step(inputs, targets):
        # course:begin 08/training-step
        # hint: one step: clear the gradients, compute the loss, backpropagate, update; return the loss
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss
        # course:end 08/training-step
    # async_compile (ember's option): a cold cache's C is built beside the training, which runs the
    # generated Python meanwhile, so a short run never waits for the C compiler
    step = torch.compile(train_step, options={"async_compile": True}) if compiling() else train_step
    # and the evaluation forward as a torch user compiles it: the model itself (sharing its
    # parameters), called under no_grad in eval mode, which its guards hold apart from training;
    # static: a graph per evaluation shape (the GPT's two: a dynamic capture of the second cost 11 s)
    scored = torch.compile(model, dynamic=False, options={"async_compile": True}) if compiling() else model
    times, graphs, dynamic = [], 0, compiling() and _short_last_batch(loader)
    for epoch in bar:
        model.train()
        total, count = 0.0, 0
        for inputs, targets in loader:
            if dynamic:  # the short last batch reuses the graph instead of compiling a second one
                _batch_dynamic(inputs, targets)
            start, before = time.perf_counter(), _graphs()
            loss = step(inputs, targets)
            times.append(time.perf_counter() - start)
            graphs += _graphs() - before  # the training step's graphs, not the evaluation's
            total += loss.item() * len(targets)  # the sample-weighted mean of the epoch
            count += len(targets)
            if log is not None:
                log.report(epoch, total / count)
        if scheduler is not None:
            scheduler.step()
        model.eval()
        with torch.no_grad():
            scores = evaluate(scored)
        accuracy, test_loss = scores if isinstance(scores, tuple) else (scores, None)
        history.loss.append(total / count)
        history.accuracy.append(accuracy)
        if test_loss is not None:
            history.test_loss.append(test_loss)
        bar.set_postfix(loss=f"{history.loss[-1]:.4f}", accuracy=f"{accuracy:.3f}")
    history.steps, history.step_seconds = len(times), sum(times)
    if compiling() and times:
        history.compile_seconds = max(0.0, sum(times) - len(times) * statistics.median(times))
        history.graphs = graphs
    return history


def _short_last_batch(loader):
    """Whether a ``DataLoader``'s last batch is shorter than the others: its dataset's length
    is not a multiple of the batch size, and ``drop_last`` keeps it."""
    batch, dataset = getattr(loader, "batch_size", None), getattr(loader, "dataset", None)
    return bool(batch) and dataset is not None and not getattr(loader, "drop_last", False) \
        and len(dataset) % batch != 0


def _batch_dynamic(*tensors):
    """Marks dimension 0 of each tensor dynamic (``torch._dynamo.mark_dynamic``) unless the loader
    marked it already (the transformer's batches, with their range)."""
    for t in tensors:
        if 0 not in marks(t, "dynamic"):
            torch._dynamo.mark_dynamic(t, 0)


def _graphs():
    """Graphs compiled in this process so far (torch's ``counters["stats"]["unique_graphs"]``)."""
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


class _LogLines:
    """Progress for a log file or a pipe, where a progress bar would be noise: one line at most
    every ``EMBER_PROGRESS_SECONDS`` seconds."""

    def __init__(self, desc, epochs):
        self.desc, self.epochs = desc, epochs
        self.every = float(os.environ.get("EMBER_PROGRESS_SECONDS", "5"))
        self.start = self.last = time.monotonic()

    def report(self, epoch, mean_loss):
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            print(f"{self.desc}: epoch {epoch + 1}/{self.epochs}, training loss {mean_loss:.4f}, "
                  f"{now - self.start:.0f} s", file=sys.stderr, flush=True)


def class_accuracy(model, inputs, targets):
    """Fraction of ``inputs`` whose largest logit is at the target class.

    Shapes: ``model(inputs)`` is ``(N, C)``; ``targets`` is ``(N,)`` int64.
    """
    # course:begin 08/class-accuracy
    # hint: the fraction of rows whose largest logit is at the target class, as a Python float
    return (model(inputs).argmax(dim=1) == targets).float().mean().item()
    # course:end 08/class-accuracy


def class_accuracy_and_loss(model, inputs, targets):
    """``(accuracy, cross-entropy)`` of ``model`` on ``inputs``, from one forward pass.

    Shapes: ``model(inputs)`` is ``(N, C)``; ``targets`` is ``(N,)`` int64.
    """
    logits = model(inputs)
    accuracy = (logits.argmax(dim=1) == targets).float().mean().item()
    return accuracy, torch.nn.functional.cross_entropy(logits, targets).item()


def sign_accuracy(model, inputs, targets):
    """Accuracy of one output unit read as a threshold at zero: positive → class 1.

    Shapes: ``model(inputs)`` is ``(N, 1)``; ``targets`` is ``(N,)`` with values 0 and 1.
    """
    predictions = (model(inputs).squeeze(1) > 0).long()
    return (predictions == targets).float().mean().item()
