"""The 2017 ``transformer`` milestone: fast settings meet the thresholds, the printed answers
and the saved checkpoint, the data and batching helpers, registration and the CLI."""
import contextlib
import io

import numpy as np
import pytest

import ember
from ember import milestones
from ember.cli import main
from ember.compiler.dynamic import marks
from ember.milestones import transformer
from ember.models.qa import answer, load_checkpoint
from ember.text import load_qa


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The milestone run once with fast settings: (result, printed text, checkpoint dir)."""
    directory = tmp_path_factory.mktemp("transformer") / "gpt"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = transformer.milestone(out_dir=directory).run(fast=True, quiet=True)
    return result, printed.getvalue(), directory


def test_fast_run_meets_the_thresholds(run):
    result, _, _ = run
    assert result.metrics["reversal exact match"] >= 0.95
    assert result.metrics["GPT training loss"] <= 0.1
    assert result.metrics["GPT training answers exact"] >= 0.9
    assert result.passed
    reversal, chat = result.histories.values()
    assert len(reversal.loss) == 4 and len(chat.loss) == transformer.FAST_GPT_EPOCHS
    assert chat.loss[-1] < chat.loss[0] / 4
    assert chat.accuracy[-1] == result.metrics["GPT training answers exact"]


def test_prints_answers_to_training_and_held_out_questions(run):
    _, printed, directory = run
    pairs = load_qa("train")[::transformer.FAST_TRAIN_EVERY]
    assert f"trained on {len(pairs)} pairs" in printed
    assert printed.count("[train] Q: ") == transformer.SHOWN_TRAIN
    assert printed.count("[held-out] Q: ") == transformer.SHOWN_HELD_OUT
    assert load_qa("validation")[0]["question"] in printed
    assert "held-out check: " in printed and f"of the {len(load_qa('validation'))} validation answers" in printed
    assert f"saved the GPT to {directory} (try: ember chat {directory})" in printed


def test_saved_checkpoint_answers_as_trained(run):
    result, printed, directory = run
    model, tokenizer = load_checkpoint(directory)
    pairs = load_qa("train")[::transformer.FAST_TRAIN_EVERY]
    replies = [answer(model, tokenizer, p["question"], p.get("context", ())) for p in pairs]
    exact = np.mean([reply == p["answer"] for reply, p in zip(replies, pairs)])
    # The teacher-forced metric and greedy KV-cached generation agree.
    assert exact == pytest.approx(result.metrics["GPT training answers exact"])
    first = pairs[0]
    assert f"A: {replies[0]}  (" in printed
    ids = [tokenizer.bos_id] + tokenizer.encode(f"Q: {first['question']}\nA:")
    cached = model.generate(ember.tensor([ids]), 30, top_k=1)
    assert ember.equal(cached, model.generate(ember.tensor([ids]), 30, top_k=1, use_cache=False))


def test_checkpoint_dir_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert transformer.checkpoint_dir() == tmp_path / "ember" / "transformer"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert transformer.checkpoint_dir() == tmp_path / "home" / ".cache" / "ember" / "transformer"


def test_reversal_data_is_disjoint_and_reversed():
    x_train, y_train, x_test, y_test = transformer.reversal_data(seed=3)
    assert tuple(x_train.shape) == (2000, 8) and tuple(x_test.shape) == (1000, 8)
    assert x_train.dtype == ember.int64
    np.testing.assert_array_equal(y_train.numpy(), x_train.numpy()[:, ::-1])
    np.testing.assert_array_equal(y_test.numpy(), x_test.numpy()[:, ::-1])
    rows = {tuple(r) for r in x_train.tolist()}
    assert len(rows) == 2000 and not rows & {tuple(r) for r in x_test.tolist()}
    assert int(x_train.min()) == 0 and int(x_train.max()) == 9


def test_exact_match_counts_whole_rows():
    logits = ember.zeros(3, 2, 4)
    logits[:, 0, 1] = 1.0
    logits[:, 1, 2] = 1.0
    targets = ember.tensor([[1, 2], [1, 3], [1, -100]])
    assert transformer.exact_match(logits, targets) == pytest.approx(2 / 3)


def test_length_batches_cover_every_row_once_and_cut_padding():
    lengths = np.array([5, 3, 9, 2, 7, 4, 8])
    inputs = np.arange(7 * 10).reshape(7, 10)
    batches = transformer.LengthBatches(inputs, inputs + 1000, lengths, batch_size=3, seed=0)
    for _ in range(2):
        seen = []
        for x, y in batches:
            rows = x.numpy()[:, 0] // 10
            assert x.shape[1] == lengths[rows].max()
            np.testing.assert_array_equal(y.numpy(), x.numpy() + 1000)
            seen += rows.tolist()
            for t in (x, y):  # one compiled graph for every batch (ember milestones run transformer --compile)
                assert marks(t, "dynamic") == {0: (2, 3), 1: (2, 10)}
        assert sorted(seen) == list(range(7))


def test_registered_and_listed(capsys):
    assert milestones.get("transformer") is transformer.MILESTONE
    assert transformer.MILESTONE.year == 2017
    ladder = list(milestones.MILESTONES)
    assert ladder[ladder.index("lenet") + 1] == "transformer"
    assert main(["milestones", "list"]) == 0
    listed = capsys.readouterr().out
    assert "transformer" in listed and "2017" in listed and "GPT training answers exact >= 0.90" in listed
