"""The training loop every milestone shares, written as a PyTorch user writes one."""
import sys

from tqdm import trange

import ember as torch

from .milestone import History


def fit(model, loader, loss_fn, optimizer, epochs, evaluate, desc, scheduler=None, quiet=False):
    """Train ``model`` for ``epochs`` passes over ``loader``; evaluate after each.

    Args:
        model: an ``nn.Module``; put in train mode to learn and eval mode to evaluate.
        loader: yields ``(inputs, targets)`` batches.
        loss_fn: ``loss_fn(model(inputs), targets)`` → scalar tensor.
        optimizer: an ``ember.optim`` optimizer over ``model``'s parameters.
        epochs: number of passes over ``loader``.
        evaluate: ``evaluate(model)`` → accuracy in ``[0, 1]``; called under ``no_grad``.
        desc: label of the progress bar.
        scheduler: an ``optim.lr_scheduler`` stepped once per epoch, or None.
        quiet: hide the progress bar; it is hidden anyway when stderr is not a TTY.

    Returns:
        :class:`History`: per epoch, the sample-weighted mean training loss and ``evaluate``'s
        accuracy.
    """
    history = History()
    # disable=None lets tqdm hide the bar when stderr is not a terminal (logs, CI, pipes).
    bar = trange(epochs, desc=desc, file=sys.stderr, leave=False, disable=True if quiet else None)
    for _ in bar:
        model.train()
        total, count = 0.0, 0
        for inputs, targets in loader:
            # course:begin 08/training-step
            # hint: one step per batch: clear the gradients, compute the loss, backpropagate, update;
            # hint: add loss.item() * len(targets) to total and len(targets) to count (a sample-weighted mean)
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(targets)
            count += len(targets)
            # course:end 08/training-step
        if scheduler is not None:
            scheduler.step()
        model.eval()
        with torch.no_grad():
            accuracy = evaluate(model)
        history.loss.append(total / count)
        history.accuracy.append(accuracy)
        bar.set_postfix(loss=f"{history.loss[-1]:.4f}", accuracy=f"{accuracy:.3f}")
    return history


def class_accuracy(model, inputs, targets):
    """Fraction of ``inputs`` whose largest logit is at the target class.

    Shapes: ``model(inputs)`` is ``(N, C)``; ``targets`` is ``(N,)`` int64.
    """
    # course:begin 08/class-accuracy
    # hint: the fraction of rows whose largest logit is at the target class, as a Python float
    return (model(inputs).argmax(dim=1) == targets).float().mean().item()
    # course:end 08/class-accuracy


def sign_accuracy(model, inputs, targets):
    """Accuracy of one output unit read as a threshold at zero: positive → class 1.

    Shapes: ``model(inputs)`` is ``(N, 1)``; ``targets`` is ``(N,)`` with values 0 and 1.
    """
    predictions = (model(inputs).squeeze(1) > 0).long()
    return (predictions == targets).float().mean().item()
