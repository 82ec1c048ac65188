"""Stand-ins for the beginner pages of pytorch/tutorials not covered elsewhere, written here in
our own words with the same calls, arguments and idioms, run under torch 2.13 and under ember
from the same seed: they print the same text and numbers (float32 roundoff allowed).

- "Learn the Basics": tensors (``rand_like(dtype=)``, ``matmul(out=)``, the NumPy bridge
  sharing memory both ways), autograd (``binary_cross_entropy_with_logits``, ``grad_fn``
  printed, ``backward(retain_graph=True)`` accumulating), quickstart and build-model
  (``torch.accelerator``, ``nn.Flatten``, training and test loops, ``save``/``load`` of a
  state_dict with ``weights_only=True``), save and load (a whole model refused by the default
  ``weights_only`` loader, as torch), the transforms page's one-hot target
  ``zeros(10).scatter_(0, tensor(y), value=1)`` (ember raised IndexError: fixed).
- "Learning PyTorch with Examples": the six polynomial programs (tensors, autograd, a custom
  ``autograd.Function``, ``nn``, ``optim.RMSprop``, a custom ``nn.Module``).
- NLP tutorials: the introduction, the bag-of-words classifier (``LongTensor``), n-gram word
  embeddings, the LSTM part-of-speech tagger (its output prints ``MkldnnRnnLayerBackward0``:
  fixed); the blitz "Neural Networks" page (walking ``loss.grad_fn.next_functions``).
- Writing custom datasets: face landmarks read from a CSV by pandas (a generated CSV of the same
  columns, images as ``.npy``), dict samples, ``DataLoader(num_workers=2)`` collating dicts.
- Adversarial examples (FGSM): a LeNet trained, saved and loaded with ``map_location``, then
  attacked one image at a time through ``data.grad.data.sign()``.
- Transfer learning (its training loop on a small network: torchvision's pretrained ResNet-18
  is a download) and the chatbot tutorial's batching, masked loss and greedy decoder.
- Language modelling with ``nn.TransformerEncoder``: positional encoding as a buffer,
  ``batchify``, ``StepLR``, ``clip_grad_norm_``, the best model's state_dict saved to a
  temporary directory and loaded back.

The data are the bundled digits (``vision_stand_in``) and small generated texts.
"""
import contextlib
import copy
import csv
import io
import itertools
import math
import os
import random
import re
import tempfile
import types

import numpy as np
import pytest
import torch

import ember
from examples_harness import assert_same_output
from vision_stand_in import digits_images


def stand_in_pandas():
    """pandas (not installed here) as far as the tutorial uses it: ``read_csv`` gives a frame
    with ``len`` and ``iloc[row, column or slice]``, the cells as read (strings)."""
    class Frame:
        def __init__(self, rows):
            self.rows = rows
            self.iloc = self

        def __len__(self):
            return len(self.rows)

        def __getitem__(self, key):
            row, column = key
            cells = self.rows[row][column]
            return np.array(cells, dtype=object) if isinstance(column, slice) else cells

    def read_csv(path):
        with open(path, newline="") as f:
            return Frame(list(csv.reader(f))[1:])
    return types.SimpleNamespace(read_csv=read_csv)


def run(program, lib):
    """What ``program(lib)`` prints, from seed 0 (Python's and NumPy's generators too)."""
    lib.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        program(lib)
    return re.sub(r"0x[0-9a-f]+", "0x", out.getvalue())  # (addresses of grad_fn objects)


def assert_same(program, rtol=1e-4, atol=1e-5):
    assert_same_output(run(program, ember), run(program, torch), rtol=rtol, atol=atol)


def tensors(torch):
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    x_np = torch.from_numpy(np.array(data))
    print(f"Ones Tensor: \n {torch.ones_like(x_data)} \n")
    print(f"Random Tensor: \n {torch.rand_like(x_data, dtype=torch.float)} \n")
    shape = (2, 3,)
    print(f"Random Tensor: \n {torch.rand(shape)} \n")
    print(f"Ones Tensor: \n {torch.ones(shape)} \n")
    print(f"Zeros Tensor: \n {torch.zeros(shape)}")
    tensor = torch.rand(3, 4)
    print(f"Shape of tensor: {tensor.shape}")
    print(f"Datatype of tensor: {tensor.dtype}")
    print(f"Device tensor is stored on: {tensor.device}")
    if torch.cuda.is_available() & (torch.device('cuda').index is not None):
        tensor = tensor.to('cuda')
    print(torch.device('cuda'), torch.device('cuda').index, torch.device('cuda:1'), repr(torch.device('cpu')))
    tensor = torch.ones(4, 4)
    print('First row: ', tensor[0])
    print('First column: ', tensor[:, 0])
    print('Last column:', tensor[..., -1])
    tensor[:, 1] = 0
    print(tensor)
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    print(t1)
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(tensor)
    torch.matmul(tensor, tensor.T, out=y3)
    z1 = tensor * tensor
    z2 = tensor.mul(tensor)
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    print(y1, y2, y3, z1, z2, z3)
    agg = tensor.sum()
    agg_item = agg.item()
    print(agg_item, type(agg_item))
    print(tensor, "\n")
    tensor.add_(5)
    print(tensor)
    t = torch.ones(5)
    print(f"t: {t}")
    n = t.numpy()
    print(f"n: {n}")
    t.add_(1)
    print(f"t: {t}")
    print(f"n: {n}")
    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    print(f"t: {t}")
    print(f"n: {n}")
    print(x_np, x_data.T, torch.stack([x_data, x_data]), tensor.T.shape)


