"""Six more public PyTorch programs, condensed (own code, faithful to each program's structure; the
source named per factory: pytorch/examples' mnist_rnn, regression, mnist_forward_forward,
reinforce, siamese_network and gat), written for ``lib`` (``torch`` or ``ember``): the programs
``test_real_programs_31.py`` compiles and ``benchmarks/bench_real_programs_31.py`` times. Each
factory takes ``compile`` (applied where a user would add ``torch.compile``) and returns ``(model,
step)``: ``step()`` runs one iteration of the program's loop (an epoch of two batches and a test
batch, an episode, a batch) on seeded synthetic data and returns the numbers it logs. Narrowed
widths and data (MNIST's 28 rows and 784 pixels, Cora's graph) so that a step takes milliseconds."""
from collections import deque

import numpy as np

from real_programs_30 import CartPole


def _plain(fn):
    return fn


def _epoch(lib, model, net, optimizer, scheduler, batches, test_batch, loss_fn, test_loss_fn, predict):
    """The loop of mnist_rnn's and siamese_network's ``main()``: ``train()`` over ``batches``
    (``zero_grad``, the loss, ``backward``, ``optimizer.step()``, ``loss.item()`` logged), then
    ``test()`` on ``test_batch`` under ``no_grad`` (summed loss, ``correct`` by ``eq().sum().item()``),
    then ``scheduler.step()``; ``net`` is the compiled model."""
    model.train()
    log = []
    for *inputs, target in batches:
        optimizer.zero_grad()
        loss = loss_fn(net(*inputs), target)
        loss.backward()
        optimizer.step()
        log.append(loss.item())
    model.eval()
    with lib.no_grad():
        *inputs, target = test_batch
        output = net(*inputs)
        log.append(test_loss_fn(output, target).item())
        pred = predict(output)
        log.append(pred.eq(target.view_as(pred)).sum().item())
    scheduler.step()
    return log


