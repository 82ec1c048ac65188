"""More public PyTorch programs, condensed (own code, faithful to each program's structure; the
source named per factory: pytorch/examples' gcn, language_translation and mnist, and the PyTorch
tutorials' seq2seq translation and spatial transformer), written for ``lib`` (``torch`` or
``ember``): the programs ``test_real_programs_32.py`` compiles and
``benchmarks/bench_real_programs_32.py`` times. Each factory takes ``compile`` (applied where a
user would add ``torch.compile``) and returns ``(model, step)``: ``step()`` runs one iteration of
the program's loop on seeded synthetic data and returns the numbers it logs. Narrowed widths and
data so that a step takes milliseconds."""
import math

import numpy as np

from real_programs_31 import _epoch


def _plain(fn):
    return fn


def _summed_nll(F):
    """The test loops' summed loss: ``F.nll_loss(output, target, reduction='sum')``."""
    return lambda out, t: F.nll_loss(out, t, reduction="sum")


def _graph(lib, nodes, features, classes, seed=0):
    """``gcn/main.py``'s ``load_cora`` on a seeded random graph: binary features row-normalised by a
    sparse diagonal, the adjacency a ``sparse_coo_tensor`` (int64) plus ``eye``, renormalised as
    ``D^-1/2 A D^-1/2`` by sparse diagonals; features and adjacency returned ``to_sparse()``."""
    rng = np.random.default_rng(seed)
    content = (rng.random((nodes, features)) < 0.3).astype(np.int32)
    content[0] = 0  # a node without features: 1 / 0 = inf, set to 0 as the program does
    edges = rng.integers(0, nodes, (3 * nodes, 2)).astype(np.int32)
    features = lib.FloatTensor(content)
    scale_vector = 1 / lib.sum(features, dim=1)
    scale_vector[scale_vector == float('inf')] = 0
    features = lib.diag(scale_vector).to_sparse() @ features
    labels = lib.LongTensor(rng.integers(0, classes, nodes))
    adj_mat = lib.sparse_coo_tensor(edges.T, lib.ones(len(edges)), (nodes, nodes), dtype=lib.int64)
    adj_mat = lib.eye(nodes) + adj_mat
    degree_mat = lib.sqrt(1 / lib.sum(adj_mat, dim=1))
    degree_mat[degree_mat == float('inf')] = 0
    degree_mat = lib.diag(degree_mat).to_sparse()
    adj_mat = degree_mat @ adj_mat @ degree_mat
    return features.to_sparse(), labels, adj_mat.to_sparse()