def autograd(torch):
    x = torch.ones(5)
    y = torch.zeros(3)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    print(f"Gradient function for z = {z.grad_fn}")
    print(f"Gradient function for loss = {loss.grad_fn}")
    loss.backward()
    print(w.grad)
    print(b.grad)
    z = torch.matmul(x, w) + b
    print(z.requires_grad)
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    print(z.requires_grad)
    z_det = torch.matmul(x, w).add(b).detach()
    print(z_det.requires_grad)
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"First call\n{inp.grad}")
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nSecond call\n{inp.grad}")
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nCall after zeroing gradients\n{inp.grad}")
    print(out, out.grad_fn, loss)


def nlp_intro(torch):
    V = torch.tensor([1., 2., 3.]); print(V)
    M = torch.tensor([[1., 2., 3.], [4., 5., 6]]); print(M)
    T = torch.tensor([[[1., 2.], [3., 4.]], [[5., 6.], [7., 8.]]]); print(T)
    print(V[0], V[0].item(), M[0], T[0])
    x = torch.randn((3, 4, 5)); print(x)
    x = torch.tensor([1., 2., 3.]); y = torch.tensor([4., 5., 6.]); z = x + y; print(z)
    x_1 = torch.randn(2, 5); y_1 = torch.randn(3, 5); print(torch.cat([x_1, y_1]))
    x_2 = torch.randn(2, 3); y_2 = torch.randn(2, 5); print(torch.cat([x_2, y_2], 1))
    x = torch.randn(2, 3, 4); print(x); print(x.view(2, 12)); print(x.view(2, -1))
    x = torch.tensor([1., 2., 3], requires_grad=True)
    y = torch.tensor([4., 5., 6], requires_grad=True)
    z = x + y; print(z); print(z.grad_fn)
    s = z.sum(); print(s); print(s.grad_fn)
    s.backward(); print(x.grad)
    x = torch.randn(2, 2); y = torch.randn(2, 2)
    print(x.requires_grad, y.requires_grad)
    z = x + y; print(z.grad_fn)
    x = x.requires_grad_(); y = y.requires_grad_()
    z = x + y; print(z.grad_fn); print(z.requires_grad)
    new_z = z.detach(); print(new_z.grad_fn)
    print(x.requires_grad); print((x ** 2).requires_grad)
    with torch.no_grad():
        print((x ** 2).requires_grad)
    lin = torch.nn.Linear(5, 3)
    data = torch.randn(2, 5); print(lin(data))
    data = torch.randn(2, 2); print(data); print(torch.nn.functional.relu(data))
    data = torch.randn(5); print(data); print(torch.nn.functional.softmax(data, dim=0))
    print(torch.nn.functional.softmax(data, dim=0).sum()); print(torch.nn.functional.log_softmax(data, dim=0))


def polynomial_tensor(torch):
    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.randn((), device=device, dtype=dtype)
    b = torch.randn((), device=device, dtype=dtype)
    c = torch.randn((), device=device, dtype=dtype)
    d = torch.randn((), device=device, dtype=dtype)
    learning_rate = 1e-6
    for t in range(600):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        if t % 100 == 99:
            print(t, loss)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')


def polynomial_autograd(torch):
    dtype = torch.float
    torch.set_default_device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    a = torch.randn((), dtype=dtype, requires_grad=True)
    b = torch.randn((), dtype=dtype, requires_grad=True)
    c = torch.randn((), dtype=dtype, requires_grad=True)
    d = torch.randn((), dtype=dtype, requires_grad=True)
    learning_rate = 1e-6
    for t in range(600):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')


def polynomial_custom_function(torch):
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)
    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    for t in range(600):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
    print(y_pred.grad_fn)


def polynomial_nn(torch):
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    loss_fn = torch.nn.MSELoss(reduction='sum')
    learning_rate = 1e-6
    for t in range(600):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    linear_layer = model[0]
    print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
    print(xx.dtype, model)


def polynomial_optim(torch):
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    loss_fn = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    for t in range(600):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    linear_layer = model[0]
    print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
    print(optimizer)


def polynomial_module(torch):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))
        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        def string(self):
            return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = Polynomial3()
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    for t in range(600):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f'Result: {model.string()}')
    print(model, list(model.named_parameters())[0])


