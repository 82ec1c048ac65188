"""Public PyTorch training programs, in compact versions written from memory (session 20,
VERIFY20), run unchanged under ``import ember as torch`` (issue 8's "Done when"): minGPT's char
model (its Trainer's infinite ``RandomSampler``), makemore's bigram and MLP, pytorch/examples'
mnist (``Dropout2d`` on a 2-D input, Adadelta, StepLR) and the 60-minute blitz CIFAR classifier,
each on a tiny synthetic dataset of the real one's shape, for a few steps. (nanoGPT's train loop
and word_language_model's LSTM are integration/gpt_script.py and word_lm_script.py; the real
checkouts run in integration/test_public_programs.py.) Only the import lines change (``import torch`` ->
``import ember as torch``, ``from torch.x import y`` -> ``from ember.x import y``); the loss must
decrease. makemore and word_language_model also run under torch 2.13, and their losses agree.
"""
import re

import pytest

torch = pytest.importorskip("torch")

HEADER = """import math
import inspect
from contextlib import nullcontext
from dataclasses import dataclass
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import DataLoader as DL
"""

MINGPT = '''
class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout, self.resid_dropout = nn.Dropout(0.1), nn.Dropout(0.1)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))
        self.n_head, self.n_embd = n_head, n_embd
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))

class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd),
                                      act=NewGELU(), dropout=nn.Dropout(0.1)))
        m = self.mlp
        self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))
    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlpf(self.ln_2(x))

class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer=2, n_head=2, n_embd=32):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd), drop=nn.Dropout(0.1),
            h=nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)]), ln_f=nn.LayerNorm(n_embd)))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))
    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        elif isinstance(module, nn.LayerNorm):
            torch.nn.init.zeros_(module.bias)
            torch.nn.init.ones_(module.weight)
    def configure_optimizers(self, learning_rate, weight_decay, betas):
        decay, no_decay = set(), set()
        whitelist_weight_modules = (torch.nn.Linear, )
        blacklist_weight_modules = (torch.nn.LayerNorm, torch.nn.Embedding)
        for mn, m in self.named_modules():
            for pn, p in m.named_parameters():
                fpn = "%s.%s" % (mn, pn) if mn else pn
                if pn.endswith("bias"):
                    no_decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, whitelist_weight_modules):
                    decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, blacklist_weight_modules):
                    no_decay.add(fpn)
        param_dict = {pn: p for pn, p in self.named_parameters()}
        assert len(decay & no_decay) == 0 and len(param_dict.keys() - (decay | no_decay)) == 0
        optim_groups = [{"params": [param_dict[pn] for pn in sorted(list(decay))], "weight_decay": weight_decay},
                        {"params": [param_dict[pn] for pn in sorted(list(no_decay))], "weight_decay": 0.0}]
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)
    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss
    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, top_k)
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            if do_sample:
                idx_next = torch.multinomial(probs, num_samples=1)
            else:
                _, idx_next = torch.topk(probs, k=1, dim=-1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx

class CharDataset(torch.utils.data.Dataset):
    def __init__(self, data, block_size):
        chars = sorted(list(set(data)))
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.vocab_size, self.block_size, self.data = len(chars), block_size, data
    def __len__(self):
        return len(self.data) - self.block_size
    def __getitem__(self, idx):
        chunk = self.data[idx:idx + self.block_size + 1]
        dix = [self.stoi[s] for s in chunk]
        return torch.tensor(dix[:-1], dtype=torch.long), torch.tensor(dix[1:], dtype=torch.long)

torch.manual_seed(3407)
train_dataset = CharDataset("to be or not to be that is the question " * 6, 12)
model = GPT(train_dataset.vocab_size, 12)
optimizer = model.configure_optimizers(5e-3, 0.1, (0.9, 0.95))
train_loader = DL(train_dataset, sampler=torch.utils.data.RandomSampler(
    train_dataset, replacement=True, num_samples=int(1e10)), shuffle=False, pin_memory=False, batch_size=8,
    num_workers=0)
model.train()
data_iter = iter(train_loader)
for iter_num in range(14):
    try:
        batch = next(data_iter)
    except StopIteration:
        data_iter = iter(train_loader)
        batch = next(data_iter)
    x, y = batch
    logits, loss = model(x, y)
    model.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    LOSSES.append(loss.item())
model.eval()
out = model.generate(torch.tensor([[train_dataset.stoi["t"]]], dtype=torch.long), 6, do_sample=True, top_k=4)
assert out.shape == (1, 7)
'''

MAKEMORE = '''
words = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia", "harper", "evelyn"] * 4
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
V = len(stoi)
N = torch.zeros((V, V), dtype=torch.int32)
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        N[stoi[ch1], stoi[ch2]] += 1
P = (N + 1).float()
P /= P.sum(1, keepdims=True)
g = torch.Generator().manual_seed(2147483647)
for i in range(3):
    out, ix = [], 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
log_likelihood, n = 0.0, 0
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        log_likelihood += torch.log(P[stoi[ch1], stoi[ch2]])
        n += 1
nll = -log_likelihood / n
# the neural bigram
xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs, ys = torch.tensor(xs), torch.tensor(ys)
num = xs.nelement()
W = torch.randn((V, V), generator=g, requires_grad=True)
for k in range(8):
    xenc = F.one_hot(xs, num_classes=V).float()
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
    W.grad = None
    loss.backward()
    W.data += -50 * W.grad
    BIGRAM.append(loss.item())
# the MLP
block_size = 3
def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y)
Xtr, Ytr = build_dataset(words)
C = torch.randn((V, 10), generator=g)
W1 = torch.randn((30, 64), generator=g) * (5 / 3) / (30 ** 0.5)
b1 = torch.randn(64, generator=g) * 0.01
W2 = torch.randn((64, V), generator=g) * 0.01
b2 = torch.randn(V, generator=g) * 0
parameters = [C, W1, b1, W2, b2]
for p in parameters:
    p.requires_grad = True
for i in range(30):
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    emb = C[Xtr[ix]]
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 20 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    LOSSES.append(loss.item())
with torch.no_grad():
    for _ in range(3):
        out, context = [], [0] * block_size
        while len(out) < 20:
            emb = C[torch.tensor([context])]
            h = torch.tanh(emb.view(1, -1) @ W1 + b1)
            probs = F.softmax(h @ W2 + b2, dim=1)
            ix = torch.multinomial(probs, num_samples=1, generator=g).item()
            context = context[1:] + [ix]
            out.append(ix)
            if ix == 0:
                break
'''

