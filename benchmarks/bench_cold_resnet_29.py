"""Cold compile of a CIFAR ResNet-18 train step (BasicBlock x [2, 2, 2, 2], BatchNorm, SGD
with Nesterov momentum, batch 8 of 3x32x32 random data): one graph.

Run with a fresh cache, e.g. ``XDG_CACHE_HOME=$(mktemp -d) STEPS=20 python
benchmarks/bench_cold_resnet_29.py``: prints the wall and CPU time (with the C compiler's) of
the call that compiles (the second: the first runs eagerly while the optimizer makes its
state), and with STEPS the CPU time of a steady step; ``prof`` as argument profiles the
compiling call with cProfile into ``cold_resnet.prof``.
"""
import os
import resource
import sys
import time

import ember as torch
nn = torch.nn
F = torch.nn.functional

class BasicBlock(nn.Module):
    expansion = 1
    def __init__(self, inp, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or inp != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(inp, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))

class ResNet(nn.Module):
    def __init__(self, nb=(2, 2, 2, 2), classes=10):
        super().__init__()
        self.inp = 64
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.layer1 = self._make(64, nb[0], 1)
        self.layer2 = self._make(128, nb[1], 2)
        self.layer3 = self._make(256, nb[2], 2)
        self.layer4 = self._make(512, nb[3], 2)
        self.linear = nn.Linear(512, classes)
    def _make(self, planes, n, stride):
        layers = []
        for s in [stride] + [1] * (n - 1):
            layers.append(BasicBlock(self.inp, planes, s)); self.inp = planes
        return nn.Sequential(*layers)
    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.linear(out)

torch.manual_seed(0)
net = ResNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
crit = nn.CrossEntropyLoss()
x = torch.randn(8, 3, 32, 32); y = torch.randint(0, 10, (8,))

@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = crit(net(x), y)
    loss.backward()
    opt.step()
    return loss

def cpu():
    s = resource.getrusage(resource.RUSAGE_SELF); c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
step(x, y)
w0, c0 = time.perf_counter(), cpu()
if len(sys.argv) > 1 and sys.argv[1] == "prof":
    import cProfile
    cProfile.run("step(x, y)", "cold_resnet.prof")
else:
    step(x, y)
print(f"cold wall {time.perf_counter()-w0:.2f} s cpu {cpu()-c0:.2f} s load {os.getloadavg()[0]:.1f}")
n = int(os.environ.get("STEPS", "0"))
if n:
    step(x, y)
    c0 = time.process_time()
    for _ in range(n): step(x, y)
    print(f"step cpu {(time.process_time()-c0)/n*1000:.1f} ms")