def bow_classifier(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    data = [("me gusta comer en la cafeteria".split(), "SPANISH"), ("Give it to me".split(), "ENGLISH"),
            ("No creo que sea una buena idea".split(), "SPANISH"), ("No it is not a good idea to get lost at sea".split(), "ENGLISH")]
    test_data = [("Yo creo que si".split(), "SPANISH"), ("it is lost on me".split(), "ENGLISH")]
    word_to_ix = {}
    for sent, _ in data + test_data:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    VOCAB_SIZE, NUM_LABELS = len(word_to_ix), 2
    class BoWClassifier(nn.Module):
        def __init__(self, num_labels, vocab_size):
            super(BoWClassifier, self).__init__()
            self.linear = nn.Linear(vocab_size, num_labels)
        def forward(self, bow_vec):
            return F.log_softmax(self.linear(bow_vec), dim=1)
    def make_bow_vector(sentence, word_to_ix):
        vec = torch.zeros(len(word_to_ix))
        for word in sentence:
            vec[word_to_ix[word]] += 1
        return vec.view(1, -1)
    def make_target(label, label_to_ix):
        return torch.LongTensor([label_to_ix[label]])
    model = BoWClassifier(NUM_LABELS, VOCAB_SIZE)
    for param in model.parameters():
        print(param)
    with torch.no_grad():
        sample = data[0]
        bow_vector = make_bow_vector(sample[0], word_to_ix)
        log_probs = model(bow_vector)
        print(log_probs)
    label_to_ix = {"SPANISH": 0, "ENGLISH": 1}
    with torch.no_grad():
        for instance, label in test_data:
            print(model(make_bow_vector(instance, word_to_ix)))
    print(next(model.parameters())[:, word_to_ix["creo"]])
    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(100):
        for instance, label in data:
            model.zero_grad()
            bow_vec = make_bow_vector(instance, word_to_ix)
            target = make_target(label, label_to_ix)
            log_probs = model(bow_vec)
            loss = loss_function(log_probs, target)
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        for instance, label in test_data:
            print(model(make_bow_vector(instance, word_to_ix)))
    print(next(model.parameters())[:, word_to_ix["creo"]])
    print(make_target("SPANISH", label_to_ix), torch.LongTensor(3).shape, torch.FloatTensor([1, 2]), torch.LongTensor([[1, 2]]).dtype)


def word_embeddings(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    word_to_ix = {"hello": 0, "world": 1}
    embeds = nn.Embedding(2, 5)
    lookup_tensor = torch.tensor([word_to_ix["hello"]], dtype=torch.long)
    print(embeds(lookup_tensor))
    CONTEXT_SIZE, EMBEDDING_DIM = 2, 10
    test_sentence = """When forty winters shall besiege thy brow, And dig deep trenches in thy beauty's field,
    Thy youth's proud livery so gazed on now, Will be a totter'd weed of small worth held""".split()
    ngrams = [([test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)], test_sentence[i]) for i in range(CONTEXT_SIZE, len(test_sentence))]
    print(ngrams[:3])
    vocab = set(test_sentence)
    word_to_ix = {word: i for i, word in enumerate(sorted(vocab))}
    class NGramLanguageModeler(nn.Module):
        def __init__(self, vocab_size, embedding_dim, context_size):
            super(NGramLanguageModeler, self).__init__()
            self.embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.linear1 = nn.Linear(context_size * embedding_dim, 128)
            self.linear2 = nn.Linear(128, vocab_size)
        def forward(self, inputs):
            embeds = self.embeddings(inputs).view((1, -1))
            out = F.relu(self.linear1(embeds))
            out = self.linear2(out)
            return F.log_softmax(out, dim=1)
    losses = []
    loss_function = nn.NLLLoss()
    model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
    optimizer = optim.SGD(model.parameters(), lr=0.001)
    for epoch in range(5):
        total_loss = 0
        for context, target in ngrams:
            context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
            model.zero_grad()
            log_probs = model(context_idxs)
            loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        losses.append(total_loss)
    print(losses)
    print(model.embeddings.weight[word_to_ix["beauty's"]])


def sequence_models(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    lstm = nn.LSTM(3, 3)
    inputs = [torch.randn(1, 3) for _ in range(5)]
    hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))
    for i in inputs:
        out, hidden = lstm(i.view(1, 1, -1), hidden)
    inputs = torch.cat(inputs).view(len(inputs), 1, -1)
    hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))
    out, hidden = lstm(inputs, hidden)
    print(out); print(hidden)
    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)
    training_data = [("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
                     ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])]
    word_to_ix = {}
    for sent, tags in training_data:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}
    class LSTMTagger(nn.Module):
        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super(LSTMTagger, self).__init__()
            self.hidden_dim = hidden_dim
            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)
        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            return F.log_softmax(tag_space, dim=1)
    model = LSTMTagger(6, 6, len(word_to_ix), len(tag_to_ix))
    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    with torch.no_grad():
        print(model(prepare_sequence(training_data[0][0], word_to_ix)))
    for epoch in range(60):
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = prepare_sequence(tags, tag_to_ix)
            loss = loss_function(model(sentence_in), targets)
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        print(model(prepare_sequence(training_data[0][0], word_to_ix)))


