"""Classic CNN programs written for PyTorch run unchanged under ``import ember as torch``.

1. The pytorch/examples MNIST script's shape (Conv2d, Dropout, max_pool2d, flatten,
   log_softmax, nll_loss, Adadelta, StepLR, DataLoader, save) on MNIST IDX files written here.
2. A DCGAN-style generator/discriminator pair (ConvTranspose2d, BatchNorm2d, LeakyReLU,
   BCELoss, two Adam optimisers) for a few steps.
"""
import struct

import numpy as np
import pytest

MNIST_SCRIPT = '''
import {lib} as torch
import {lib}.nn as nn
import {lib}.nn.functional as F
import {lib}.optim as optim
from {lib}.optim.lr_scheduler import StepLR
from {lib}.utils.data import DataLoader

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 6 * 6, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)

torch.manual_seed(1)
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
test_loader = DataLoader(test_set, batch_size=100)
model = Net()
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
losses = []
for epoch in range(3):
    model.train()
    for data, target in train_loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    scheduler.step()
model.eval()
correct = 0
with torch.no_grad():
    for data, target in test_loader:
        pred = model(data).argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
accuracy = correct / len(test_loader.dataset)
torch.save(model.state_dict(), path)
'''


def write_idx(path, array):
    codes = {np.uint8: 0x08}
    with open(path, "wb") as f:
        f.write(struct.pack(">HBB", 0, codes[np.uint8], array.ndim))
        f.write(struct.pack(">" + "I" * array.ndim, *array.shape))
        f.write(array.astype(np.uint8).tobytes())


def make_mnist(root):
    """Digits upscaled to 16x16 in MNIST's IDX files (the real files are not on the machine)."""
    from ember.datasets import load_digits
    d = load_digits(flatten=False)
    for split, x, y in (("train", d.x_train, d.y_train), ("t10k", d.x_test, d.y_test)):
        images = (np.kron(np.asarray(x).reshape(-1, 8, 8), np.ones((2, 2))) * 255).astype(np.uint8)
        write_idx(root / f"{split}-images-idx3-ubyte", images)
        write_idx(root / f"{split}-labels-idx1-ubyte", np.asarray(y).astype(np.uint8))


def test_mnist_example_runs_unchanged_on_idx_files(tmp_path):
    pytest.importorskip("torch")
    import ember
    from ember.datasets import MNIST
    from ember.vision import transforms
    make_mnist(tmp_path)
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    scope = {"train_set": MNIST(str(tmp_path), train=True, transform=tf),
             "test_set": MNIST(str(tmp_path), train=False, transform=tf),
             "path": str(tmp_path / "mnist_cnn.pt")}
    exec(MNIST_SCRIPT.format(lib="ember"), scope)
    assert scope["accuracy"] >= 0.9, scope["accuracy"]
    assert np.mean(scope["losses"][-10:]) < np.mean(scope["losses"][:10]) / 3
    state = ember.load(scope["path"])
    assert set(state) == {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                          "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}


DCGAN_SCRIPT = '''
import {lib} as torch
import {lib}.nn as nn

class Generator(nn.Module):
    def __init__(self, nz=8, ngf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)

class Discriminator(nn.Module):
    def __init__(self, ndf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)

netG, netD = Generator(), Discriminator()
netG.load_state_dict(weights_g)
netD.load_state_dict(weights_d)
criterion = nn.BCELoss()
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
d_losses, g_losses = [], []
for step in range(3):
    real = torch.tensor(reals[step])
    noise = torch.tensor(noises[step])
    netD.zero_grad()
    label = torch.full((real.size(0),), 1.0)
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    fake = netG(noise)
    label.fill_(0.0)
    errD_fake = criterion(netD(fake.detach()), label)
    errD_fake.backward()
    optD.step()
    netG.zero_grad()
    label.fill_(1.0)
    errG = criterion(netD(fake), label)
    errG.backward()
    optG.step()
    d_losses.append((errD_real + errD_fake).item())
    g_losses.append(errG.item())
'''


def test_dcgan_pair_trains_like_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    reals = [rng.uniform(-1, 1, (4, 1, 16, 16)).astype(np.float32) for _ in range(3)]
    noises = [rng.standard_normal((4, 8, 1, 1)).astype(np.float32) for _ in range(3)]
    torch_scope = {"reals": reals, "noises": noises}
    # Build torch's models once to draw initial weights, then give both runs the same ones.
    exec(DCGAN_SCRIPT.format(lib="torch").split("netG, netD =")[0], torch_scope)
    torch.manual_seed(0)
    g, d = torch_scope["Generator"](), torch_scope["Discriminator"]()
    weights_g = {k: v.detach().numpy().copy() for k, v in g.state_dict().items()}
    weights_d = {k: v.detach().numpy().copy() for k, v in d.state_dict().items()}
    results = {}
    for lib in ("torch", "ember"):
        mod = __import__(lib)
        scope = {"reals": reals, "noises": noises,
                 "weights_g": {k: mod.tensor(v) for k, v in weights_g.items()},
                 "weights_d": {k: mod.tensor(v) for k, v in weights_d.items()}}
        exec(DCGAN_SCRIPT.format(lib=lib), scope)
        results[lib] = (scope["d_losses"], scope["g_losses"])
    np.testing.assert_allclose(results["ember"][0], results["torch"][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(results["ember"][1], results["torch"][1], rtol=1e-4, atol=1e-5)