def mnist_rnn(lib, compile=_plain, rows=8, hidden=16, batch=8):
    """``mnist_rnn/main.py``: a batch-first LSTM over the image's rows, its last output through
    ``BatchNorm1d``, ``Dropout2d`` on that 2-D tensor (deprecated: a channel dropout of the whole
    batch as one sample, torch warns), two Linears and ``log_softmax``; NLL loss, Adadelta(lr=0.1)
    and ``StepLR(step_size=1, gamma=0.7)``; ``torch.compile(model)``."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(input_size=rows, hidden_size=hidden, batch_first=True)
            self.batchnorm = nn.BatchNorm1d(hidden)
            self.dropout1, self.dropout2 = nn.Dropout2d(0.25), nn.Dropout2d(0.5)
            self.fc1, self.fc2 = nn.Linear(hidden, 16), nn.Linear(16, 10)

        def forward(self, input):
            input = input.reshape(-1, rows, rows)
            output, hidden = self.rnn(input)
            output = output[:, -1, :]
            output = self.dropout1(self.batchnorm(output))
            output = self.dropout2(F.relu(self.fc1(output)))
            return F.log_softmax(self.fc2(output), dim=1)

    lib.manual_seed(1)
    model = Net()
    net = compile(model)
    optimizer = lib.optim.Adadelta(model.parameters(), lr=0.1)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    images, targets = lib.randn(3, batch, 1, rows, rows), lib.randint(0, 10, (3, batch))
    batches = [(images[i], targets[i]) for i in range(2)]
    return model, lambda: _epoch(lib, model, net, optimizer, scheduler, batches, (images[2], targets[2]),
                                 F.nll_loss, lambda out, t: F.nll_loss(out, t, reduction="sum"),
                                 lambda out: out.argmax(dim=1, keepdim=True))


def regression(lib, compile=_plain, degree=4, batch=32):
    """``regression/main.py``: fit a degree-4 polynomial by a ``Linear(4, 1)``; the loop body
    (``get_batch`` building ``[x, x^2, x^3, x^4]`` by ``cat`` with the target's
    ``b_target.item()``, ``zero_grad``, ``smooth_l1_loss``, ``output.item()``, ``backward``, the
    manual ``param.data.add_(-0.1 * param.grad)``) compiled whole; the step returns ``[loss]``."""
    F = lib.nn.functional
    lib.manual_seed(0)
    W_target, b_target = lib.randn(degree, 1) * 5, lib.randn(1) * 5

    def make_features(x):
        x = x.unsqueeze(1)
        return lib.cat([x ** i for i in range(1, degree + 1)], 1)

    def f(x):
        return x.mm(W_target) + b_target.item()

    def get_batch():
        x = make_features(lib.randn(batch))
        return x, f(x)

    fc = lib.nn.Linear(W_target.size(0), 1)

    @compile
    def train_batch():
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        return loss
    return fc, lambda: [train_batch()]


def poly_desc(W, b):
    """``regression/main.py``'s description of the learnt polynomial (``'{:+.2f}'.format`` of
    0-d tensors)."""
    result = "y = "
    for i, w in enumerate(W):
        result += "{:+.2f} x^{} ".format(w, i + 1)
    return result + "{:+.2f}".format(b[0])


def forward_forward(lib, compile=_plain, dims=(16, 12, 12), batch=20, epochs=2, lr=0.03, threshold=2.0):
    """``mnist_forward_forward/main.py``: Hinton's forward-forward training; each ``Layer`` (an
    ``nn.Linear`` whose ``train`` is overridden) has its own Adam and trains on its goodness
    ``h.pow(2).mean(1)`` of positive and negative data (the label written over the first pixels by
    ``overlay_y_on_x``: ``x_[range(n), y] = x.max()``); ``predict`` tries the ten labels. The
    epoch's body and ``predict`` are compiled; the step trains every layer ``epochs`` epochs and
    returns the losses and the train error."""
    nn = lib.nn

    def overlay_y_on_x(x, y, classes=10):
        x_ = x.clone()
        x_[:, :classes] *= 0.0
        x_[range(x.shape[0]), y] = x.max()
        return x_

    class Layer(nn.Linear):
        def __init__(self, in_features, out_features):
            super().__init__(in_features, out_features)
            self.relu = nn.ReLU()
            self.opt = lib.optim.Adam(self.parameters(), lr=lr)
            self.epoch = compile(self._epoch)

        def forward(self, x):
            x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return self.relu(lib.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

        def _epoch(self, x_pos, x_neg):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = lib.log1p(lib.exp(lib.cat([-g_pos + threshold, g_neg - threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return loss

        def train(self, x_pos, x_neg):
            losses = [self.epoch(x_pos, x_neg).item() for _ in range(epochs)]
            return self.forward(x_pos).detach(), self.forward(x_neg).detach(), losses

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [Layer(dims[d], dims[d + 1]) for d in range(len(dims) - 1)]
            self.predict = compile(self._predict)

        def _predict(self, x):
            goodness_per_label = []
            for label in range(10):
                h = overlay_y_on_x(x, label)
                goodness = []
                for layer in self.layers:
                    h = layer(h)
                    goodness = goodness + [h.pow(2).mean(1)]
                goodness_per_label += [sum(goodness).unsqueeze(1)]
            return lib.cat(goodness_per_label, 1).argmax(1)

        def train(self, x_pos, x_neg):
            h_pos, h_neg, log = x_pos, x_neg, []
            for layer in self.layers:
                h_pos, h_neg, losses = layer.train(h_pos, h_neg)
                log += losses
            return log

    def get_y_neg(y):
        y_neg = y.clone()
        for idx, y_samp in enumerate(y):
            allowed_indices = list(range(10))
            allowed_indices.remove(y_samp.item())
            y_neg[idx] = lib.tensor(allowed_indices)[lib.randint(len(allowed_indices), size=(1,))].item()
        return y_neg

    lib.manual_seed(1)
    net = Net()
    x, y = lib.randn(batch, dims[0]), lib.randint(0, 10, (batch,))
    x_pos, x_neg = overlay_y_on_x(x, y), overlay_y_on_x(x, get_y_neg(y))
    model = nn.ModuleList(net.layers)
    return model, lambda: net.train(x_pos, x_neg) + [1.0 - net.predict(x).eq(y).float().mean().item()]


def reinforce(lib, compile=_plain, width=16, gamma=0.99, max_steps=30):
    """``reinforcement_learning/reinforce.py``: a policy with dropout(0.6) between its Linears,
    ``select_action`` (``from_numpy(state).float().unsqueeze(0)``, ``Categorical``, ``sample``,
    ``log_prob``, ``action.item()``) and ``finish_episode`` (returns built in a ``deque`` by
    ``appendleft``, ``torch.tensor(deque)``, normalised by ``std() + eps``, ``cat`` of the policy
    losses, Adam(lr=1e-2)), both compiled, on the NumPy cart-pole with episodes cut at
    ``max_steps``. The step runs an episode and returns ``[ep_reward, running_reward]``."""
    nn, F = lib.nn, lib.nn.functional

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1, self.dropout, self.affine2 = nn.Linear(4, width), nn.Dropout(p=0.6), nn.Linear(width, 2)
            self.saved_log_probs, self.rewards = [], []

        def forward(self, x):
            return F.softmax(self.affine2(F.relu(self.dropout(self.affine1(x)))), dim=1)

    lib.manual_seed(543)
    policy = Policy()
    optimizer = lib.optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()
    env = CartPole(543)

    @compile
    def select_action(state):
        state = lib.from_numpy(state).float().unsqueeze(0)
        m = lib.distributions.Categorical(policy(state))
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        return action.item()

    @compile
    def finish_episode():
        R, policy_loss, returns = 0, [], deque()
        for r in policy.rewards[::-1]:
            R = r + gamma * R
            returns.appendleft(R)
        returns = lib.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = lib.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]

    state = {"running_reward": 10}

    def step():
        s, _ = env.reset()
        ep_reward = 0
        for _ in range(max_steps):
            s, reward, terminated, truncated, _ = env.step(select_action(s))
            policy.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break
        state["running_reward"] = 0.05 * ep_reward + (1 - 0.05) * state["running_reward"]
        finish_episode()
        return [ep_reward, state["running_reward"]]
    return policy, step


def siamese_network(lib, compile=_plain, width=8, image=12, batch=6):
    """``siamese_network/main.py``: two images through one ResNet trunk (torchvision's
    ``resnet18`` with a one-channel 7x7 ``conv1`` and its ``fc`` cut off; here its stem and two
    ``BasicBlock``s, the second strided with a downsample, and torchvision's init), the features
    ``cat``-ed into a Linear-ReLU(inplace)-Linear head and a sigmoid; BCELoss on ``squeeze()``,
    Adadelta(lr=1.0), StepLR(gamma=0.7), ``torch.where(outputs > 0.5, 1, 0)`` for accuracy;
    ``torch.compile(model)``."""
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1, self.relu = nn.BatchNorm2d(planes), nn.ReLU(inplace=True)
            self.conv2, self.bn2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False), nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1:
                self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class SiameseNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.resnet = nn.Sequential(nn.Conv2d(1, width, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False),
                                        nn.BatchNorm2d(width), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1),
                                        BasicBlock(width, width), BasicBlock(width, 2 * width, 2), nn.AdaptiveAvgPool2d((1, 1)))
            for m in self.resnet.modules():  # torchvision's ResNet.__init__
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            self.fc = nn.Sequential(nn.Linear(4 * width, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
            self.sigmoid = nn.Sigmoid()
            self.resnet.apply(self.init_weights)
            self.fc.apply(self.init_weights)

        def init_weights(self, m):
            if isinstance(m, nn.Linear):
                lib.nn.init.xavier_uniform_(m.weight)
                m.bias.data.fill_(0.01)

        def forward_once(self, x):
            output = self.resnet(x)
            return output.view(output.size()[0], -1)

        def forward(self, input1, input2):
            output = lib.cat((self.forward_once(input1), self.forward_once(input2)), 1)
            return self.sigmoid(self.fc(output))

    lib.manual_seed(1)
    model = SiameseNetwork()
    net = compile(model)
    optimizer = lib.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    images = lib.rand(3, 2, batch, 1, image, image) * 255
    targets = (lib.arange(3 * batch) % 2 == 0).float().view(3, batch)  # APP_MATCHER: even indices pair one class
    batches = [(images[i, 0], images[i, 1], targets[i]) for i in range(2)]
    criterion = nn.BCELoss()
    return model, lambda: _epoch(lib, model, lambda a, b: net(a, b).squeeze(), optimizer, scheduler, batches,
                                 (images[2, 0], images[2, 1], targets[2]), criterion, criterion,
                                 lambda out: lib.where(out > 0.5, 1, 0))


def gat(lib, compile=_plain, nodes=14, features=10, hidden=8, heads=2, classes=3, dropout=0.6):
    """``gat/main.py``: two ``GraphAttentionLayer``s (``mm``, ``F.dropout(training=self.training)``,
    per-head attention scores ``source + target.mT``, LeakyReLU, ``where(adj_mat > 0, e, -9e16 *
    ones_like(e))``, softmax, heads averaged) with ELU between, ``log_softmax``; NLL loss on
    ``output[idx_train]``, Adam(weight_decay=5e-4); ``train_iter`` then ``test`` on the train and
    validation indices (``.item()`` of loss and accuracy); ``torch.compile`` on the model. The
    adjacency is dense (the program's ``eye(V) + sparse`` is)."""
    nn, F = lib.nn, lib.nn.functional

    class GraphAttentionLayer(nn.Module):
        def __init__(self, in_features, out_features, n_heads):
            super().__init__()
            self.n_heads, self.dropout, self.n_hidden = n_heads, dropout, out_features
            self.W = nn.Parameter(lib.empty(size=(in_features, self.n_hidden * n_heads)))
            self.a = nn.Parameter(lib.empty(size=(n_heads, 2 * self.n_hidden, 1)))
            self.leakyrelu, self.softmax = nn.LeakyReLU(0.2), nn.Softmax(dim=1)
            nn.init.xavier_normal_(self.W)
            nn.init.xavier_normal_(self.a)

        def _get_attention_scores(self, h_transformed):
            source_scores = lib.matmul(h_transformed, self.a[:, :self.n_hidden, :])
            target_scores = lib.matmul(h_transformed, self.a[:, self.n_hidden:, :])
            return self.leakyrelu(source_scores + target_scores.mT)

        def forward(self, h, adj_mat):
            n_nodes = h.shape[0]
            h_transformed = F.dropout(lib.mm(h, self.W), self.dropout, training=self.training)
            h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
            e = self._get_attention_scores(h_transformed)
            e = lib.where(adj_mat > 0, e, -9e16 * lib.ones_like(e))
            attention = F.dropout(F.softmax(e, dim=-1), self.dropout, training=self.training)
            return lib.matmul(attention, h_transformed).mean(dim=0)

    class GAT(nn.Module):
        def __init__(self):
            super().__init__()
            self.gat1 = GraphAttentionLayer(features, hidden, heads)
            self.gat2 = GraphAttentionLayer(hidden, classes, 1)

        def forward(self, input_tensor, adj_mat):
            return F.log_softmax(self.gat2(F.elu(self.gat1(input_tensor, adj_mat)), adj_mat), dim=1)

    lib.manual_seed(13)
    model = GAT()
    net = compile(model)
    optimizer = lib.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
    criterion = nn.NLLLoss()
    x = (lib.rand(nodes, features) < 0.3).float()
    x = lib.diag(1 / x.sum(dim=1).clamp(min=1)) @ x
    adj_mat = lib.eye(nodes) + (lib.rand(nodes, nodes) < 0.2).float()
    labels = lib.randint(0, classes, (nodes,))
    idx = lib.randperm(nodes)
    idx_val, idx_train = idx[:4], idx[4:]

    def test(mask):
        model.eval()
        with lib.no_grad():
            output, target = net(x, adj_mat)[mask], labels[mask]
            loss = criterion(output, target)
            acc = (output.argmax(dim=1) == target).float().sum() / len(target)
        return [loss.item(), acc.item()]

    def step():
        model.train()
        optimizer.zero_grad()
        loss = criterion(net(x, adj_mat)[idx_train], labels[idx_train])
        loss.backward()
        optimizer.step()
        return test(idx_train) + test(idx_val)
    return model, step


PROGRAMS = {"mnist_rnn": mnist_rnn, "regression": regression, "forward_forward": forward_forward,
            "reinforce": reinforce, "siamese": siamese_network, "gat": gat}