def blitz_nn(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)
        def forward(self, input):
            c1 = F.relu(self.conv1(input))
            s2 = F.max_pool2d(c1, (2, 2))
            c3 = F.relu(self.conv2(s2))
            s4 = F.max_pool2d(c3, 2)
            s4 = torch.flatten(s4, 1)
            f5 = F.relu(self.fc1(s4))
            f6 = F.relu(self.fc2(f5))
            return self.fc3(f6)
    net = Net(); print(net)
    params = list(net.parameters()); print(len(params)); print(params[0].size())
    input = torch.randn(1, 1, 32, 32)
    out = net(input); print(out)
    net.zero_grad(); out.backward(torch.randn(1, 10))
    output = net(input)
    target = torch.randn(10).view(1, -1)
    criterion = nn.MSELoss()
    loss = criterion(output, target); print(loss)
    print(loss.grad_fn)
    print(loss.grad_fn.next_functions[0][0])
    print(loss.grad_fn.next_functions[0][0].next_functions[0][0])
    net.zero_grad()
    print('conv1.bias.grad before backward'); print(net.conv1.bias.grad)
    loss.backward()
    print('conv1.bias.grad after backward'); print(net.conv1.bias.grad)
    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)
    optimizer = optim.SGD(net.parameters(), lr=0.01)
    optimizer.zero_grad()
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()
    print(net(input))
    # blitz autograd
    a = torch.tensor([2., 3.], requires_grad=True)
    b = torch.tensor([6., 4.], requires_grad=True)
    Q = 3 * a ** 3 - b ** 2
    external_grad = torch.tensor([1., 1.])
    Q.backward(gradient=external_grad)
    print(9 * a ** 2 == a.grad); print(-2 * b == b.grad)
    x = torch.rand(5, 5); y = torch.rand(5, 5); z = torch.rand((5, 5), requires_grad=True)
    a = x + y; print(f"Does `a` require gradients?: {a.requires_grad}")
    b = x + z; print(f"Does `b` require gradients?: {b.requires_grad}")
    # transforms tutorial target_transform
    lam = lambda y: torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)
    print(lam(3))
    # blitz tensor tutorial
    x_data = torch.tensor([[1, 2], [3, 4]])
    x_ones = torch.ones_like(x_data); print(f"Ones Tensor: \n {x_ones} \n")
    tensor = torch.ones(4, 4); tensor[:, 1] = 0
    print(f"tensor.mul(tensor) \n {tensor.mul(tensor)} \n"); print(f"tensor * tensor \n {tensor * tensor}")
    print(f"tensor.matmul(tensor.T) \n {tensor.matmul(tensor.T)} \n"); print(f"tensor @ tensor.T \n {tensor @ tensor.T}")
    print(tensor, "\n"); tensor.add_(5); print(tensor)