MNIST = '''
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)
    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)

def train(model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        LOSSES.append(loss.item())
        if batch_idx % 10 == 0:
            print("Train Epoch: {} [{}/{} ({:.0f}%)]\\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(train_loader.dataset), 100. * batch_idx / len(train_loader),
                loss.item()))

def test(model, device, test_loader):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print("Test set: Average loss: {:.4f}, Accuracy: {}/{}".format(test_loss, correct, len(test_loader.dataset)))

torch.manual_seed(1)
use_cuda = torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
train_kwargs, test_kwargs = {"batch_size": 8}, {"batch_size": 16}
labels = torch.arange(16) % 10
images = torch.randn(16, 1, 28, 28) * 0.3 + (labels.float() / 10).view(-1, 1, 1, 1)
dataset1 = TensorDataset((images - 0.1307) / 0.3081, labels)
train_loader = torch.utils.data.DataLoader(dataset1, shuffle=True, **train_kwargs)
test_loader = torch.utils.data.DataLoader(dataset1, **test_kwargs)
model = Net().to(device)
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 4):
    train(model, device, train_loader, optimizer, epoch)
    test(model, device, test_loader)
    scheduler.step()
assert abs(optimizer.param_groups[0]["lr"] - 0.343) < 1e-9
torch.save(model.state_dict(), PATH)
'''

BLITZ = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)

torch.manual_seed(0)
classes = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
labels_all = torch.arange(16) % 10
images_all = (torch.rand(16, 3, 32, 32) - 0.5) / 0.5 + labels_all.view(-1, 1, 1, 1) * 0.1
trainloader = torch.utils.data.DataLoader(TensorDataset(images_all, labels_all), batch_size=4, shuffle=True,
                                          num_workers=0)
net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for epoch in range(4):
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    LOSSES.append(running_loss / len(trainloader))
torch.save(net.state_dict(), PATH)
net = Net()
net.load_state_dict(torch.load(PATH, weights_only=True))
dataiter = iter(trainloader)
images, labels = next(dataiter)
outputs = net(images)
_, predicted = torch.max(outputs, 1)
print("Predicted: ", " ".join(f"{classes[predicted[j]]:5s}" for j in range(4)))
correct = total = 0
with torch.no_grad():
    for data in trainloader:
        images, labels = data
        outputs = net(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
'''

TORCH_TOO = ("makemore", "mnist")  # also run under torch 2.13 here
PROGRAMS = {"mingpt": MINGPT, "makemore": MAKEMORE, "mnist": MNIST, "blitz_cifar": BLITZ}


def as_ember(source):
    """The program as ``import ember as torch`` runs it: only its import lines change."""
    source = re.sub(r"^import torch$", "import ember as torch", source, flags=re.M)
    source = re.sub(r"^import torch\.(\S+) as", r"import ember.\1 as", source, flags=re.M)
    return re.sub(r"^from torch(\S*) import", r"from ember\1 import", source, flags=re.M)


def run(source, tmp_path, tag):
    namespace = {"LOSSES": [], "BIGRAM": [], "PATH": str(tmp_path / f"{tag}.pt"), "__name__": "__main__"}
    exec(compile(source, f"<{tag}>", "exec"), namespace)
    return namespace


def decreased(losses, n=2):
    return sum(losses[-n:]) / n < sum(losses[:n]) / n


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_public_program_runs_unchanged_under_import_ember_as_torch(name, tmp_path, capsys):
    source = HEADER + PROGRAMS[name]
    ember_source = as_ember(source)
    changed = [(a, b) for a, b in zip(source.splitlines(), ember_source.splitlines()) if a != b]
    assert "import ember as torch" in ember_source and all(a.startswith(("import torch", "from torch"))
                                                           for a, _ in changed)
    got = run(ember_source, tmp_path, "ember")
    assert got["torch"].__name__ == "ember"
    runs = [got]
    if name in TORCH_TOO:
        want = run(source, tmp_path, "torch")
        assert want["torch"].__name__ == "torch"
        runs.append(want)
    for ns in runs:
        assert len(ns["LOSSES"]) >= 3 and decreased(ns["LOSSES"]), ns["LOSSES"]
        if ns["BIGRAM"]:
            assert decreased(ns["BIGRAM"]), ns["BIGRAM"]
    if name == "makemore":   # the seeded generator draws torch's numbers: the same losses (float32 roundoff)
        assert got["BIGRAM"] == pytest.approx(want["BIGRAM"], rel=1e-4)
        assert got["LOSSES"] == pytest.approx(want["LOSSES"], rel=1e-3)
    if name == "mnist":  # torch's initial weights, shuffles and Dropout2d masks: the first step's loss
        assert got["LOSSES"][0] == pytest.approx(want["LOSSES"][0], rel=1e-4)
