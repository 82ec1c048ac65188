"""1969 — Minsky & Papert: one layer cannot learn XOR; a hidden layer can.

In *Perceptrons* (1969) Marvin Minsky and Seymour Papert proved what a single layer of
threshold units cannot compute. The smallest example is XOR: the points ``(0,1)`` and
``(1,0)`` are class 1, ``(0,0)`` and ``(1,1)`` class 0, and no straight line puts the two
diagonals on different sides, so any one-layer classifier gets at most 3 of the 4 points
right (accuracy ≤ 0.75) however it is trained. The book cooled research on neural networks
for over a decade. A hidden layer removes the limit: it can bend the input space so that the
output unit's line does separate the classes — but it needed a way to train hidden units,
which 1986 (``backprop``) supplied.

Here a single logistic unit and a two-layer MLP are trained the same way (Adam on the binary
cross-entropy, all four points per step) and scored on the four points.
"""
import ember as torch
from ember import nn
from ember.datasets import xor
from ember.utils.data import DataLoader, TensorDataset

from .milestone import Milestone, Threshold
from .training import fit, sign_accuracy

HIDDEN_FEATURES = 8


def train(fast=False, seed=0, quiet=False):
    torch.manual_seed(seed)
    inputs, targets = map(torch.from_numpy, xor())
    loader = DataLoader(TensorDataset(inputs, targets.float().unsqueeze(1)), batch_size=4)
    models = {
        "one layer": nn.Linear(2, 1),
        "two-layer MLP": nn.Sequential(nn.Linear(2, HIDDEN_FEATURES), nn.Tanh(),
                                       nn.Linear(HIDDEN_FEATURES, 1)),
    }
    histories = {}
    for label, model in models.items():
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        histories[label] = fit(model, loader, nn.BCEWithLogitsLoss(), optimizer,
                               epochs=50 if fast else 100,
                               evaluate=lambda model: sign_accuracy(model, inputs, targets),
                               desc=f"xor: {label}", quiet=quiet)
    metrics = {"one-layer accuracy": histories["one layer"].accuracy[-1],
               "MLP accuracy": histories["two-layer MLP"].accuracy[-1]}
    return metrics, histories


MILESTONE = Milestone(
    name="xor", year=1969,
    story="Minsky & Papert: one layer cannot learn XOR; a hidden layer can",
    thresholds=(Threshold("one-layer accuracy", 0.75, at_most=True),
                Threshold("MLP accuracy", 1.0)),
    accuracy_label="accuracy on the four XOR points",
    train=train)
