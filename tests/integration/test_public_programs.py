"""Public PyTorch programs kept outside this repository run unchanged under ``import ember as torch``.

Opt-in: set ``EMBER_PUBLIC_PROGRAMS`` to a folder holding checkouts of github.com/karpathy/nanoGPT,
karpathy/minGPT, karpathy/makemore and pytorch/tutorials, under those repository names
(``nanoGPT``, ``minGPT``, ``makemore``, ``tutorials``); a test whose program is missing skips.
Their code is not copied into ember (a checkout is the user's). Each program runs from a copy
in a temporary folder, once under torch 2.13 and once under ember (``examples_harness`` binds
``torch``), at a tiny size set by its own command-line or config overrides, on local data of
the real format: nanoGPT's character Shakespeare is ember's bundled corpus (``ember.text``),
makemore's names.txt is its own. After the same seed both libraries draw the same weights,
batches, dropout masks and samples, so the printed losses and samples agree; wall-time figures
are masked.
"""
import contextlib
import io
import os
import pathlib
import re
import runpy
import shutil
import sys

import pytest

import ember
from examples_harness import _torch_is, assert_same_output, run_example

torch = pytest.importorskip("torch")

PROGRAMS = pathlib.Path(os.environ.get("EMBER_PUBLIC_PROGRAMS", "/nonexistent"))
_TIMES = re.compile(r"time \d+\.\d+ms, mfu -?\d+\.\d+%|iter_dt \d+\.\d+ms|step time \d+\.\d+ms")


def checkout(name, tmp_path, lib):
    """A fresh copy of the checkout ``name`` for ``lib``'s run (programs write beside themselves)."""
    source = PROGRAMS / name
    if not source.is_dir():
        pytest.skip(f"no checkout of {name} in EMBER_PUBLIC_PROGRAMS ({PROGRAMS})")
    return pathlib.Path(shutil.copytree(source, tmp_path / lib.__name__ / name,
                                        ignore=shutil.ignore_patterns(".git", "assets", "*.ipynb")))


def run(lib, folder, program, argv, monkeypatch, packages=()):
    """``folder/program`` run in ``folder``; ``packages`` (imported from ``folder``) are dropped
    afterwards, so that the next run imports them on its own library."""
    monkeypatch.syspath_prepend(str(folder))
    try:
        return _TIMES.sub("", run_example(lib, folder / program, argv, folder, monkeypatch))
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] in packages]:
            del sys.modules[name]


def shakespeare_char(folder, monkeypatch):
    """nanoGPT's data/shakespeare_char prepared by its own prepare.py (which needs no torch)
    from a local input.txt."""
    from ember.text import load_corpus
    data = folder / "data" / "shakespeare_char"
    (data / "input.txt").write_text(load_corpus("train") + load_corpus("validation"))
    monkeypatch.chdir(data)
    with contextlib.redirect_stdout(io.StringIO()), _torch_is(torch, data):
        runpy.run_path("prepare.py")
    return data


NANOGPT_TINY = ["config/train_shakespeare_char.py", "--device=cpu", "--eval_iters=3", "--eval_interval=5",
                "--log_interval=1", "--block_size=16", "--batch_size=4", "--n_layer=2", "--n_head=2",
                "--n_embd=16", "--max_iters=10", "--lr_decay_iters=10", "--dropout=0.1"]


def test_nanogpt_trains_resumes_and_samples_as_under_torch(tmp_path, monkeypatch):
    # The README's CPU recipe, scaled down: AdamW groups, cosine lr, GradScaler(enabled=False),
    # clip_grad_norm_, checkpoints; then --init_from=resume continues, and sample.py generates.
    outs = {}
    for lib in (torch, ember):
        folder = checkout("nanoGPT", tmp_path, lib)
        shakespeare_char(folder, monkeypatch)
        outs[lib] = [run(lib, folder, "train.py", NANOGPT_TINY + ["--compile=False"], monkeypatch),
                     run(lib, folder, "train.py", NANOGPT_TINY + ["--compile=False", "--init_from=resume",
                                                                  "--max_iters=15", "--lr_decay_iters=15"],
                         monkeypatch),
                     run(lib, folder, "sample.py", ["--out_dir=out-shakespeare-char", "--device=cpu",
                                                    "--num_samples=2", "--max_new_tokens=40"], monkeypatch)]
    train, resume, sample = outs[ember]
    assert "step 10: train loss" in train and "iter 15: loss" in resume and sample.count("---------------") == 2
    for ember_out, torch_out in zip(outs[ember], outs[torch]):
        assert_same_output(ember_out, torch_out, rtol=0, atol=1e-4)  # losses printed with 4 decimals


