"""pytorch/examples programs with ``model = torch.compile(model)`` added, under ``import ember as torch``.

The one line a user adds to try the compiler goes right after the program's model is built,
in a copy of the program's folder from a checkout of github.com/pytorch/examples (tested at
commit 77f55b9) at ``$EMBER_PUBLIC_PROGRAMS/examples``; without one these tests skip. The
compiled program must run unchanged and print what the unmodified program prints under torch
2.13's eager mode (torch's own compiler is not run: its CPU backend takes minutes), every
forward and backward replayed from captured graphs, none broken.
"""
import pickle
import re
import shutil

import pytest

import ember
from examples_harness import assert_same_output, example, run_example

torch = pytest.importorskip("torch")

MNIST_FLAGS = ["--batch-size", "16", "--test-batch-size", "64", "--epochs", "1", "--log-interval", "1"]


def with_compile(program, anchor, folder, line="model = torch.compile(model)"):
    """A copy of ``program``'s folder in ``folder`` with ``line`` (``model = torch.compile(model)``)
    after the first line containing ``anchor``, at that line's indentation; the copy's path."""
    source = example(program)
    shutil.copytree(source.parent, folder / source.parent.name)
    copy = folder / source.parent.name / source.name
    lines = copy.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if anchor in line)
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at + 1, f"{indent}{line}\n")
    copy.write_text("".join(lines))
    return copy


def compiled_and_eager(program, anchor, argv, tmp_path, monkeypatch, line="model = torch.compile(model)"):
    """(torch eager's output, ember compiled's output) of ``program`` (``line`` added: :func:`with_compile`)."""
    for name in ("torch", "ember", "compiled"):
        (tmp_path / name).mkdir()
    torch_out = run_example(torch, program, argv, tmp_path / "torch", monkeypatch)
    compiled = with_compile(program, anchor, tmp_path / "compiled", line)
    ember.compiler.reset()
    ember_out = run_example(ember, compiled, argv, tmp_path / "ember", monkeypatch)
    counters = ember._dynamo.utils.counters
    assert counters["stats"]["unique_graphs"] >= 1 and not counters["graph_break"], dict(counters)
    return torch_out, ember_out


@pytest.mark.parametrize("program, anchor, argv, atol", [
    ("mnist/main.py", "model = Net()", MNIST_FLAGS, 2e-6),  # Conv2d, max_pool2d, Dropout, Adadelta; eval recompiles
    ("mnist_rnn/main.py", "model = Net()", MNIST_FLAGS, 2e-6),  # LSTM over image rows
    ("vae/main.py", "model = VAE()", ["--batch-size", "16", "--epochs", "1", "--log-interval", "1"],
     2e-4),  # randn_like inside the graph; model.decode read through the compiled module
])
def test_compiled_examples_print_torchs_eager_losses(program, anchor, argv, atol, tmp_path, monkeypatch):
    torch_out, ember_out = compiled_and_eager(program, anchor, argv, tmp_path, monkeypatch)
    assert "Loss:" in ember_out
    assert_same_output(ember_out, torch_out, rtol=2e-5, atol=atol)


def test_compiled_word_language_model_trains_as_torch_and_its_saved_model_is_refused_as_torchs(
        tmp_path, monkeypatch):
    # The program saves the model whole (torch.save(model)) and loads it under safe_globals that
    # name its classes: torch pickles a compiled model as OptimizedModule, which that load
    # refuses; so does ember's, after the same training output.
    from test_pytorch_examples import write_corpus
    write_corpus(tmp_path)
    argv = ["--data", str(tmp_path), "--emsize", "16", "--nhid", "16", "--batch_size", "4", "--bptt", "8",
            "--log-interval", "5", "--epochs", "1", "--save", "m.pt", "--model", "LSTM"]
    program = "word_language_model/main.py"
    (tmp_path / "torch").mkdir()
    torch_out = run_example(torch, program, argv, tmp_path / "torch", monkeypatch)
    (tmp_path / "ember").mkdir()
    compiled = with_compile(program, "model = RNNModel(", tmp_path / "compiled")
    ember.compiler.reset()
    with pytest.raises(pickle.UnpicklingError, match="OptimizedModule was not an allowed global") as failed:
        run_example(ember, compiled, argv, tmp_path / "ember", monkeypatch)
    counters = ember._dynamo.utils.counters
    assert counters["stats"]["unique_graphs"] >= 1 and not counters["graph_break"], dict(counters)
    trained = torch_out.split("=" * 89 + "\n| End of training")[0]
    assert "valid loss" in trained and "End of training" not in failed.value.stdout
    timings = re.compile(r"ms/batch +[0-9.]+|time: +[0-9.]+s")
    assert_same_output(timings.sub("", failed.value.stdout), timings.sub("", trained), rtol=1e-3, atol=0.011)
