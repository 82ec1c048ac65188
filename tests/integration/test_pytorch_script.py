"""A training script written for PyTorch runs unchanged under ``import ember as torch``.

The script below uses only PyTorch's API (Dataset/DataLoader, an nn.Module MLP,
CrossEntropyLoss, Adam, StepLR, no_grad evaluation, state_dict save and load); it is run once
with real torch and once with ember, and both must reach the same accuracy.
"""
import textwrap

import numpy as np
import pytest

SCRIPT = textwrap.dedent('''
    import {lib} as torch
    import {lib}.nn as nn
    import {lib}.nn.functional as F
    from {lib}.utils.data import DataLoader, Dataset

    class Digits(Dataset):
        def __init__(self, x, y):
            self.x = torch.tensor(x, dtype=torch.float32)
            self.y = torch.tensor(y, dtype=torch.long)

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return self.x[i], self.y[i]

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(64, 128)
            self.fc2 = nn.Linear(128, 64)
            self.out = nn.Linear(64, 10)
            self.drop = nn.Dropout(0.1)

        def forward(self, x):
            x = self.drop(F.relu(self.fc1(x)))
            x = torch.relu(self.fc2(x))
            return self.out(x)

    def evaluate(model, loader):
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for x, y in loader:
                correct += (model(x).argmax(dim=1) == y).sum().item()
                total += y.size(0)
        return correct / total

    torch.manual_seed(0)
    train = DataLoader(Digits(x_train, y_train), batch_size=32, shuffle=True)
    test = DataLoader(Digits(x_test, y_test), batch_size=256)
    model = MLP()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=6, gamma=0.5)
    for epoch in range(12):
        model.train()
        for x, y in train:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        scheduler.step()
    accuracy = evaluate(model, test)
    torch.save({{"model": model.state_dict(), "optimizer": optimizer.state_dict()}}, path)
    restored = MLP()
    checkpoint = torch.load(path)
    restored.load_state_dict(checkpoint["model"])
    restored_accuracy = evaluate(restored, test)
''')


# The one line a user adds to compile the model (and, as with torch, the original module's
# state_dict is saved: the compiled wrapper's keys carry the ``_orig_mod.`` prefix).
COMPILED = (("model = MLP()\n", "model = MLP()\nmodel = torch.compile(model)\n"),
            ('"model": model.state_dict()', '"model": model._orig_mod.state_dict()'))


def run(lib, tmp_path, edits=()):
    from ember.datasets import load_digits
    digits = load_digits()
    scope = {"x_train": digits.x_train, "y_train": digits.y_train, "x_test": digits.x_test,
             "y_test": digits.y_test, "path": str(tmp_path / f"{lib}.pt")}
    script = SCRIPT.format(lib=lib)
    for old, new in edits:
        assert old in script
        script = script.replace(old, new)
    exec(script, scope)
    return scope["accuracy"], scope["restored_accuracy"]


def test_same_script_same_accuracy_as_torch(tmp_path):
    pytest.importorskip("torch")
    ember_acc, ember_restored = run("ember", tmp_path)
    torch_acc, torch_restored = run("torch", tmp_path)
    assert ember_acc == ember_restored
    assert torch_acc == torch_restored
    assert ember_acc >= 0.94 and torch_acc >= 0.94
    assert abs(ember_acc - torch_acc) <= 0.03, (ember_acc, torch_acc)
    assert np.isfinite(ember_acc)


def test_script_with_torch_compile_added_matches_eager(tmp_path):
    """``model = torch.compile(model)`` added: the training steps (dropout included) and the
    evaluation run as captured graphs and reach eager's accuracy exactly (same kernels, same
    random draws in the same order)."""
    import ember
    ember.compiler.reset()
    eager = run("ember", tmp_path)
    compiled = run("ember", tmp_path, COMPILED)
    assert compiled == eager and compiled[0] >= 0.94
    assert ember._dynamo.utils.counters["stats"]["unique_graphs"] >= 3  # train, last batch, eval
    assert not ember._dynamo.utils.counters["graph_break"]