def data_loading(torch):
    pd = stand_in_pandas()
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader
    d = tempfile.mkdtemp()
    rng = np.random.default_rng(0)
    rows = []
    for i in range(8):
        h, w = 40 + 3 * i, 50 - 2 * i
        np.save(os.path.join(d, f"face{i}.npy"), rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
        rows.append([f"face{i}.npy"] + list(rng.integers(0, 30, 136)))
    with open(os.path.join(d, "face_landmarks.csv"), "w", newline="") as f:
        csv.writer(f).writerows([["image_name"] + [f"part_{k // 2}_{'xy'[k % 2]}" for k in range(136)]] + rows)

    class FaceLandmarksDataset(Dataset):
        def __init__(self, csv_file, root_dir, transform=None):
            self.landmarks_frame = pd.read_csv(csv_file)
            self.root_dir = root_dir
            self.transform = transform
        def __len__(self):
            return len(self.landmarks_frame)
        def __getitem__(self, idx):
            if torch.is_tensor(idx):
                idx = idx.tolist()
            img_name = os.path.join(self.root_dir, self.landmarks_frame.iloc[idx, 0])
            image = np.load(img_name)
            landmarks = self.landmarks_frame.iloc[idx, 1:]
            landmarks = np.array([landmarks])
            landmarks = landmarks.astype('float').reshape(-1, 2)
            sample = {'image': image, 'landmarks': landmarks}
            if self.transform:
                sample = self.transform(sample)
            return sample

    class RandomCrop(object):
        def __init__(self, output_size):
            self.output_size = (output_size, output_size)
        def __call__(self, sample):
            image, landmarks = sample['image'], sample['landmarks']
            h, w = image.shape[:2]
            new_h, new_w = self.output_size
            top = np.random.randint(0, h - new_h)
            left = np.random.randint(0, w - new_w)
            image = image[top: top + new_h, left: left + new_w]
            landmarks = landmarks - [left, top]
            return {'image': image, 'landmarks': landmarks}

    class ToTensor(object):
        def __call__(self, sample):
            image, landmarks = sample['image'], sample['landmarks']
            image = image.transpose((2, 0, 1))
            return {'image': torch.from_numpy(image), 'landmarks': torch.from_numpy(landmarks)}

    class Compose:
        def __init__(self, ts): self.ts = ts
        def __call__(self, s):
            for t in self.ts: s = t(s)
            return s
    np.random.seed(0)
    ds = FaceLandmarksDataset(os.path.join(d, "face_landmarks.csv"), d, transform=Compose([RandomCrop(24), ToTensor()]))
    for i in range(len(ds)):
        sample = ds[i]
        print(i, sample['image'].size(), sample['landmarks'].size())
        if i == 3:
            break
    print(ds[torch.tensor(2)]['landmarks'][:2])
    for nw in (0, 2):
        dataloader = DataLoader(ds, batch_size=3, shuffle=True, num_workers=nw, timeout=60 if nw else 0)
        for i_batch, sample_batched in enumerate(dataloader):
            print(i_batch, sample_batched['image'].size(), sample_batched['landmarks'].size(), sample_batched['image'].dtype, sample_batched['landmarks'].dtype)
            im = sample_batched['image']
            print(im.size(2), sample_batched['landmarks'][0, :, 0].numpy().shape)


def quickstart(torch):
    nn = torch.nn
    DataLoader = torch.utils.data.DataLoader
    class DS(torch.utils.data.Dataset):
        def __init__(self, train):
            self.x, self.y = digits_images(train, count=64)
        def __len__(self): return len(self.y)
        def __getitem__(self, i):
            return torch.tensor(self.x[i][None] / 255.0, dtype=torch.float32), int(self.y[i])
    training_data, test_data = DS(True), DS(False)
    batch_size = 16
    train_dataloader = DataLoader(training_data, batch_size=batch_size)
    test_dataloader = DataLoader(test_data, batch_size=batch_size)
    for X, y in test_dataloader:
        print(f"Shape of X [N, C, H, W]: {X.shape}")
        print(f"Shape of y: {y.shape} {y.dtype}")
        break
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    print(f"Using {device} device")
    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits
    model = NeuralNetwork().to(device)
    print(model)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    def train(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if batch % 2 == 0:
                loss, current = loss.item(), (batch + 1) * len(X)
                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")
    def test(dataloader, model, loss_fn):
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    for t in range(3):
        print(f"Epoch {t+1}\n-------------------------------")
        train(train_dataloader, model, loss_fn, optimizer)
        test(test_dataloader, model, loss_fn)
    d = tempfile.mkdtemp()
    torch.save(model.state_dict(), os.path.join(d, "model.pth"))
    model = NeuralNetwork().to(device)
    model.load_state_dict(torch.load(os.path.join(d, "model.pth"), weights_only=True))
    classes = [str(i) for i in range(10)]
    model.eval()
    x, y = test_data[0][0], test_data[0][1]
    with torch.no_grad():
        x = x.to(device)
        pred = model(x)
        predicted, actual = classes[pred[0].argmax(0)], classes[y]
        print(f'Predicted: "{predicted}", Actual: "{actual}"')
    # buildmodel page
    X = torch.rand(1, 28, 28, device=device)
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    print(f"Predicted class: {y_pred}")
    input_image = torch.rand(3, 28, 28)
    print(input_image.size())
    flat_image = nn.Flatten()(input_image)
    print(flat_image.size())
    layer1 = nn.Linear(in_features=28 * 28, out_features=20)
    hidden1 = layer1(flat_image)
    print(hidden1.size())
    print(f"Before ReLU: {hidden1}\n\n")
    hidden1 = nn.ReLU()(hidden1)
    print(f"After ReLU: {hidden1}")
    print(f"Model structure: {model}\n\n")
    for name, param in model.named_parameters():
        print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")


def saveload(torch):
    d = tempfile.mkdtemp()
    nn = torch.nn
    model = nn.Sequential(nn.Flatten(), nn.Linear(12, 5), nn.ReLU(), nn.Dropout(), nn.Linear(5, 2))
    torch.save(model.state_dict(), os.path.join(d, 'model_weights.pth'))
    model2 = nn.Sequential(nn.Flatten(), nn.Linear(12, 5), nn.ReLU(), nn.Dropout(), nn.Linear(5, 2))
    print(model2.load_state_dict(torch.load(os.path.join(d, 'model_weights.pth'))))
    print(model2.load_state_dict(torch.load(os.path.join(d, 'model_weights.pth'), weights_only=True)))
    print(model2.eval())
    torch.save(model2, os.path.join(d, 'model.pth'))
    try:
        m = torch.load(os.path.join(d, 'model.pth'))
        print("loaded", m)
    except Exception as e:
        print("whole-model load:", type(e).__name__, str(e)[:80])
    try:
        m = torch.load(os.path.join(d, 'model.pth'), weights_only=False)
        print("loaded", m)
    except Exception as e:
        print("whole-model load weights_only=False:", type(e).__name__, str(e)[:80])


def fgsm(torch):
    nn, F = torch.nn, torch.nn.functional
    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)
        def forward(self, x):
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 320)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)
    imgs, labels = digits_images(True, count=64)
    x = torch.tensor(imgs[:, None] / 255.0, dtype=torch.float32)
    y = torch.tensor(labels)
    m = Net()
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
    for epoch in range(8):
        for i in range(0, 64, 16):
            opt.zero_grad(); loss = F.nll_loss(m(x[i:i + 16]), y[i:i + 16]); loss.backward(); opt.step()
    print(loss.item())
    d = tempfile.mkdtemp()
    pretrained_model = os.path.join(d, "lenet_mnist_model.pth")
    torch.save(m.state_dict(), pretrained_model)
    test_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x[:24], y[:24]), batch_size=1, shuffle=True)
    print("CUDA Available: ", torch.cuda.is_available())
    device = torch.device("cuda" if (True and torch.cuda.is_available()) else "cpu")
    model = Net().to(device)
    print(model.load_state_dict(torch.load(pretrained_model, map_location='cpu')))
    print(model.load_state_dict(torch.load(pretrained_model, map_location=device, weights_only=True)))
    model.eval()
    def fgsm_attack(image, epsilon, data_grad):
        sign_data_grad = data_grad.sign()
        perturbed_image = image + epsilon * sign_data_grad
        perturbed_image = torch.clamp(perturbed_image, 0, 1)
        return perturbed_image
    def denorm(batch, mean=[0.1307], std=[0.3081]):
        if isinstance(mean, list):
            mean = torch.tensor(mean).to(device)
        if isinstance(std, list):
            std = torch.tensor(std).to(device)
        return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)
    def test(model, device, test_loader, epsilon):
        correct = 0
        adv_examples = []
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            data.requires_grad = True
            output = model(data)
            init_pred = output.max(1, keepdim=True)[1]
            if init_pred.item() != target.item():
                continue
            loss = F.nll_loss(output, target)
            model.zero_grad()
            loss.backward()
            data_grad = data.grad.data
            data_denorm = denorm(data)
            perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)
            output = model(perturbed_data)
            final_pred = output.max(1, keepdim=True)[1]
            if final_pred.item() == target.item():
                correct += 1
                if (epsilon == 0) and (len(adv_examples) < 5):
                    adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                    adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
            else:
                if len(adv_examples) < 5:
                    adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                    adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
        final_acc = correct / float(len(test_loader))
        print("Epsilon: {}\tTest Accuracy = {} / {} = {}".format(epsilon, correct, len(test_loader), final_acc))
        return final_acc, adv_examples
    for eps in [0, .05, .1, .3]:
        acc, ex = test(model, device, test_loader, eps)
        print([(a, b, e.shape, e.dtype) for a, b, e in ex][:2])


