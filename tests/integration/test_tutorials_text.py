"""Stand-ins for the PyTorch tutorials' NLP-from-scratch trio, written here in our own words
with the same calls, arguments and idioms, run under torch 2.13 and under ember from the same
seed: they print the same text and numbers.

- "Classifying names with a character-level RNN" (intermediate_source/
  char_rnn_classification_tutorial.py): a ``Dataset`` of one-hot (length, 1, letters) names
  read from ``data/names/*.txt``, ``random_split`` by fractions with a seeded
  ``Generator(device=...)``, ``set_default_device``, ``nn.RNN`` + ``LogSoftmax``, batches from
  ``np.array_split`` whose losses are summed onto a Python 0, ``clip_grad_norm_``, a
  confusion matrix filled through ``confusion[i][j] += 1``; it prints a dataset item and
  the untrained network's output.
- "Generating names with a character-level RNN" (char_rnn_generation_tutorial.py): a
  hand-made RNN cell of ``Linear`` layers over ``cat`` of category, letter and hidden state,
  ``Dropout``, a loss summed into ``torch.Tensor([0])``, the update ``p.data.add_(p.grad.data,
  alpha=-lr)``, greedy sampling that indexes a Python string with a tensor.
- "Translation with a sequence to sequence network and attention"
  (seq2seq_translation_tutorial.py): a GRU encoder and a decoder with Bahdanau attention
  (``bmm``, ``softmax``), teacher forcing, ``RandomSampler`` over a ``TensorDataset`` of
  ``LongTensor`` ids from int32 arrays, ``topk``, Adam, NLLLoss, greedy decoding.

The names are made up here, in three "languages" with their own spellings; the sentence pairs
are ``text_stand_in.parallel_corpus``'s.
"""
import contextlib
import io
import glob
import os
import random
import string
import unicodedata

import numpy as np
import torch

import ember
from examples_harness import assert_same_output
from text_stand_in import parallel_corpus

NAMES = {
    "Italian": "Rossi Russo Ferrari Esposito Bianchi Romano Colombo Ricci Marino Greco Bruno Gallo Conti "
               "De Luca Costa Giordano Mancini Rizzo Lombardi Moretti",
    "Polish": "Nowak Kowalski Wiśniewski Wójcik Kowalczyk Kamiński Lewandowski Zieliński Szymański Woźniak "
              "Dąbrowski Kozłowski Jankowski Mazur Kwiatkowski Krawczyk Piotrowski Grabowski",
    "Japanese": "Satō Suzuki Takahashi Tanaka Watanabe Itō Yamamoto Nakamura Kobayashi Katō Yoshida Yamada "
                "Sasaki Yamaguchi Matsumoto Inoue Kimura Hayashi Shimizu",
}


def write_names(root):
    folder = root / "data" / "names"
    folder.mkdir(parents=True)
    for language, names in NAMES.items():
        spelled = [n.replace("De Luca", "De_Luca") for n in names.split()]
        (folder / f"{language}.txt").write_text("\n".join(s.replace("_", " ") for s in spelled) + "\n")
    return folder