def gcn(lib, compile=_plain, nodes=24, features=12, hidden=8, classes=3):
    """``gcn/main.py``: two ``GraphConv`` layers (``mm`` of the sparse features, ``spmm`` of the
    sparse adjacency, a bias), ReLU, dropout(0.5), ``log_softmax``; Adam(lr=0.01,
    weight_decay=5e-4), ``NLLLoss`` on the masked rows; ``train_iter`` (train, then ``test`` under
    ``no_grad`` on the train and validation masks: ``loss.item()``, ``acc.item()`` of
    ``(argmax == target).float().sum() / len(target)``) compiled whole."""
    nn, F = lib.nn, lib.nn.functional

    class GraphConv(nn.Module):
        def __init__(self, input_dim, output_dim, use_bias=False):
            super().__init__()
            self.kernel = nn.Parameter(lib.Tensor(input_dim, output_dim))
            nn.init.xavier_normal_(self.kernel)
            self.bias = None
            if use_bias:
                self.bias = nn.Parameter(lib.Tensor(output_dim))
                nn.init.zeros_(self.bias)

        def forward(self, input_tensor, adj_mat):
            support = lib.mm(input_tensor, self.kernel)
            output = lib.spmm(adj_mat, support)
            if self.bias is not None:
                output = output + self.bias
            return output

    class GCN(nn.Module):
        def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
            super().__init__()
            self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
            self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input_tensor, adj_mat):
            x = self.gc1(input_tensor, adj_mat)
            x = F.relu(x)
            x = self.dropout(x)
            x = self.gc2(x, adj_mat)
            return F.log_softmax(x, dim=1)

    lib.manual_seed(42)
    features, labels, adj_mat = _graph(lib, nodes, features, classes)
    idx = lib.randperm(len(labels))
    idx_val, idx_train = idx[:nodes // 3], idx[nodes // 3:]
    model = GCN(features.shape[1], hidden, classes, True, 0.5)
    optimizer = lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    criterion = nn.NLLLoss()

    def test(model, criterion, input, target, mask):
        model.eval()
        with lib.no_grad():
            output = model(*input)
            output, target = output[mask], target[mask]
            loss = criterion(output, target)
            acc = (output.argmax(dim=1) == target).float().sum() / len(target)
        return loss.item(), acc.item()

    @compile
    def train_iter(model, optimizer, criterion, input, target, mask_train, mask_val):
        model.train()
        optimizer.zero_grad()
        output = model(*input)
        loss = criterion(output[mask_train], target[mask_train])
        loss.backward()
        optimizer.step()
        return [*test(model, criterion, input, target, mask_train), *test(model, criterion, input, target, mask_val)]

    return model, lambda: train_iter(model, optimizer, criterion, (features, adj_mat), labels, idx_train, idx_val)


PAD, BOS, EOS = 1, 2, 3


def _sentences(rng, count, vocab, longest):
    """``count`` token sentences ``<bos> w... <eos>`` of random lengths, padded to the longest
    (``pad_sequence``'s ``(length, batch)`` layout)."""
    lengths = rng.integers(2, longest + 1, count)
    out = np.full((lengths.max() + 2, count), PAD, dtype=np.int64)
    for j, n in enumerate(lengths):
        out[:n + 2, j] = [BOS, *rng.integers(4, vocab, n), EOS]
    return out


def translation(lib, compile=_plain, emb=16, heads=2, ff=32, vocab=20, batch=4, longest=6, decode=6):
    """``language_translation``: ``Translator`` (two embeddings, sinusoidal ``PositionalEncoding``
    buffer, ``nn.Transformer`` of one encoder and one decoder layer, a vocabulary Linear, xavier
    init); ``train`` (``create_mask``: ``triu`` causal float mask with ``masked_fill``s, a bool
    zeros source mask, padding masks by ``(src == pad).transpose(0, 1)``; CrossEntropyLoss with
    ``ignore_index=pad``, Adam(betas=(0.9, 0.98), eps=1e-9)) over two batches of different
    lengths, ``validate`` under ``no_grad``, then ``greedy_decode`` of one sentence (a loop growing
    ``ys`` by ``cat``, ``next_word.item()``, ``break`` at ``<eos>``). The train step and the
    decode function are compiled; the step returns the losses and the decoded tokens."""
    nn = lib.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size, dropout, maxlen=64):
            super().__init__()
            den = lib.exp(- lib.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = lib.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = lib.zeros((maxlen, emb_size))
            pos_embedding[:, 0::2] = lib.sin(pos * den)
            pos_embedding[:, 1::2] = lib.cos(pos * den)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer('pos_embedding', pos_embedding.unsqueeze(-2))

        def forward(self, token_embedding):
            return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])

    class Translator(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embedding = nn.Embedding(vocab, emb)
            self.tgt_embedding = nn.Embedding(vocab, emb)
            self.pos_enc = PositionalEncoding(emb, 0.1)
            self.transformer = nn.Transformer(d_model=emb, nhead=heads, num_encoder_layers=1,
                                              num_decoder_layers=1, dim_feedforward=ff, dropout=0.1)
            self.ff = nn.Linear(emb, vocab)
            for p in self.parameters():
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)

        def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, memory_key_padding_mask):
            src_emb = self.pos_enc(self.src_embedding(src))
            tgt_emb = self.pos_enc(self.tgt_embedding(trg))
            outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None, src_padding_mask,
                                    tgt_padding_mask, memory_key_padding_mask)
            return self.ff(outs)

        def encode(self, src, src_mask):
            return self.transformer.encoder(self.pos_enc(self.src_embedding(src)), src_mask)

        def decode(self, tgt, memory, tgt_mask):
            return self.transformer.decoder(self.pos_enc(self.tgt_embedding(tgt)), memory, tgt_mask)

    def generate_square_subsequent_mask(size):
        mask = (lib.triu(lib.ones((size, size))) == 1).transpose(0, 1)
        return mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))

    def create_mask(src, tgt, pad_idx):
        tgt_mask = generate_square_subsequent_mask(tgt.shape[0])
        src_mask = lib.zeros((src.shape[0], src.shape[0])).type(lib.bool)
        return src_mask, tgt_mask, (src == pad_idx).transpose(0, 1), (tgt == pad_idx).transpose(0, 1)

    lib.manual_seed(0)
    model = Translator()
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)
    optim = lib.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    rng = np.random.default_rng(0)
    batches = [(lib.tensor(_sentences(rng, batch, vocab, longest)), lib.tensor(_sentences(rng, batch, vocab, longest)))
               for _ in range(3)]
    sentence = lib.tensor(_sentences(rng, 1, vocab, longest))

    def loss_of(src, tgt):
        tgt_input = tgt[:-1, :]
        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input, PAD)
        logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, src_padding_mask)
        return logits, loss_fn(logits.reshape(-1, logits.shape[-1]), tgt[1:, :].reshape(-1))

    @compile
    def train_step(src, tgt):
        logits, loss = loss_of(src, tgt)
        optim.zero_grad()
        loss.backward()
        optim.step()
        return loss.item()

    @compile
    def greedy_decode(src, src_mask, max_len, start_symbol, end_symbol):
        memory = model.encode(src, src_mask)
        ys = lib.ones(1, 1).fill_(start_symbol).type(lib.long)
        for _ in range(max_len - 1):
            tgt_mask = generate_square_subsequent_mask(ys.size(0)).type(lib.bool)
            out = model.decode(ys, memory, tgt_mask).transpose(0, 1)
            prob = model.ff(out[:, -1])
            _, next_word = lib.max(prob, dim=1)
            next_word = next_word.item()
            ys = lib.cat([ys, lib.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
            if next_word == end_symbol:
                break
        return ys

    def step():
        model.train()
        log = [train_step(src, tgt) for src, tgt in batches[:2]]
        model.eval()
        with lib.no_grad():
            log.append(loss_of(*batches[2])[1].item())
            n = sentence.shape[0]
            ys = greedy_decode(sentence, lib.zeros(n, n).type(lib.bool), decode, BOS, EOS)
        return log + ys.flatten().tolist()
    return model, step


def mnist(lib, compile=_plain, image=12, batch=8):
    """``mnist/main.py``: two 3x3 convolutions, ReLU, ``max_pool2d``, dropout, ``flatten``, two
    Linears, ``log_softmax``; Adadelta(lr=1.0), ``StepLR(step_size=1, gamma=0.7)``, NLL loss; its
    ``train`` and ``test`` loops over the compiled model (``torch.compile(model)``)."""
    nn, F = lib.nn, lib.nn.functional
    flat = 16 * ((image - 4) // 2) ** 2

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 8, 3, 1), nn.Conv2d(8, 16, 3, 1)
            self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
            self.fc1, self.fc2 = nn.Linear(flat, 32), nn.Linear(32, 10)

        def forward(self, x):
            x = F.relu(self.conv2(F.relu(self.conv1(x))))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(lib.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)

    lib.manual_seed(1)
    model = Net()
    net = compile(model)
    optimizer = lib.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    images, targets = lib.randn(3, batch, 1, image, image), lib.randint(0, 10, (3, batch))
    return model, lambda: _epoch(lib, model, net, optimizer, scheduler, [(images[i], targets[i]) for i in range(2)],
                                 (images[2], targets[2]), F.nll_loss, _summed_nll(F),
                                 lambda out: out.argmax(dim=1, keepdim=True))


SOS, EOS_TOKEN = 0, 1


def seq2seq(lib, compile=_plain, words=12, hidden=16, batch=4, max_length=6):
    """The PyTorch tutorial "NLP From Scratch: Translation with a Sequence to Sequence Network and
    Attention" (``intermediate_source/seq2seq_translation_tutorial.py``): a batch-first GRU encoder
    over dropped-out embeddings, a decoder with Bahdanau attention (``tanh(Wa q + Ua k)``,
    ``squeeze(2).unsqueeze(1)``, softmax, ``bmm``) feeding ``cat((embedded, context), 2)`` to its
    GRU step by step for ``MAX_LENGTH`` steps (teacher forcing from ``target_tensor[:, i]``, else
    ``topk(1)`` and ``squeeze(-1).detach()``); ``train_epoch`` (two Adams, NLLLoss over the
    zero-padded targets, ``total_loss += loss.item()``) compiled whole, then ``evaluate`` of one
    sentence under ``no_grad`` (``topk``, ``idx.item()`` per word until ``EOS``)."""
    nn, F = lib.nn, lib.nn.functional

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super().__init__()
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            return self.gru(self.dropout(self.embedding(input)))

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super().__init__()
            self.Wa, self.Ua = nn.Linear(hidden_size, hidden_size), nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(lib.tanh(self.Wa(query) + self.Ua(keys)))
            weights = F.softmax(scores.squeeze(2).unsqueeze(1), dim=-1)
            return lib.bmm(weights, keys), weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super().__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            decoder_input = lib.empty(encoder_outputs.size(0), 1, dtype=lib.long).fill_(SOS)
            decoder_hidden, decoder_outputs, attentions = encoder_hidden, [], []
            for i in range(max_length):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(decoder_input, decoder_hidden,
                                                                                 encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = F.log_softmax(lib.cat(decoder_outputs, dim=1), dim=-1)
            return decoder_outputs, decoder_hidden, lib.cat(attentions, dim=1)

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            context, attn_weights = self.attention(hidden.permute(1, 0, 2), encoder_outputs)
            output, hidden = self.gru(lib.cat((embedded, context), dim=2), hidden)
            return self.out(output), hidden, attn_weights

    lib.manual_seed(0)
    encoder, decoder = EncoderRNN(words, hidden), AttnDecoderRNN(hidden, words)
    encoder_optimizer = lib.optim.Adam(encoder.parameters(), lr=0.001)
    decoder_optimizer = lib.optim.Adam(decoder.parameters(), lr=0.001)
    criterion = nn.NLLLoss()
    rng = np.random.default_rng(0)

    def pairs():
        ids = np.zeros((2, batch, max_length), dtype=np.int64)  # (zero-padded after EOS, as the tutorial)
        for pair in ids:
            for row in pair:
                n = rng.integers(2, max_length)
                row[:n], row[n] = rng.integers(2, words, n), EOS_TOKEN
        return lib.tensor(ids[0]), lib.tensor(ids[1])
    dataloader = [pairs() for _ in range(2)]

    @compile
    def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
        total_loss = 0
        for input_tensor, target_tensor in dataloader:
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
            loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
        return total_loss / len(dataloader)

    def evaluate(input_tensor):
        with lib.no_grad():
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
            _, topi = decoder_outputs.topk(1)
            decoded_ids = []
            for idx in topi.squeeze():
                decoded_ids.append(idx.item())
                if idx.item() == EOS_TOKEN:
                    break
        return decoded_ids, decoder_attn

    def step():
        encoder.train()
        decoder.train()
        log = [train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion)]
        encoder.eval()
        decoder.eval()
        ids, attn = evaluate(dataloader[0][0][:1])
        return log + ids + attn.flatten().tolist()
    return decoder, step


def spatial_transformer(lib, compile=_plain, batch=4):
    """The PyTorch tutorial "Spatial Transformer Networks" (``intermediate_source/
    spatial_transformer_tutorial.py``): a localization network (conv, max-pool, ReLU) regressing
    ``theta`` from a Linear initialised to the identity (``weight.data.zero_()``,
    ``bias.data.copy_``), ``affine_grid`` and ``grid_sample`` of the 28x28 input, then the
    classifier (``Dropout2d``, ``F.dropout(training=self.training)``); SGD(lr=0.01), NLL loss;
    ``torch.compile(model)`` in the tutorial's ``train``/``test`` loops."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 10, kernel_size=5), nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1, self.fc2 = nn.Linear(320, 50), nn.Linear(50, 10)
            self.localization = nn.Sequential(nn.Conv2d(1, 8, kernel_size=7), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                                              nn.Conv2d(8, 10, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
            self.fc_loc = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(True), nn.Linear(32, 3 * 2))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(lib.tensor([1, 0, 0, 0, 1, 0], dtype=lib.float))

        def stn(self, x):
            xs = self.localization(x).view(-1, 10 * 3 * 3)
            theta = self.fc_loc(xs).view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size())
            return F.grid_sample(x, grid)

        def forward(self, x):
            x = self.stn(x)
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = F.relu(self.fc1(x.view(-1, 320)))
            x = F.dropout(x, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1)

    lib.manual_seed(0)
    model = Net()
    net = compile(model)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=1.0)  # (the tutorial has none)
    images, targets = lib.randn(3, batch, 1, 28, 28), lib.randint(0, 10, (3, batch))
    return model, lambda: _epoch(lib, model, net, optimizer, scheduler, [(images[i], targets[i]) for i in range(2)],
                                 (images[2], targets[2]), F.nll_loss, _summed_nll(F),
                                 lambda out: out.max(1, keepdim=True)[1])


def style_transfer(lib, compile=_plain, image=12, width=6, steps_per_call=4):
    """The PyTorch tutorial "Neural Transfer Using PyTorch" (``advanced_source/
    neural_style_tutorial.py``): ``ContentLoss``/``StyleLoss`` modules that set ``self.loss``
    (``mse_loss``, of Gram matrices by ``mm(features, features.t()).div``) as they pass their input
    on, inserted into a copy of a frozen CNN (``requires_grad_(False)``, eval) behind a
    ``Normalization`` module, the Sequential cut after the last loss (``model[:(i + 1)]``); LBFGS over
    the input image, whose ``closure`` (``input_img.clamp_(0, 1)`` under ``no_grad``, the weighted
    sums of the modules' ``.loss``, ``backward``, ``run[0] += 1``) is compiled. A random 4-conv CNN
    stands in for the pretrained VGG19; one ``optimizer.step(closure)`` an iteration."""
    nn, F = lib.nn, lib.nn.functional

    class ContentLoss(nn.Module):
        def __init__(self, target):
            super().__init__()
            self.target = target.detach()

        def forward(self, input):
            self.loss = F.mse_loss(input, self.target)
            return input

    def gram_matrix(input):
        a, b, c, d = input.size()
        features = input.view(a * b, c * d)
        return lib.mm(features, features.t()).div(a * b * c * d)

    class StyleLoss(nn.Module):
        def __init__(self, target_feature):
            super().__init__()
            self.target = gram_matrix(target_feature).detach()

        def forward(self, input):
            self.loss = F.mse_loss(gram_matrix(input), self.target)
            return input

    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super().__init__()
            self.mean, self.std = lib.tensor(mean).view(-1, 1, 1), lib.tensor(std).view(-1, 1, 1)

        def forward(self, img):
            return (img - self.mean) / self.std

    def get_style_model_and_losses(cnn, mean, std, style_img, content_img, content_layers=("conv_4",),
                                   style_layers=("conv_1", "conv_2", "conv_3", "conv_4")):
        content_losses, style_losses = [], []
        model, i = nn.Sequential(Normalization(mean, std)), 0
        for layer in cnn.children():
            if isinstance(layer, nn.Conv2d):
                i += 1
                name = f"conv_{i}"
            elif isinstance(layer, nn.ReLU):
                name, layer = f"relu_{i}", nn.ReLU(inplace=False)
            else:
                name = f"pool_{i}"
            model.add_module(name, layer)
            if name in content_layers:
                content_loss = ContentLoss(model(content_img).detach())
                model.add_module(f"content_loss_{i}", content_loss)
                content_losses.append(content_loss)
            if name in style_layers:
                style_loss = StyleLoss(model(style_img).detach())
                model.add_module(f"style_loss_{i}", style_loss)
                style_losses.append(style_loss)
        for i in range(len(model) - 1, -1, -1):
            if isinstance(model[i], (ContentLoss, StyleLoss)):
                break
        return model[:(i + 1)], style_losses, content_losses

    lib.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(width, width, 3, padding=1),
                        nn.ReLU(inplace=True), nn.MaxPool2d(2, 2), nn.Conv2d(width, 2 * width, 3, padding=1),
                        nn.ReLU(inplace=True), nn.Conv2d(2 * width, 2 * width, 3, padding=1),
                        nn.ReLU(inplace=True)).eval()
    style_img, content_img = lib.rand(1, 3, image, image), lib.rand(1, 3, image, image)
    input_img = content_img.clone()
    model, style_losses, content_losses = get_style_model_and_losses(
        cnn, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225], style_img, content_img)
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = lib.optim.LBFGS([input_img], max_iter=steps_per_call)
    run, style_weight, content_weight = [0], 1000000, 1

    @compile
    def closure():
        with lib.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        model(input_img)
        style_score = 0
        content_score = 0
        for sl in style_losses:
            style_score += sl.loss
        for cl in content_losses:
            content_score += cl.loss
        style_score *= style_weight
        content_score *= content_weight
        loss = style_score + content_score
        loss.backward()
        run[0] += 1
        return style_score + content_score

    def step():
        loss = optimizer.step(closure)
        return [loss.item(), run[0], style_losses[0].loss.item(), content_losses[0].loss.item()]
    return model, lambda: step() + input_img.detach().flatten().tolist()


PROGRAMS = {"gcn": gcn, "translation": translation, "mnist": mnist, "seq2seq": seq2seq,
            "spatial_transformer": spatial_transformer, "style_transfer": style_transfer}