def transformer_lm(torch):
    nn, Tensor = torch.nn, torch.Tensor
    TransformerEncoder, TransformerEncoderLayer = torch.nn.TransformerEncoder, torch.nn.TransformerEncoderLayer
    class PositionalEncoding(nn.Module):
        def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer('pe', pe)
        def forward(self, x: Tensor) -> Tensor:
            x = x + self.pe[:x.size(0)]
            return self.dropout(x)
    class TransformerModel(nn.Module):
        def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
            super().__init__()
            self.model_type = 'Transformer'
            self.pos_encoder = PositionalEncoding(d_model, dropout)
            encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
            self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)
            self.init_weights()
        def init_weights(self) -> None:
            initrange = 0.1
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.linear.bias.data.zero_()
            self.linear.weight.data.uniform_(-initrange, initrange)
        def forward(self, src, src_mask=None):
            src = self.embedding(src) * math.sqrt(self.d_model)
            src = self.pos_encoder(src)
            output = self.transformer_encoder(src, src_mask)
            return self.linear(output)
    words = [f"w{(i * 7 + i // 5) % 17}" for i in range(900)]
    lines = [" ".join(words[i:i + 9]) for i in range(0, 900, 9)] + [""]
    vocab = {w: i for i, w in enumerate(["<unk>"] + sorted(set(words)))}
    def data_process(raw):
        data = [torch.tensor([vocab.get(t, 0) for t in item.split()], dtype=torch.long) for item in raw]
        return torch.cat(tuple(filter(lambda t: t.numel() > 0, data)))
    train_data, val_data, test_data = data_process(lines[:70]), data_process(lines[70:85]), data_process(lines[85:])
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    def batchify(data, bsz):
        seq_len = data.size(0) // bsz
        data = data[:seq_len * bsz]
        data = data.view(bsz, seq_len).t().contiguous()
        return data.to(device)
    train_data = batchify(train_data, 8)
    val_data = batchify(val_data, 4)
    test_data = batchify(test_data, 4)
    bptt = 12
    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].reshape(-1)
        return data, target
    ntokens = len(vocab)
    model = TransformerModel(ntokens, 16, 2, 16, 2, 0.2).to(device)
    criterion = nn.CrossEntropyLoss()
    lr = 5.0
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    def train(model):
        model.train()
        total_loss = 0.
        log_interval = 2
        num_batches = len(train_data) // bptt
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            output = model(data)
            output_flat = output.view(-1, ntokens)
            loss = criterion(output_flat, targets)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            total_loss += loss.item()
            if batch % log_interval == 0 and batch > 0:
                lr = scheduler.get_last_lr()[0]
                cur_loss = total_loss / log_interval
                ppl = math.exp(cur_loss)
                print(f'| epoch {epoch:3d} | {batch:5d}/{num_batches:5d} batches | lr {lr:02.2f} | loss {cur_loss:5.2f} | ppl {ppl:8.2f}')
                total_loss = 0
    def evaluate(model, eval_data):
        model.eval()
        total_loss = 0.
        with torch.no_grad():
            for i in range(0, eval_data.size(0) - 1, bptt):
                data, targets = get_batch(eval_data, i)
                seq_len = data.size(0)
                output = model(data)
                output_flat = output.view(-1, ntokens)
                total_loss += seq_len * criterion(output_flat, targets).item()
        return total_loss / (len(eval_data) - 1)
    best_val_loss = float('inf')
    with tempfile.TemporaryDirectory() as tempdir:
        best_model_params_path = os.path.join(tempdir, "best_model_params.pt")
        for epoch in range(1, 3):
            train(model)
            val_loss = evaluate(model, val_data)
            print(f'| end of epoch {epoch:3d} | valid loss {val_loss:5.2f} | valid ppl {math.exp(val_loss):8.2f}')
            if val_loss < best_val_loss:
                best_val_loss = val_loss
                torch.save(model.state_dict(), best_model_params_path)
            scheduler.step()
        model.load_state_dict(torch.load(best_model_params_path))
    test_loss = evaluate(model, test_data)
    print(f'| End of training | test loss {test_loss:5.2f} | test ppl {math.exp(test_loss):8.2f}')
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    print(mask)
    print(model(test_data[:5], mask).shape, model.transformer_encoder.layers[0])


