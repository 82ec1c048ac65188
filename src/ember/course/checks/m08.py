"""Module 08, the training loop: ``fit``'s step and the accuracy it reports, against the same
loop written in torch on the same weights and batches."""
import numpy as np
import torch

import ember
from ember.milestones.training import class_accuracy, fit

from . import Mismatch, check, close


def _data(rng):
    x = rng.standard_normal((24, 5)).astype(np.float32)
    y = rng.integers(0, 3, 24)
    return x, y


def _pair(rng):
    w1, b1 = rng.standard_normal((7, 5)) * 0.4, rng.standard_normal(7) * 0.1
    w2, b2 = rng.standard_normal((3, 7)) * 0.4, rng.standard_normal(3) * 0.1
    models = []
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(5, 7), lib.nn.Tanh(), lib.nn.Linear(7, 3))
        with lib.no_grad():
            for p, v in zip(m.parameters(), (w1, b1, w2, b2)):
                p.copy_(lib.tensor(v.astype(np.float32)))
        models.append(m)
    return models


@check("08/training-step", points=3)
def training_step():
    rng = np.random.default_rng(8)
    x, y = _data(rng)
    ours, theirs = _pair(rng)
    batches = [(x[i:i + 10], y[i:i + 10]) for i in range(0, 24, 10)]  # the last batch is short
    loader = [(ember.tensor(a), ember.tensor(b)) for a, b in batches]
    opt = ember.optim.SGD(ours.parameters(), lr=0.3, momentum=0.5)
    history = fit(ours, loader, ember.nn.functional.cross_entropy, opt, 3, lambda m: 0.0, "check", quiet=True)
    t_opt = torch.optim.SGD(theirs.parameters(), lr=0.3, momentum=0.5)
    losses = []
    for _ in range(3):
        total = 0.0
        for a, b in batches:
            t_opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(theirs(torch.tensor(a)), torch.tensor(b))
            loss.backward()
            t_opt.step()
            total += loss.item() * len(b)
        losses.append(total / 24)
    close("fit's mean training loss per epoch (3 epochs, batches of 10, 10, 4)", history.loss, losses, rtol=1e-5)
    close("the first layer's weight after training", ours[0].weight, theirs[0].weight, rtol=1e-4, atol=1e-5)


@check("08/class-accuracy", points=1)
def accuracy():
    logits = np.array([[0.1, 2.0, 0.3], [3.0, 0.0, 1.0], [0.2, 0.1, 0.9], [1.0, 5.0, 0.0]], np.float32)
    model = ember.nn.Identity()
    for targets, expected in (([1, 0, 2, 1], 1.0), ([1, 1, 2, 0], 0.5), ([0, 1, 0, 2], 0.0)):
        got = class_accuracy(model, ember.tensor(logits), ember.tensor(targets))
        close("class_accuracy", got, expected, input=np.array(targets))
        if not isinstance(got, float):
            raise Mismatch(f"class_accuracy returned {type(got).__name__}, expected a Python float")