def char_rnn_classification(torch, folder):
    nn, Dataset = torch.nn, torch.utils.data.Dataset
    device = torch.device("cpu")
    torch.set_default_device(device)
    allowed_chars = string.ascii_letters + " .,;'" + "_"
    n_letters = len(allowed_chars)

    def unicodeToAscii(s):
        return "".join(c for c in unicodedata.normalize("NFD", s)
                       if unicodedata.category(c) != "Mn" and c in allowed_chars)

    def letterToIndex(letter):
        return allowed_chars.find(letter) if letter in allowed_chars else allowed_chars.find("_")

    def lineToTensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor

    class NamesDataset(Dataset):
        def __init__(self, data_dir):
            self.data, self.data_tensors, self.labels, self.labels_tensors = [], [], [], []
            for filename in sorted(glob.glob(os.path.join(data_dir, "*.txt"))):
                label = os.path.splitext(os.path.basename(filename))[0]
                for name in open(filename, encoding="utf-8").read().strip().split("\n"):
                    self.data.append(name)
                    self.data_tensors.append(lineToTensor(unicodeToAscii(name)))
                    self.labels.append(label)
            self.labels_uniq = sorted(set(self.labels))
            for label in self.labels:
                self.labels_tensors.append(torch.tensor([self.labels_uniq.index(label)], dtype=torch.long))

        def __len__(self):
            return len(self.data)

        def __getitem__(self, idx):
            return self.labels_tensors[idx], self.data_tensors[idx], self.labels[idx], self.data[idx]

    class CharRNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(CharRNN, self).__init__()
            self.rnn = nn.RNN(input_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, line_tensor):
            rnn_out, hidden = self.rnn(line_tensor)
            return self.softmax(self.h2o(hidden[0]))

    def label_from_output(output, output_labels):
        top_n, top_i = output.topk(1)
        label_i = top_i[0].item()
        return output_labels[label_i], label_i

    print(f"converting 'Ślusàrski' to {unicodeToAscii('Ślusàrski')}")
    print(f"The name 'Ahn' becomes {lineToTensor('Ahn')}")
    alldata = NamesDataset(folder)
    print(f"loaded {len(alldata)} items of data")
    print(f"example = {alldata[0]}")
    train_set, test_set = torch.utils.data.random_split(
        alldata, [0.85, 0.15], generator=torch.Generator(device=device).manual_seed(2024))
    print(f"train examples = {len(train_set)}, validation examples = {len(test_set)}")
    rnn = CharRNN(n_letters, 32, len(alldata.labels_uniq))
    print(rnn)
    output = rnn(lineToTensor("Albert"))
    print(output)
    print(label_from_output(output, alldata.labels_uniq))

    criterion = nn.NLLLoss()
    rnn.train()
    optimizer = torch.optim.SGD(rnn.parameters(), lr=0.15)
    for epoch in range(1, 7):
        rnn.zero_grad()
        batches = list(range(len(train_set)))
        random.shuffle(batches)
        batches = np.array_split(batches, len(batches) // 8)
        current_loss = 0
        for batch in batches:
            batch_loss = 0
            for i in batch:
                label_tensor, text_tensor, label, text = train_set[i]
                batch_loss += criterion(rnn.forward(text_tensor), label_tensor)
            batch_loss.backward()
            nn.utils.clip_grad_norm_(rnn.parameters(), 3)
            optimizer.step()
            optimizer.zero_grad()
            current_loss += batch_loss.item() / len(batch)
        print(f"{epoch} ({epoch / 6:.0%}): \t average batch loss = {current_loss / len(batches)}")

    confusion = torch.zeros(len(alldata.labels_uniq), len(alldata.labels_uniq))
    rnn.eval()
    with torch.no_grad():
        for i in range(len(test_set)):
            label_tensor, text_tensor, label, text = test_set[i]
            guess, guess_i = label_from_output(rnn(text_tensor), alldata.labels_uniq)
            confusion[alldata.labels_uniq.index(label)][guess_i] += 1
    for i in range(len(alldata.labels_uniq)):
        denom = confusion[i].sum()
        if denom > 0:
            confusion[i] = confusion[i] / denom
    print(confusion.cpu().numpy().round(4).tolist())


def char_rnn_generation(torch, folder):
    nn = torch.nn
    all_letters = string.ascii_letters + " .,;'-"
    n_letters = len(all_letters) + 1  # and the end of a name
    category_lines = {}
    for filename in sorted(glob.glob(os.path.join(folder, "*.txt"))):
        lines = open(filename, encoding="utf-8").read().strip().split("\n")
        category_lines[os.path.splitext(os.path.basename(filename))[0]] = [
            "".join(c for c in unicodedata.normalize("NFD", line) if unicodedata.category(c) != "Mn"
                    and c in all_letters) for line in lines]
    all_categories = list(category_lines)
    n_categories = len(all_categories)

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(RNN, self).__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
            self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
            self.o2o = nn.Linear(hidden_size + output_size, output_size)
            self.dropout = nn.Dropout(0.1)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, category, input, hidden):
            input_combined = torch.cat((category, input, hidden), 1)
            hidden = self.i2h(input_combined)
            output = self.i2o(input_combined)
            output = self.o2o(torch.cat((hidden, output), 1))
            return self.softmax(self.dropout(output)), hidden

        def initHidden(self):
            return torch.zeros(1, self.hidden_size)

    def categoryTensor(category):
        tensor = torch.zeros(1, n_categories)
        tensor[0][all_categories.index(category)] = 1
        return tensor

    def inputTensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li in range(len(line)):
            tensor[li][0][all_letters.find(line[li])] = 1
        return tensor

    def targetTensor(line):
        letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
        letter_indexes.append(n_letters - 1)  # EOS
        return torch.LongTensor(letter_indexes)

    rnn = RNN(n_letters, 32, n_letters)
    criterion, learning_rate = nn.NLLLoss(), 0.005

    def train(category_tensor, input_line_tensor, target_line_tensor):
        target_line_tensor.unsqueeze_(-1)
        hidden = rnn.initHidden()
        rnn.zero_grad()
        loss = torch.Tensor([0])
        for i in range(input_line_tensor.size(0)):
            output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
            loss += criterion(output, target_line_tensor[i])
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item() / input_line_tensor.size(0)

    total_loss = 0
    for iter in range(1, 301):
        category = all_categories[random.randint(0, n_categories - 1)]
        line = category_lines[category][random.randint(0, len(category_lines[category]) - 1)]
        output, loss = train(categoryTensor(category), inputTensor(line), targetTensor(line))
        total_loss += loss
        if iter % 50 == 0:
            print('(%d %d%%) %.4f' % (iter, iter / 300 * 100, total_loss / 50))
            total_loss = 0

    def sample(category, start_letter='A', max_length=12):
        with torch.no_grad():
            category_tensor = categoryTensor(category)
            input = inputTensor(start_letter)
            hidden = rnn.initHidden()
            output_name = start_letter
            for i in range(max_length):
                output, hidden = rnn(category_tensor, input[0], hidden)
                topv, topi = output.topk(1)
                topi = topi[0][0]
                if topi == n_letters - 1:
                    break
                letter = all_letters[topi]
                output_name += letter
                input = inputTensor(letter)
            return output_name

    rnn.eval()
    for category, letters in zip(all_categories, ("RUS", "KWN", "STY")):
        print(category, [sample(category, letter) for letter in letters])


