"""Four more public PyTorch programs from pytorch/examples, condensed (own code, faithful to each
program's structure; the source named per factory), written for ``lib`` (``torch`` or ``ember``):
the programs ``test_real_programs_30.py`` compiles and ``benchmarks/bench_real_programs_30.py``
times. Each factory takes ``compile`` (applied where a user would add ``torch.compile``) and returns
``(model, step)``: ``step()`` runs one iteration of the program's loop (a batch, an episode, an
LBFGS step) on seeded synthetic data and returns the numbers it logs. Narrowed widths."""
import math

import numpy as np


def _plain(fn):
    return fn


def word_language_model(lib, rnn_type="LSTM", compile=_plain, ntoken=20, ninp=16, nhid=16, nlayers=2,
                        nhead=2, dropout=0.2, lr=20.0, clip=0.25, bptt=5, batch=4):
    """``word_language_model/{model,main}.py``: ``RNNModel`` (LSTM, GRU, RNN_TANH) or the
    ``TransformerModel`` (an ``nn.Transformer`` whose encoder alone runs under a ``log(tril(ones))``
    mask), NLLLoss on ``log_softmax``; ``train()``'s body: ``repackage_hidden``, ``zero_grad``,
    ``clip_grad_norm_`` and the manual SGD ``p.data.add_(p.grad, alpha=-lr)``, compiled whole;
    the step returns ``[loss.item()]`` and walks the batchified stream by ``bptt``."""
    nn, F = lib.nn, lib.nn.functional

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.ntoken, self.rnn_type, self.nhid, self.nlayers = ntoken, rnn_type, nhid, nlayers
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ["LSTM", "GRU"]:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            else:
                self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity="tanh", dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == "LSTM":
                return weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid)
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=64):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = lib.zeros(max_len, d_model)
            position = lib.arange(0, max_len, dtype=lib.float).unsqueeze(1)
            div_term = lib.exp(lib.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = lib.sin(position * div_term)
            pe[:, 1::2] = lib.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

        def forward(self, x):
            return self.dropout(x + self.pe[:x.size(0), :])

    class TransformerModel(nn.Transformer):
        def __init__(self):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers,
                             num_decoder_layers=1)
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            nn.init.uniform_(self.input_emb.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

        def forward(self, src):
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = lib.log(lib.tril(lib.ones(len(src), len(src))))
            src = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
            return F.log_softmax(self.decoder(self.encoder(src, mask=self.src_mask)), dim=-1)

    lib.manual_seed(0)
    transformer = rnn_type == "Transformer"
    model = TransformerModel() if transformer else RNNModel()
    criterion = nn.NLLLoss()
    stream = lib.randint(0, ntoken, (bptt * 3 * batch + batch,))
    train_data = stream.view(batch, -1).t().contiguous()  # batchify

    def repackage_hidden(h):
        if isinstance(h, lib.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)

    @compile
    def train_batch(data, targets, hidden):
        model.zero_grad()
        if transformer:
            output = model(data).view(-1, ntoken)
        else:
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        return loss, hidden

    state = {"i": 0, "hidden": None if transformer else model.init_hidden(batch)}

    def step():
        model.train()
        if state["i"] >= train_data.size(0) - 1:
            state["i"] = 0
        data, targets = get_batch(train_data, state["i"])
        state["i"] += bptt
        loss, state["hidden"] = train_batch(data, targets, state["hidden"])
        return [loss.item()]
    return model, step


def vae(lib, compile=_plain, pixels=64, hidden=32, latent=8, batch=8):
    """``vae/main.py``: the fully connected VAE (``reparameterize`` with ``randn_like``, sigmoid
    decoder), its loss (``binary_cross_entropy(reduction='sum')`` plus the KL term) and Adam; the
    compiled model trains on a batch, then evaluates a batch under ``no_grad``; the step returns
    ``[train loss, test loss]``."""
    nn, F = lib.nn, lib.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc21 = nn.Linear(pixels, hidden), nn.Linear(hidden, latent)
            self.fc22, self.fc3 = nn.Linear(hidden, latent), nn.Linear(latent, hidden)
            self.fc4 = nn.Linear(hidden, pixels)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            std = lib.exp(0.5 * logvar)
            eps = lib.randn_like(std)
            return mu + eps * std

        def decode(self, z):
            return lib.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, pixels))
            return self.decode(self.reparameterize(mu, logvar)), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, pixels), reduction="sum")
        KLD = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD

    lib.manual_seed(0)
    model = VAE()
    net = compile(model)
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    images = lib.rand(3, batch, 1, int(math.isqrt(pixels)), int(math.isqrt(pixels)))
    state = {"i": 0}

    def step():
        data = images[state["i"] % 2]
        state["i"] += 1
        model.train()
        optimizer.zero_grad()
        recon_batch, mu, logvar = net(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        optimizer.step()
        model.eval()
        with lib.no_grad():
            recon, mu, logvar = net(images[2])
            test_loss = loss_function(recon, images[2], mu, logvar).item()
        return [loss.item(), test_loss]
    return model, step


class CartPole:
    """The cart-pole of Barto, Sutton and Anderson (1983) with gym's constants and Euler steps, on
    NumPy, seeded: ``reset()`` gives ``(state, {})``, ``step(action)`` gym's five values."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        return self.state.copy(), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if action == 1 else -10.0
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + 0.05 * theta_dot ** 2 * sin) / 1.1
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
        x_acc = temp - 0.05 * theta_acc * cos / 1.1
        self.state = np.array([x + 0.02 * x_dot, x_dot + 0.02 * x_acc, theta + 0.02 * theta_dot,
                               theta_dot + 0.02 * theta_acc])
        done = abs(self.state[0]) > 2.4 or abs(self.state[2]) > 12 * 2 * math.pi / 360
        return self.state.copy(), 1.0, bool(done), False, {}


def actor_critic(lib, compile=_plain, width=16, gamma=0.99, max_steps=30):
    """``reinforcement_learning/actor_critic.py``: a shared layer with actor and critic heads,
    ``select_action`` (``from_numpy(state).float()``, ``Categorical(probs)``, ``sample``,
    ``log_prob``, ``action.item()``) and ``finish_episode`` (discounted returns in Python floats,
    ``torch.tensor``, normalised by ``std() + eps``, ``value.item()``, ``smooth_l1_loss`` against
    ``torch.tensor([R])``, ``stack``, Adam), both compiled; on a NumPy cart-pole with episodes cut
    at ``max_steps``. The step runs an episode and returns ``[ep_reward, loss]``."""
    nn, F = lib.nn, lib.nn.functional

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, width)
            self.action_head = nn.Linear(width, 2)
            self.value_head = nn.Linear(width, 1)
            self.saved_actions, self.rewards = [], []

        def forward(self, x):
            x = F.relu(self.affine1(x))
            return F.softmax(self.action_head(x), dim=-1), self.value_head(x)

    lib.manual_seed(0)
    model = Policy()
    optimizer = lib.optim.Adam(model.parameters(), lr=3e-2)
    eps = np.finfo(np.float32).eps.item()
    env = CartPole()

    @compile
    def select_action(state):
        state = lib.from_numpy(state).float()
        probs, state_value = model(state)
        m = lib.distributions.Categorical(probs)
        action = m.sample()
        model.saved_actions.append((m.log_prob(action), state_value))
        return action.item()

    @compile
    def finish_episode():
        R, policy_losses, value_losses, returns = 0, [], [], []
        for r in model.rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = lib.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for (log_prob, value), R in zip(model.saved_actions, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, lib.tensor([R])))
        optimizer.zero_grad()
        loss = lib.stack(policy_losses).sum() + lib.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        del model.rewards[:]
        del model.saved_actions[:]
        return loss

    def step():
        state, _ = env.reset()
        ep_reward = 0
        for _ in range(max_steps):
            state, reward, terminated, truncated, _ = env.step(select_action(state))
            model.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break
        return [ep_reward, finish_episode().item()]
    return model, step


def time_sequence_prediction(lib, compile=_plain, hidden=12, length=12, future=6):
    """``time_sequence_prediction/{generate_sine_wave,train}.py``: two ``LSTMCell``s and a Linear
    stepped over ``input.split(1, dim=1)`` then ``future`` steps fed their own output, in double;
    the compiled model trains by ``LBFGS(lr=0.8)`` with a closure (``zero_grad``, MSELoss,
    ``backward``), then predicts under ``no_grad``. The step returns the closure's losses and the
    test loss."""
    nn = lib.nn

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1, self.lstm2 = nn.LSTMCell(1, hidden), nn.LSTMCell(hidden, hidden)
            self.linear = nn.Linear(hidden, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = lib.zeros(input.size(0), hidden, dtype=lib.double)
            c_t = lib.zeros(input.size(0), hidden, dtype=lib.double)
            h_t2 = lib.zeros(input.size(0), hidden, dtype=lib.double)
            c_t2 = lib.zeros(input.size(0), hidden, dtype=lib.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            return lib.cat(outputs, dim=1)

    rng = np.random.RandomState(2)  # generate_sine_wave.py: shifted sines, period 20
    x = np.arange(length + 1) + rng.randint(-4 * 20, 4 * 20, 6).reshape(6, 1)
    data = np.sin(x / 1.0 / 20).astype("float64")
    input, target = lib.from_numpy(data[3:, :-1]), lib.from_numpy(data[3:, 1:])
    test_input, test_target = lib.from_numpy(data[:3, :-1]), lib.from_numpy(data[:3, 1:])
    lib.manual_seed(0)
    seq = Sequence()
    seq.double()
    net = compile(seq)
    criterion = nn.MSELoss()
    optimizer = lib.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=4)

    def step():
        losses = []

        def closure():
            optimizer.zero_grad()
            loss = criterion(net(input), target)
            losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with lib.no_grad():
            pred = net(test_input, future=future)
            losses.append(criterion(pred[:, :-future], test_target).item())
        return losses
    return seq, step


PROGRAMS = {"word_lm_lstm": lambda lib, compile=_plain: word_language_model(lib, "LSTM", compile),
            "word_lm_transformer": lambda lib, compile=_plain: word_language_model(lib, "Transformer", compile),
            "vae": vae, "actor_critic": actor_critic, "time_sequence": time_sequence_prediction}
