"""1958 — Rosenblatt's perceptron learns a line that separates two classes.

Frank Rosenblatt's perceptron (*The perceptron: a probabilistic model for information
storage and organization in the brain*, Psychological Review 65(6), 1958) is one linear
threshold unit: it answers 1 when ``w·x + b > 0`` and 0 otherwise. It learns from one example
at a time: on a wrong answer it adds the input to ``w`` (a missed 1) or subtracts it (a missed
0); on a right answer it changes nothing. Novikoff (1962) proved that when some line separates
the two classes with a margin, the rule stops making mistakes after finitely many updates.

The rule is gradient descent in disguise. With the label as a sign ``s = ±1``, the *perceptron
criterion* ``max(0, -s·(w·x + b))`` has gradient ``-s·x`` on a mistake and 0 otherwise, so SGD
with batch size 1 and learning rate 1 on it is exactly Rosenblatt's update. Here the perceptron
is an ``nn.Linear(2, 1)`` trained that way, with autograd deriving the rule.
"""
import ember as torch
from ember import nn
from ember.datasets import linearly_separable
from ember.utils.data import DataLoader, TensorDataset

from .milestone import Milestone, Threshold
from .training import fit, sign_accuracy


def perceptron_criterion(outputs, targets):
    """Mean of ``max(0, -s·output)`` with ``s = 2·target - 1``: zero when every sign is right.

    Shapes: ``outputs`` ``(N, 1)`` float; ``targets`` ``(N,)`` int64 with values 0 and 1.
    """
    signs = 2 * targets - 1
    return torch.relu(-signs * outputs.squeeze(1)).mean()


def train(fast=False, seed=0, quiet=False):
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = map(torch.from_numpy, linearly_separable(n=200, seed=seed))
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=1, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    history = fit(model, loader, perceptron_criterion, optimizer, epochs=2 if fast else 5,
                  evaluate=lambda model: (sign_accuracy(model, x_test, y_test),
                                          perceptron_criterion(model(x_test), y_test).item()),
                  desc="perceptron", quiet=quiet)
    return {"test accuracy": history.accuracy[-1]}, {"perceptron": history}


MILESTONE = Milestone(
    name="perceptron", year=1958,
    story="Rosenblatt's perceptron learns a line separating two classes of points",
    thresholds=(Threshold("test accuracy", 0.95),),
    accuracy_label="test accuracy",
    train=train)