SOS_token, EOS_token, MAX_LENGTH = 0, 1, 10


def seq2seq_translation(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    TensorDataset, DataLoader, RandomSampler = (torch.utils.data.TensorDataset, torch.utils.data.DataLoader,
                                                torch.utils.data.RandomSampler)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    class Lang:
        def __init__(self, name):
            self.name, self.word2index, self.word2count = name, {}, {}
            self.index2word, self.n_words = {0: "SOS", 1: "EOS"}, 2

        def addSentence(self, sentence):
            for word in sentence.split(' '):
                if word not in self.word2index:
                    self.word2index[word], self.word2count[word] = self.n_words, 1
                    self.index2word[self.n_words] = word
                    self.n_words += 1
                else:
                    self.word2count[word] += 1

    pairs = [[a.lower(), b.lower()] for a, b in parallel_corpus("train", 48, 3)]
    input_lang, output_lang = Lang("deu"), Lang("eng")
    for a, b in pairs:
        input_lang.addSentence(a)
        output_lang.addSentence(b)
    print("Counted words:", input_lang.name, input_lang.n_words, output_lang.name, output_lang.n_words)

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super(EncoderRNN, self).__init__()
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            return self.gru(self.dropout(self.embedding(input)))

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super(BahdanauAttention, self).__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            return torch.bmm(weights, keys), weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super(AttnDecoderRNN, self).__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
            decoder_hidden, decoder_outputs, attentions = encoder_hidden, [], []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = F.log_softmax(torch.cat(decoder_outputs, dim=1), dim=-1)
            return decoder_outputs, decoder_hidden, torch.cat(attentions, dim=1)

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
            return self.out(output), hidden, attn_weights

    def indexesFromSentence(lang, sentence):
        return [lang.word2index[word] for word in sentence.split(' ')]

    n = len(pairs)
    input_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
    target_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
    for idx, (inp, tgt) in enumerate(pairs):
        inp_ids, tgt_ids = indexesFromSentence(input_lang, inp) + [EOS_token], indexesFromSentence(output_lang, tgt) + [EOS_token]
        input_ids[idx, :len(inp_ids)] = inp_ids
        target_ids[idx, :len(tgt_ids)] = tgt_ids
    train_data = TensorDataset(torch.LongTensor(input_ids).to(device), torch.LongTensor(target_ids).to(device))
    train_dataloader = DataLoader(train_data, sampler=RandomSampler(train_data), batch_size=8)

    hidden_size = 16
    encoder = EncoderRNN(input_lang.n_words, hidden_size).to(device)
    decoder = AttnDecoderRNN(hidden_size, output_lang.n_words).to(device)
    encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    for epoch in range(1, 13):
        total_loss = 0
        for input_tensor, target_tensor in train_dataloader:
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
            loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
        if epoch % 3 == 0:
            print('epoch %d loss %.4f' % (epoch, total_loss / len(train_dataloader)))

    encoder.eval()
    decoder.eval()
    for inp, tgt in pairs[:4]:
        with torch.no_grad():
            input_tensor = torch.tensor(indexesFromSentence(input_lang, inp) + [EOS_token], dtype=torch.long,
                                        device=device).view(1, -1)
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
            _, topi = decoder_outputs.topk(1)
            decoded_words = []
            for idx in topi.squeeze():
                if idx.item() == EOS_token:
                    decoded_words.append('<EOS>')
                    break
                decoded_words.append(output_lang.index2word[idx.item()])
        print('>', inp, '\n=', tgt, '\n<', ' '.join(decoded_words), decoder_attn.shape)


def printed(program, lib, *args):
    """What ``program`` prints under ``lib``, seeded as a script's first lines would seed it."""
    out = io.StringIO()
    lib.manual_seed(0)
    random.seed(0)
    try:
        with contextlib.redirect_stdout(out):
            program(lib, *args)
    finally:
        lib.set_default_device(None)
    return out.getvalue()


def test_char_rnn_classification_tutorial_prints_torchs_losses_and_confusion(tmp_path):
    folder = write_names(tmp_path)
    t_out, e_out = (printed(char_rnn_classification, lib, folder) for lib in (torch, ember))
    assert "grad_fn=<LogSoftmaxBackward0>" in e_out and "6 (100%)" in e_out
    assert_same_output(e_out, t_out, rtol=1e-5, atol=1e-6)


def test_char_rnn_generation_tutorial_prints_torchs_losses_and_names(tmp_path):
    folder = write_names(tmp_path)
    t_out, e_out = (printed(char_rnn_generation, lib, folder) for lib in (torch, ember))
    assert "(300 100%)" in e_out and "Polish [" in e_out
    assert_same_output(e_out, t_out, rtol=1e-5, atol=1e-6)


def test_seq2seq_translation_tutorial_prints_torchs_losses_and_translations():
    t_out, e_out = (printed(seq2seq_translation, lib) for lib in (torch, ember))
    assert "epoch 12 loss" in e_out and e_out.count("<EOS>") >= 1
    assert_same_output(e_out, t_out, rtol=1e-4, atol=1e-5)
