"""1986 — Rumelhart, Hinton & Williams: backpropagation trains hidden layers.

*Learning representations by back-propagating errors* (Nature 323, 1986) showed that the
chain rule, applied backwards from the error through each layer, gives every weight of a
multi-layer network its gradient, so hidden units can learn useful features of their own.
The paper's update is gradient descent with a momentum term,
``Δw(t) = -ε ∂E/∂w + α Δw(t-1)``: ``optim.SGD`` with ``momentum``. Its units were logistic
sigmoids; here they are ``tanh``, the same curve rescaled to ``(-1, 1)``, which centres the
hidden activations and trains faster (LeCun et al., *Efficient BackProp*, 1998). Dividing
the learning rate by ten for the last third of training, a later habit, steadies the final
accuracy.

The network is a 64-128-64-10 MLP on scikit-learn's 8×8 handwritten digits, trained with
cross-entropy on mini-batches and scored on a held-out stratified 20 %.
"""
import ember as torch
from ember import nn
from ember.datasets import load_digits
from ember.utils.data import DataLoader, TensorDataset

from .milestone import Milestone, Threshold
from .training import class_accuracy_and_loss, fit


def train(fast=False, seed=0, quiet=False):
    _, history, _ = train_mlp(fast, seed, quiet)
    return {"test accuracy": history.accuracy[-1]}, {"MLP": history}


def train_mlp(fast=False, seed=0, quiet=False):
    """The trained MLP (in eval mode), its :class:`History` and the held-out split
    ``(x_test, y_test)``: float32 ``(N, 64)`` and int64 ``(N,)`` tensors."""
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = map(torch.from_numpy, load_digits(seed=seed))
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    model = nn.Sequential(
        nn.Linear(64, 128), nn.Tanh(),
        nn.Linear(128, 64), nn.Tanh(),
        nn.Linear(64, 10))
    epochs = 6 if fast else 15
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2 * epochs // 3, gamma=0.1)
    history = fit(model, loader, nn.CrossEntropyLoss(), optimizer, epochs,
                  evaluate=lambda model: class_accuracy_and_loss(model, x_test, y_test),
                  desc="backprop", scheduler=scheduler, quiet=quiet)
    return model.eval(), history, (x_test, y_test)


MILESTONE = Milestone(
    name="backprop", year=1986,
    story="Rumelhart, Hinton & Williams: backpropagation trains a multi-layer network",
    thresholds=(Threshold("test accuracy", 0.95),),
    accuracy_label="test accuracy",
    train=train)