def transfer_learning(torch):
    nn, optim, lr_scheduler = torch.nn, torch.optim, torch.optim.lr_scheduler
    x = torch.randn(24, 3, 8, 8); y = torch.randint(0, 2, (24,))
    ds = torch.utils.data.TensorDataset(x, y)
    dataloaders = {p: torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True) for p in ['train', 'val']}
    dataset_sizes = {p: len(ds) for p in ['train', 'val']}
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(4, 2))
    num_ftrs = model[4].in_features
    model[4] = nn.Linear(num_ftrs, 2)
    for param in model[0].parameters():
        param.requires_grad = False
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)
    d = tempfile.mkdtemp(); best_model_params_path = os.path.join(d, 'best_model_params.pt')
    torch.save(model.state_dict(), best_model_params_path)
    best_acc = 0.0
    best_wts = copy.deepcopy(model.state_dict())
    for epoch in range(3):
        print(f'Epoch {epoch}/{2}'); print('-' * 10)
        for phase in ['train', 'val']:
            model.train() if phase == 'train' else model.eval()
            running_loss = 0.0; running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward(); optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                scheduler.step()
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            print(f'{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}')
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                torch.save(model.state_dict(), best_model_params_path)
    print(f"Best val Acc: {best_acc:4f}", type(best_acc).__name__, best_acc)
    model.load_state_dict(torch.load(best_model_params_path, weights_only=True))
    print(best_wts['0.weight'].requires_grad, model[0].weight.requires_grad, running_corrects)


