"""Stand-ins for yunjey/pytorch-tutorial, the most followed tutorial repository on GitHub after
PyTorch's own, written here in our own words with the same calls, arguments and idioms, run
under torch 2.13 and under ember from the same seed: they print the same text and numbers
(float32 roundoff allowed).

- 01-basics: linear regression on 15 points (``from_numpy``, ``nn.Linear``, ``MSELoss``),
  logistic regression and a feed-forward net on MNIST (``reshape(-1, 784)``,
  ``torch.max(outputs.data, 1)``, ``100 * (predicted == labels).sum() / total`` formatted
  by ``"{}"``).
- 02-intermediate: a CNN with ``BatchNorm2d`` and Adam; a ResNet on CIFAR-10 (``Pad``,
  ``RandomHorizontalFlip``, ``RandomCrop``, in-place ``ReLU``, ``out += residual``, the
  learning rate set through ``param_groups``); an RNN and a bidirectional LSTM reading rows of
  pixels as steps; a word-level LSTM language model (``torch.LongTensor(n)`` filled by index,
  truncated backpropagation by ``detach``, ``clip_grad_norm_``, ``multinomial`` sampling).
- 03-advanced: a GAN (``BCELoss``, two Adam optimizers, ``D(x)``/``D(G(z))`` scores), a VAE
  (``randn_like``, ``binary_cross_entropy(size_average=False)``: torch's deprecation warning),
  neural style transfer (an image as the parameter of Adam, Gram matrices by ``mm``, a
  module's ``_modules`` walked by name, ``Normalize`` to undo the normalisation, ``clamp_``)
  and image captioning (a CNN encoder cut from ``children()[:-1]``, ``BatchNorm1d``, a
  ``collate_fn`` padding captions sorted by length, ``pack_padded_sequence`` for the LSTM and
  for the targets, greedy sampling with ``max(1)`` and ``stack``); both with small stand-in
  networks for torchvision's pretrained VGG-19 and ResNet-152.

Each ran unchanged under ember (tried from the checkout with the dataset swapped for the
stand-ins below). MNIST and CIFAR-10 are the bundled digits in their layouts
(``vision_stand_in``); the language model's corpus is a small generated text.
"""
import contextlib
import io
import re
import warnings

import numpy as np
import torch

import ember
from examples_harness import numbers_after
from vision_stand_in import stand_in_torchvision