def test_nanogpt_with_compile_true_prints_torchs_eager_losses(tmp_path, monkeypatch):
    # train.py's default compile=True: ember.compile captures and generates the model's code
    # (torch's own compile is not run here: its CPU backend needs minutes).
    outs = {}
    for lib, compile in ((torch, "False"), (ember, "True")):
        folder = checkout("nanoGPT", tmp_path, lib)
        shakespeare_char(folder, monkeypatch)
        outs[lib] = run(lib, folder, "train.py", NANOGPT_TINY + [f"--compile={compile}"], monkeypatch)
    assert "compiling the model" in outs[ember]
    assert_same_output(outs[ember].replace("compiling the model... (takes a ~minute)\n", "")
                       .replace("Overriding: compile = True", "Overriding: compile = False"),
                       outs[torch], rtol=0, atol=1e-4)


@pytest.mark.parametrize("program, argv", [
    ("projects/chargpt/chargpt.py", ["--data.block_size=16", "--trainer.batch_size=4"]),
    ("projects/adder/adder.py", ["--data.ndigit=1"]),  # greedy generate, scores at iteration 0
])
def test_mingpt_projects_print_torchs_losses(program, argv, tmp_path, monkeypatch):
    # gpt-nano, the Trainer's infinite RandomSampler over 1e10 samples, 2 DataLoader workers
    outs = {}
    for lib in (torch, ember):
        folder = checkout("minGPT", tmp_path, lib)
        shutil.copy(shakespeare_char(checkout("nanoGPT", tmp_path, lib), monkeypatch) / "input.txt", folder)
        outs[lib] = run(lib, folder, program, ["--model.model_type=gpt-nano", "--trainer.max_iters=11",
                                               "--trainer.num_workers=2"] + argv, monkeypatch, packages=("mingpt",))
    assert "iter 10: train loss" in outs[ember]
    assert_same_output(outs[ember], outs[torch], rtol=0, atol=1e-5)


@pytest.mark.parametrize("model", ["bigram", "mlp", "rnn", "gru", "bow", "transformer"])
def test_makemore_models_print_torchs_losses_and_samples(model, tmp_path, monkeypatch):
    # 201 steps: a sample of 10 names at step 200; the same seed draws the same names
    outs = {}
    for lib in (torch, ember):
        folder = checkout("makemore", tmp_path, lib)
        outs[lib] = run(lib, folder, "makemore.py", ["--type", model, "--max-steps", "201", "--num-workers", "0",
                                                     "--n-layer", "1", "--n-embd", "16", "--n-embd2", "16"],
                        monkeypatch)
    assert "step 200 | loss" in outs[ember] and "samples that are new" in outs[ember]
    assert_same_output(outs[ember], outs[torch], rtol=0, atol=1e-4)


@pytest.mark.parametrize("program", [
    "beginner_source/basics/quickstart_tutorial.py",  # FashionMNIST (stand-in), 5 epochs, save/load
    "beginner_source/blitz/neural_networks_tutorial.py",  # prints the nodes behind the loss
    "beginner_source/blitz/autograd_tutorial.py",
    "beginner_source/examples_autograd/polynomial_custom_function.py",  # autograd.Function
    "beginner_source/examples_nn/polynomial_nn.py",  # Linear + Flatten(0, 1), MSELoss(reduction='sum')
    "beginner_source/examples_nn/polynomial_optim.py",  # the same with optim.SGD
    # the NLP tutorials (their older versions: autograd.Variable, torch.LongTensor, torch.Tensor(1, n))
    "beginner_source/nlp/deep_learning_tutorial.py",  # bag-of-words logistic regression, NLLLoss, SGD
    "beginner_source/nlp/word_embeddings_tutorial.py",  # n-gram language model over a set() vocabulary
    "beginner_source/nlp/sequence_models_tutorial.py",  # LSTM part-of-speech tagger, 300 epochs
])
def test_tutorials_print_what_they_print_under_torch(program, tmp_path, monkeypatch):
    outs = {}
    for lib in (torch, ember):
        source = PROGRAMS / "tutorials" / program
        if not source.is_file():
            pytest.skip(f"no {program} in EMBER_PUBLIC_PROGRAMS/tutorials")
        folder = tmp_path / lib.__name__
        folder.mkdir()
        shutil.copy(source, folder)
        outs[lib] = re.sub(r" object at 0x[0-9a-f]+", "", run(lib, folder, source.name, [], monkeypatch))
    # where torch runs an LSTM with oneDNN its output's grad_fn is that kernel's (build dependent);
    # ember names it as torch's generic kernels do
    outs[torch] = outs[torch].replace("MkldnnRnnLayerBackward0", "StackBackward0")
    # float32 sums over 2,000 points: 1e-6 relative roundoff, the fitted a and c are ~1e-9 either way
    assert_same_output(outs[ember], outs[torch], rtol=2e-6, atol=1e-8)