def chatbot(torch):
    nn, F = torch.nn, torch.nn.functional
    PAD, SOS = 0, 1
    def zeroPadding(l, fillvalue=PAD):
        return list(itertools.zip_longest(*l, fillvalue=fillvalue))
    def binaryMatrix(l, value=PAD):
        return [[0 if token == PAD else 1 for token in seq] for seq in l]
    seqs = [[3, 4, 5, 2], [6, 7, 2], [8, 2]]
    lengths = torch.tensor([len(s) for s in seqs])
    padList = zeroPadding(seqs)
    padVar = torch.LongTensor(padList)
    mask = torch.BoolTensor(binaryMatrix(padList))
    max_target_len = max([len(s) for s in seqs])
    print(padVar, mask, lengths, max_target_len)
    emb = nn.Embedding(10, 6)
    gru = nn.GRU(6, 6, 2, dropout=0.1, bidirectional=True)
    embedded = emb(padVar)
    packed = nn.utils.rnn.pack_padded_sequence(embedded, lengths.cpu())
    outputs, hidden = gru(packed, None)
    outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs)
    outputs = outputs[:, :, :6] + outputs[:, :, 6:]
    print(outputs.shape, hidden.shape)
    def maskNLLLoss(inp, target, mask):
        nTotal = mask.sum()
        crossEntropy = -torch.log(torch.gather(inp, 1, target.view(-1, 1)).squeeze(1))
        loss = crossEntropy.masked_select(mask).mean()
        return loss, nTotal.item()
    decoder_input = torch.LongTensor([[SOS for _ in range(3)]])
    decoder_hidden = hidden[:2]
    gru2 = nn.GRU(6, 6, 2, dropout=0.1); out = nn.Linear(12, 10); concat = nn.Linear(12, 6)
    attn = nn.Linear(6, 6)
    loss = 0; print_losses = []; n_totals = 0
    for t in range(max_target_len):
        e = emb(decoder_input)
        rnn_output, decoder_hidden = gru2(e, decoder_hidden)
        energy = attn(outputs)
        attn_energies = torch.sum(rnn_output * energy, dim=2).t()
        attn_weights = F.softmax(attn_energies, dim=1).unsqueeze(1)
        context = attn_weights.bmm(outputs.transpose(0, 1))
        rnn_output = rnn_output.squeeze(0); context = context.squeeze(1)
        concat_output = torch.tanh(concat(torch.cat((rnn_output, context), 1)))
        output = F.softmax(out(torch.cat((concat_output, context), 1)), dim=1)
        _, topi = output.topk(1)
        decoder_input = torch.LongTensor([[topi[i][0] for i in range(3)]])
        mask_loss, nTotal = maskNLLLoss(output, padVar[t], mask[t])
        loss += mask_loss; print_losses.append(mask_loss.item() * nTotal); n_totals += nTotal
    loss.backward()
    _ = nn.utils.clip_grad_norm_(emb.parameters(), 50.0)
    print(sum(print_losses) / n_totals, emb.weight.grad.abs().sum())
    all_tokens = torch.zeros([0], dtype=torch.long); all_scores = torch.zeros([0])
    decoder_scores, decoder_input = torch.max(output, dim=1)
    all_tokens = torch.cat((all_tokens, decoder_input), dim=0)
    all_scores = torch.cat((all_scores, decoder_scores), dim=0)
    decoder_input = torch.unsqueeze(decoder_input, 0)
    print(all_tokens, all_scores, decoder_input)
    print([topi[i][0] for i in range(3)], torch.LongTensor([[topi[i][0] for i in range(3)]]))


def test_learn_the_basics_tensors_autograd_quickstart_save_load():
    for program in (tensors, autograd, saveload):
        assert_same(program)
    assert_same(quickstart, rtol=1e-3, atol=1e-4)


def test_learning_pytorch_with_examples_polynomials():
    for program in (polynomial_tensor, polynomial_autograd, polynomial_custom_function, polynomial_nn,
                    polynomial_module):
        assert_same(program, rtol=1e-4, atol=1e-6)
    assert_same(polynomial_optim, rtol=1e-3, atol=1e-5)  # RMSprop divides by a running rms


def test_nlp_tutorials_and_the_blitz_network_page():
    for program in (nlp_intro, bow_classifier, word_embeddings, sequence_models, blitz_nn):
        assert_same(program)


def test_custom_dataset_from_a_csv_with_workers():
    assert_same(data_loading)


def test_fgsm_attack_on_a_saved_lenet():
    assert_same(fgsm, rtol=1e-3, atol=1e-4)


def test_transformer_language_model():
    with pytest.warns(UserWarning):  # enable_nested_tensor with batch_first False: torch's warning
        transformer_lm(ember)
    assert_same(transformer_lm, rtol=1e-3, atol=1e-3)


def test_transfer_learning_loop_and_chatbot_decoder():
    """The transfer-learning page's loop (``set_grad_enabled(phase == "train")``, frozen
    layers, ``StepLR``, ``torch.sum(preds == labels.data)`` then ``.double()``, the best
    state_dict saved and loaded) and the chatbot's batching, masked loss and greedy decoding
    (``zip_longest`` padding, ``BoolTensor``, packed bidirectional GRU, ``gather``,
    ``masked_select``, attention by ``bmm``, ``cat`` onto an empty tensor: ``CatBackward0``)."""
    assert_same(transfer_learning, rtol=1e-3, atol=1e-4)
    assert_same(chatbot)