def run(program, lib):
    """What ``program(lib, torchvision)`` prints, from seed 0 (warnings kept out)."""
    tv = stand_in_torchvision(lib)["torchvision"]
    lib.manual_seed(0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program(lib, tv)
    return out.getvalue()


def assert_same(program, rtol=2e-3, atol=2e-3):
    expected, got = run(program, torch), run(program, ember)
    number = re.compile(r"[-+]?\d+\.?\d*(?:e[-+]?\d+)?")
    assert number.sub("#", got) == number.sub("#", expected), (got, expected)
    np.testing.assert_allclose([float(x) for x in number.findall(got)],
                               [float(x) for x in number.findall(expected)], rtol=rtol, atol=atol,
                               err_msg=f"ember:\n{got}\ntorch:\n{expected}")
    return got, expected


def mnist_loaders(torch, tv, batch_size, transform=None):
    transform = transform or tv.transforms.ToTensor()
    train = tv.datasets.MNIST(root="../../data", train=True, transform=transform, download=True)
    test = tv.datasets.MNIST(root="../../data", train=False, transform=tv.transforms.ToTensor())
    return (torch.utils.data.DataLoader(dataset=train, batch_size=batch_size, shuffle=True),
            torch.utils.data.DataLoader(dataset=test, batch_size=batch_size, shuffle=False))


def train_classifier(torch, model, train_loader, test_loader, epochs, lr, shape, adam=False):
    """The tutorials' shared loop: print every step's loss, then the test accuracy."""
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = (torch.optim.Adam if adam else torch.optim.SGD)(model.parameters(), lr=lr)
    total_step = len(train_loader)
    for epoch in range(epochs):
        for i, (images, labels) in enumerate(train_loader):
            outputs = model(images.reshape(*shape))
            loss = criterion(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print("Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}".format(epoch + 1, epochs, i + 1, total_step, loss.item()))
    model.eval()
    with torch.no_grad():
        correct = total = 0
        for images, labels in test_loader:
            _, predicted = torch.max(model(images.reshape(*shape)).data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum()
        print("Accuracy of the model on the test images: {} %".format(100 * correct / total))


# ---- 01-basics ----------------------------------------------------------------------------------
def linear_regression(torch, tv):
    x_train = np.array([[3.3], [4.4], [5.5], [6.71], [6.93], [4.168], [9.779], [6.182]], dtype=np.float32)
    y_train = np.array([[1.7], [2.76], [2.09], [3.19], [1.694], [1.573], [3.366], [2.596]], dtype=np.float32)
    model = torch.nn.Linear(1, 1)
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    for epoch in range(30):
        inputs, targets = torch.from_numpy(x_train), torch.from_numpy(y_train)
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (epoch + 1) % 5 == 0:
            print("Epoch [{}/{}], Loss: {:.4f}".format(epoch + 1, 30, loss.item()))
    predicted = model(torch.from_numpy(x_train)).detach().numpy()
    print(predicted.dtype, predicted.shape, predicted[:2, 0])


def logistic_regression(torch, tv):
    train_loader, test_loader = mnist_loaders(torch, tv, 16)
    train_classifier(torch, torch.nn.Linear(28 * 28, 10), train_loader, test_loader, 2, 0.001, (-1, 28 * 28))


def feedforward(torch, tv):
    nn = torch.nn

    class NeuralNet(nn.Module):
        def __init__(self, input_size, hidden_size, num_classes):
            super(NeuralNet, self).__init__()
            self.fc1 = nn.Linear(input_size, hidden_size)
            self.relu = nn.ReLU()
            self.fc2 = nn.Linear(hidden_size, num_classes)

        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))

    train_loader, test_loader = mnist_loaders(torch, tv, 16)
    train_classifier(torch, NeuralNet(784, 50, 10), train_loader, test_loader, 2, 0.001, (-1, 28 * 28), adam=True)


# ---- 02-intermediate ----------------------------------------------------------------------------
def convnet(torch, tv):
    nn = torch.nn

    class ConvNet(nn.Module):
        def __init__(self, num_classes=10):
            super(ConvNet, self).__init__()
            self.layer1 = nn.Sequential(nn.Conv2d(1, 4, kernel_size=5, stride=1, padding=2), nn.BatchNorm2d(4),
                                        nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2))
            self.layer2 = nn.Sequential(nn.Conv2d(4, 8, kernel_size=5, stride=1, padding=2), nn.BatchNorm2d(8),
                                        nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2))
            self.fc = nn.Linear(7 * 7 * 8, num_classes)

        def forward(self, x):
            out = self.layer2(self.layer1(x))
            return self.fc(out.reshape(out.size(0), -1))

    train_loader, test_loader = mnist_loaders(torch, tv, 16)
    train_classifier(torch, ConvNet(10), train_loader, test_loader, 2, 0.001, (-1, 1, 28, 28), adam=True)


def resnet(torch, tv):
    nn, transforms = torch.nn, tv.transforms

    def conv3x3(in_channels, out_channels, stride=1):
        return nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)

    class ResidualBlock(nn.Module):
        def __init__(self, in_channels, out_channels, stride=1, downsample=None):
            super(ResidualBlock, self).__init__()
            self.conv1, self.bn1 = conv3x3(in_channels, out_channels, stride), nn.BatchNorm2d(out_channels)
            self.relu = nn.ReLU(inplace=True)
            self.conv2, self.bn2 = conv3x3(out_channels, out_channels), nn.BatchNorm2d(out_channels)
            self.downsample = downsample

        def forward(self, x):
            residual = x
            out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
            if self.downsample:
                residual = self.downsample(x)
            out += residual
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, block, layers, num_classes=10):
            super(ResNet, self).__init__()
            self.in_channels = 4
            self.conv, self.bn, self.relu = conv3x3(3, 4), nn.BatchNorm2d(4), nn.ReLU(inplace=True)
            self.layer1 = self.make_layer(block, 4, layers[0])
            self.layer2 = self.make_layer(block, 8, layers[1], 2)
            self.layer3 = self.make_layer(block, 8, layers[2], 2)
            self.avg_pool = nn.AvgPool2d(8)
            self.fc = nn.Linear(8, num_classes)

        def make_layer(self, block, out_channels, blocks, stride=1):
            downsample = None
            if (stride != 1) or (self.in_channels != out_channels):
                downsample = nn.Sequential(conv3x3(self.in_channels, out_channels, stride=stride),
                                           nn.BatchNorm2d(out_channels))
            layers = [block(self.in_channels, out_channels, stride, downsample)]
            self.in_channels = out_channels
            layers += [block(out_channels, out_channels) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            out = self.layer3(self.layer2(self.layer1(self.relu(self.bn(self.conv(x))))))
            out = self.avg_pool(out)
            return self.fc(out.view(out.size(0), -1))

    transform = transforms.Compose([transforms.Pad(4), transforms.RandomHorizontalFlip(), transforms.RandomCrop(32),
                                    transforms.ToTensor()])
    train = tv.datasets.CIFAR10(root="../../data/", train=True, transform=transform, download=True)
    loader = torch.utils.data.DataLoader(dataset=torch.utils.data.Subset(train, range(32)), batch_size=16, shuffle=True)
    model = ResNet(ResidualBlock, [1, 1, 1])
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    curr_lr = 0.001
    for epoch in range(2):
        for i, (images, labels) in enumerate(loader):
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print("Epoch [{}/{}], Step [{}/{}] Loss: {:.4f}".format(epoch + 1, 2, i + 1, len(loader), loss.item()))
        curr_lr /= 3
        for param_group in optimizer.param_groups:
            param_group["lr"] = curr_lr
    model.eval()
    with torch.no_grad():
        images, labels = next(iter(loader))
        print(model(images).shape, labels.dtype)


def rnn(torch, tv):
    nn = torch.nn

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes, bidirectional):
            super(RNN, self).__init__()
            self.hidden_size, self.num_layers, self.d = hidden_size, num_layers, 2 if bidirectional else 1
            self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=bidirectional)
            self.fc = nn.Linear(hidden_size * self.d, num_classes)

        def forward(self, x):
            h0 = torch.zeros(self.num_layers * self.d, x.size(0), self.hidden_size).to(x.device)
            c0 = torch.zeros(self.num_layers * self.d, x.size(0), self.hidden_size).to(x.device)
            out, _ = self.lstm(x, (h0, c0))
            return self.fc(out[:, -1, :])

    for bidirectional in (False, True):
        train_loader, test_loader = mnist_loaders(torch, tv, 16)
        model = RNN(28, 8, 2, 10, bidirectional)
        train_classifier(torch, model, train_loader, test_loader, 1, 0.01, (-1, 28, 28), adam=True)


def language_model(torch, tv):
    nn = torch.nn
    text = ["w{} w{} w{} w{}".format(i % 7, (i * 3) % 11, (i * 5) % 13, i % 4) for i in range(60)]
    word2idx, idx2word = {}, {}
    tokens = 0
    for line in text:
        for word in line.split() + ["<eos>"]:
            tokens += 1
            if word not in word2idx:
                idx2word[len(word2idx)] = word
                word2idx[word] = len(word2idx)
    ids = torch.LongTensor(tokens)
    token = 0
    for line in text:
        for word in line.split() + ["<eos>"]:
            ids[token] = word2idx[word]
            token += 1
    batch_size, seq_length, hidden_size, num_layers = 4, 6, 16, 1
    ids = ids[:ids.size(0) // batch_size * batch_size].view(batch_size, -1)
    vocab_size, num_batches = len(word2idx), ids.size(1) // seq_length

    class RNNLM(nn.Module):
        def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
            super(RNNLM, self).__init__()
            self.embed = nn.Embedding(vocab_size, embed_size)
            self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
            self.linear = nn.Linear(hidden_size, vocab_size)

        def forward(self, x, h):
            out, (h, c) = self.lstm(self.embed(x), h)
            out = out.reshape(out.size(0) * out.size(1), out.size(2))
            return self.linear(out), (h, c)

    model = RNNLM(vocab_size, 8, hidden_size, num_layers)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.002)
    for epoch in range(2):
        states = (torch.zeros(num_layers, batch_size, hidden_size), torch.zeros(num_layers, batch_size, hidden_size))
        for i in range(0, ids.size(1) - seq_length, seq_length):
            inputs, targets = ids[:, i:i + seq_length], ids[:, (i + 1):(i + 1) + seq_length]
            states = [state.detach() for state in states]
            outputs, states = model(inputs, states)
            loss = criterion(outputs, targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            step = (i + 1) // seq_length
            print("Epoch [{}/{}], Step[{}/{}], Loss: {:.4f}, Perplexity: {:5.2f}".format(
                epoch + 1, 2, step, num_batches, loss.item(), np.exp(loss.item())))
    words = []
    with torch.no_grad():
        state = (torch.zeros(num_layers, 1, hidden_size), torch.zeros(num_layers, 1, hidden_size))
        prob = torch.ones(vocab_size)
        input = torch.multinomial(prob, num_samples=1).unsqueeze(1)
        for i in range(12):
            output, state = model(input, state)
            word_id = torch.multinomial(output.exp(), num_samples=1).item()
            input.fill_(word_id)
            words.append(idx2word[word_id])
    print(" ".join(words))


# ---- 03-advanced --------------------------------------------------------------------------------
def gan(torch, tv):
    nn, transforms = torch.nn, tv.transforms
    latent_size, hidden_size, image_size, batch_size = 8, 32, 784, 16
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean=[0.5], std=[0.5])])
    mnist = tv.datasets.MNIST(root="../../data/", train=True, transform=transform, download=True)
    data_loader = torch.utils.data.DataLoader(dataset=mnist, batch_size=batch_size, shuffle=True)
    D = nn.Sequential(nn.Linear(image_size, hidden_size), nn.LeakyReLU(0.2), nn.Linear(hidden_size, hidden_size),
                      nn.LeakyReLU(0.2), nn.Linear(hidden_size, 1), nn.Sigmoid())
    G = nn.Sequential(nn.Linear(latent_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, hidden_size), nn.ReLU(),
                      nn.Linear(hidden_size, image_size), nn.Tanh())
    criterion = nn.BCELoss()
    d_optimizer = torch.optim.Adam(D.parameters(), lr=0.0002)
    g_optimizer = torch.optim.Adam(G.parameters(), lr=0.0002)

    def reset_grad():
        d_optimizer.zero_grad()
        g_optimizer.zero_grad()

    for epoch in range(2):
        for i, (images, _) in enumerate(data_loader):
            images = images.reshape(batch_size, -1)
            real_labels, fake_labels = torch.ones(batch_size, 1), torch.zeros(batch_size, 1)
            outputs = D(images)
            d_loss_real, real_score = criterion(outputs, real_labels), outputs
            z = torch.randn(batch_size, latent_size)
            outputs = D(G(z))
            d_loss_fake, fake_score = criterion(outputs, fake_labels), outputs
            d_loss = d_loss_real + d_loss_fake
            reset_grad()
            d_loss.backward()
            d_optimizer.step()
            g_loss = criterion(D(G(torch.randn(batch_size, latent_size))), real_labels)
            reset_grad()
            g_loss.backward()
            g_optimizer.step()
            print("Epoch [{}/{}], Step [{}/{}], d_loss: {:.4f}, g_loss: {:.4f}, D(x): {:.2f}, D(G(z)): {:.2f}".format(
                epoch, 2, i + 1, len(data_loader), d_loss.item(), g_loss.item(), real_score.mean().item(),
                fake_score.mean().item()))
        fake_images = G(z).reshape(G(z).size(0), 1, 28, 28)
        print(((fake_images + 1) / 2).clamp(0, 1).shape)


def vae(torch, tv):
    nn, F = torch.nn, torch.nn.functional
    image_size, h_dim, z_dim, batch_size = 784, 40, 4, 16
    dataset = tv.datasets.MNIST(root="../../data", train=True, transform=tv.transforms.ToTensor(), download=True)
    data_loader = torch.utils.data.DataLoader(dataset=dataset, batch_size=batch_size, shuffle=True)

    class VAE(nn.Module):
        def __init__(self, image_size=784, h_dim=400, z_dim=20):
            super(VAE, self).__init__()
            self.fc1, self.fc2, self.fc3 = nn.Linear(image_size, h_dim), nn.Linear(h_dim, z_dim), nn.Linear(h_dim, z_dim)
            self.fc4, self.fc5 = nn.Linear(z_dim, h_dim), nn.Linear(h_dim, image_size)

        def encode(self, x):
            h = F.relu(self.fc1(x))
            return self.fc2(h), self.fc3(h)

        def reparameterize(self, mu, log_var):
            std = torch.exp(log_var / 2)
            return mu + torch.randn_like(std) * std

        def decode(self, z):
            return F.sigmoid(self.fc5(F.relu(self.fc4(z))))

        def forward(self, x):
            mu, log_var = self.encode(x)
            return self.decode(self.reparameterize(mu, log_var)), mu, log_var

    model = VAE(image_size, h_dim, z_dim)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for i, (x, _) in enumerate(data_loader):
            x = x.view(-1, image_size)
            x_reconst, mu, log_var = model(x)
            reconst_loss = F.binary_cross_entropy(x_reconst, x, size_average=False)
            kl_div = -0.5 * torch.sum(1 + log_var - mu.pow(2) - log_var.exp())
            loss = reconst_loss + kl_div
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print("Epoch[{}/{}], Step [{}/{}], Reconst Loss: {:.4f}, KL Div: {:.4f}".format(
                epoch + 1, 2, i + 1, len(data_loader), reconst_loss.item(), kl_div.item()))
        with torch.no_grad():
            out = model.decode(torch.randn(batch_size, z_dim)).view(-1, 1, 28, 28)
            out2, _, _ = model(x)
            x_concat = torch.cat([x.view(-1, 1, 28, 28), out2.view(-1, 1, 28, 28)], dim=3)
            print(out.shape, x_concat.shape)


def style_transfer(torch, tv):
    nn, transforms = torch.nn, tv.transforms
    features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(4, 4, 3, padding=1),
                             nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=2, stride=2), nn.Conv2d(4, 8, 3, padding=1),
                             nn.ReLU(inplace=True))  # a small VGG-style stack (torchvision's vgg19 is a download)

    class VGGNet(nn.Module):
        def __init__(self):
            super(VGGNet, self).__init__()
            self.select = ["0", "2", "5"]
            self.vgg = features

        def forward(self, x):
            features = []
            for name, layer in self.vgg._modules.items():
                x = layer(x)
                if name in self.select:
                    features.append(x)
            return features

    transform = transforms.Compose([transforms.ToTensor(),
                                    transforms.Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))])
    data = tv.datasets.CIFAR10(root=".", train=True)
    content, style = (transform(data[i][0]).unsqueeze(0) for i in (0, 1))
    target = content.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([target], lr=0.01, betas=[0.5, 0.999])
    vgg = VGGNet().eval()
    for step in range(6):
        style_loss = content_loss = 0
        for f1, f2, f3 in zip(vgg(target), vgg(content), vgg(style)):
            content_loss += torch.mean((f1 - f2) ** 2)
            _, c, h, w = f1.size()
            f1, f3 = f1.view(c, h * w), f3.view(c, h * w)
            f1, f3 = torch.mm(f1, f1.t()), torch.mm(f3, f3.t())
            style_loss += torch.mean((f1 - f3) ** 2) / (c * h * w)
        loss = content_loss + 100 * style_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("Step [{}/{}], Content Loss: {:.4f}, Style Loss: {:.4f}".format(step + 1, 6, content_loss.item(),
                                                                             style_loss.item()))
    denorm = transforms.Normalize((-2.12, -2.04, -1.80), (4.37, 4.46, 4.44))
    img = denorm(target.clone().squeeze()).clamp_(0, 1)
    print(img.shape, img.requires_grad, img.grad_fn.name())


def image_captioning(torch, tv):
    nn = torch.nn
    pack_padded_sequence = torch.nn.utils.rnn.pack_padded_sequence

    class EncoderCNN(nn.Module):
        def __init__(self, embed_size):
            super(EncoderCNN, self).__init__()
            resnet = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)))
            resnet.fc = nn.Linear(8, 1000)  # (a stand-in for resnet152: its children end with fc)
            modules = list(resnet.children())[:-1]
            self.resnet = nn.Sequential(*modules)
            self.linear = nn.Linear(resnet.fc.in_features, embed_size)
            self.bn = nn.BatchNorm1d(embed_size, momentum=0.01)

        def forward(self, images):
            with torch.no_grad():
                features = self.resnet(images)
            features = features.reshape(features.size(0), -1)
            return self.bn(self.linear(features))

    class DecoderRNN(nn.Module):
        def __init__(self, embed_size, hidden_size, vocab_size, num_layers, max_seq_length=20):
            super(DecoderRNN, self).__init__()
            self.embed = nn.Embedding(vocab_size, embed_size)
            self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
            self.linear = nn.Linear(hidden_size, vocab_size)
            self.max_seg_length = max_seq_length

        def forward(self, features, captions, lengths):
            embeddings = torch.cat((features.unsqueeze(1), self.embed(captions)), 1)
            hiddens, _ = self.lstm(pack_padded_sequence(embeddings, lengths, batch_first=True))
            return self.linear(hiddens[0])

        def sample(self, features, states=None):
            sampled_ids = []
            inputs = features.unsqueeze(1)
            for i in range(self.max_seg_length):
                hiddens, states = self.lstm(inputs, states)
                _, predicted = self.linear(hiddens.squeeze(1)).max(1)
                sampled_ids.append(predicted)
                inputs = self.embed(predicted).unsqueeze(1)
            return torch.stack(sampled_ids, 1)

    def collate_fn(data):
        data.sort(key=lambda x: len(x[1]), reverse=True)
        images, captions = zip(*data)
        images = torch.stack(images, 0)
        lengths = [len(cap) for cap in captions]
        targets = torch.zeros(len(captions), max(lengths)).long()
        for i, cap in enumerate(captions):
            end = lengths[i]
            targets[i, :end] = cap[:end]
        return images, targets, lengths

    cifar = tv.datasets.CIFAR10(root=".", train=True, transform=tv.transforms.ToTensor())
    samples = [(cifar[i][0], torch.tensor([1] + [2 + (i * k) % 9 for k in range(3 + i % 4)] + [0])) for i in range(12)]
    loader = torch.utils.data.DataLoader(samples, batch_size=4, shuffle=True, collate_fn=collate_fn)
    encoder, decoder = EncoderCNN(8), DecoderRNN(8, 16, 12, 1, max_seq_length=5)
    criterion = nn.CrossEntropyLoss()
    params = list(decoder.parameters()) + list(encoder.linear.parameters()) + list(encoder.bn.parameters())
    optimizer = torch.optim.Adam(params, lr=0.01)
    for epoch in range(2):
        for i, (images, captions, lengths) in enumerate(loader):
            targets = pack_padded_sequence(captions, lengths, batch_first=True)[0]
            loss = criterion(decoder(encoder(images), captions, lengths), targets)
            decoder.zero_grad()
            encoder.zero_grad()
            loss.backward()
            optimizer.step()
            print("Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}, Perplexity: {:5.4f}".format(
                epoch, 2, i, len(loader), loss.item(), np.exp(loss.item())))
    encoder.eval()
    print(decoder.sample(encoder(images[:2])).tolist())


# ---- the tests ----------------------------------------------------------------------------------
def test_basics_linear_and_logistic_regression_and_feedforward():
    got, _ = assert_same(linear_regression)
    assert len(numbers_after(got, "Loss:")) == 6
    for program in (logistic_regression, feedforward):
        got, _ = assert_same(program)
        assert len(numbers_after(got, "images:")) == 1  # (a 0-d tensor formatted by "{}")


def test_convnet_with_batch_norm_and_adam():
    """The conv biases before BatchNorm get only roundoff as gradient, which Adam scales up to
    steps of the learning rate: the losses agree, the test accuracy within two images."""
    got, expected = run(convnet, ember), run(convnet, torch)
    np.testing.assert_allclose(numbers_after(got, "Loss:"), numbers_after(expected, "Loss:"), rtol=2e-3)
    accuracy = [numbers_after(text, "images:")[0] for text in (got, expected)]
    assert abs(accuracy[0] - accuracy[1]) <= 2 * 100 / 64


def test_resnet_on_cifar10_with_its_augmentation():
    assert_same(resnet, rtol=5e-3, atol=5e-3)


def test_rnn_and_bidirectional_rnn_read_pixel_rows_as_steps():
    assert_same(rnn)


def test_language_model_with_truncated_backpropagation_and_sampling():
    got, _ = assert_same(language_model)
    assert got.strip().splitlines()[-1].count("w") > 0


def test_gan_and_vae():
    assert_same(gan)
    assert_same(vae, rtol=1e-3, atol=1e-3)


def test_style_transfer_and_image_captioning():
    assert_same(style_transfer)
    assert_same(image_captioning)
