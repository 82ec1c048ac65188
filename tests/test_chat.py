"""``ember chat``: a checkpoint saved by a test is answered from piped standard input (in a
subprocess) and at a terminal prompt; checkpoint files and their errors."""
import subprocess
import sys

import pytest

import ember
from ember.cli import main
from ember.models.gpt import GPT, GPTConfig
from ember.models.qa import GUESS_BELOW, answer, familiarity, load_checkpoint, load_questions, save_checkpoint
from ember.text import SPECIAL_TOKENS, CharTokenizer, format_qa, qa_blocks

PAIRS = [{"question": "Hi", "answer": "Hello!"}, {"question": "Bye", "answer": "Goodbye!"}]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A one-block GPT that has memorised PAIRS, saved as a checkpoint directory."""
    tokenizer = CharTokenizer.from_corpus(map(format_qa, PAIRS), SPECIAL_TOKENS)
    inputs, targets = map(ember.from_numpy, qa_blocks(PAIRS, tokenizer, 24, answer_only=True))
    ember.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, block_size=24, n_layer=1, n_head=2, n_embd=32))
    optimizer = ember.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(60):
        optimizer.zero_grad()
        _, loss = model(inputs, targets)
        loss.backward()
        optimizer.step()
    return save_checkpoint(model.eval(), tokenizer, tmp_path_factory.mktemp("gpt") / "checkpoint")


def test_checkpoint_round_trip(checkpoint):
    assert sorted(p.name for p in checkpoint.iterdir()) == ["model.pt", "tokenizer.json"]
    model, tokenizer = load_checkpoint(checkpoint)
    assert not model.training and model.config.block_size == 24
    assert model.lm_head.weight is model.token_embedding.weight
    assert [answer(model, tokenizer, pair["question"]) for pair in PAIRS] == ["Hello!", "Goodbye!"]


def test_answer_rejects_a_prompt_longer_than_the_block(checkpoint):
    model, tokenizer = load_checkpoint(checkpoint)
    with pytest.raises(ValueError, match="a prompt of 33 tokens plus max_new_tokens=0 exceeds block_size 24"):
        answer(model, tokenizer, "H" * 26)


def test_piped_stdin_gets_one_answer_per_line(checkpoint):
    run = subprocess.run([sys.executable, "-m", "ember", "chat", str(checkpoint)],
                         input="Hi\n\n  Bye  \nquit\nHi\n", capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["Hello!", "", "Goodbye!"]
    assert "> " not in run.stdout


def test_piped_stdin_reports_a_question_too_long_and_goes_on(checkpoint, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Stdin("H" * 30 + "\nBye"))
    assert main(["chat", str(checkpoint)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["", "Goodbye!"]
    assert "exceeds block_size 24" in err


def test_terminal_prompt_loop_until_quit_or_eof(checkpoint, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Stdin("", tty=True))
    for lines, expected in ((["Hi", "", "Bye", "quit", "Hi"], ["Hello!", "Goodbye!"]),
                            (["Bye", "/exit", "Hi"], ["Goodbye!"]), (["Bye"], ["Goodbye!", ""])):
        prompts = []
        fed = iter(lines)

        def fake_input(prompt):
            prompts.append(prompt)
            try:
                return next(fed)
            except StopIteration:
                raise EOFError from None
        monkeypatch.setattr("builtins.input", fake_input)
        assert main(["chat", str(checkpoint)]) == 0
        banner, *answers = capsys.readouterr().out.split("\n")[:-1]
        assert banner.startswith("ember chat: a 1-block character-level GPT (") and answers == expected
        assert set(prompts) == {"> "}


def test_banner_examples_and_guesses(checkpoint, tmp_path, capsys, monkeypatch):
    model, tokenizer = load_checkpoint(checkpoint)
    known = [dict(pair, category="greetings") for pair in PAIRS]
    directory = save_checkpoint(model, tokenizer, tmp_path / "with-questions", pairs=known)
    assert load_questions(directory) == [{"question": "Hi", "category": "greetings"},
                                         {"question": "Bye", "category": "greetings"}]
    monkeypatch.setattr(sys, "stdin", _Stdin("", tty=True))
    fed = iter(["/examples", "Hi", "Why?"])

    def fake_input(prompt):
        try:
            return next(fed)
        except StopIteration:
            raise EOFError from None
    monkeypatch.setattr("builtins.input", fake_input)
    assert main(["chat", str(directory)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ember chat: a 1-block character-level GPT")
    assert "memorised the answers to 2 questions of ember's bundled Q&A set (greetings)" in out[1]
    assert "/examples" in out[2]
    assert out[3:6] == ["Hi", "Bye", "Hello!"]  # /examples, then a known question's answer unmarked
    assert out[6].startswith("(guess) ")


def test_familiarity_is_letter_triple_overlap():
    known = ["What is the capital of France?", "How many legs does a spider have?"]
    assert familiarity("what is the capital of france", known) == 1.0
    assert familiarity("What is the capital of Spain?", known) > GUESS_BELOW
    assert familiarity("Who painted the Mona Lisa?", known) < GUESS_BELOW
    assert familiarity("anything", []) == 0.0


def test_follow_up_passes_the_previous_turn(checkpoint, monkeypatch, capsys):
    seen = []
    monkeypatch.setattr("ember.models.qa.answer",
                        lambda model, tokenizer, question, context: seen.append(context) or question)
    monkeypatch.setattr(sys, "stdin", _Stdin("Hi\nBye\n"))
    assert main(["chat", "--follow-up", str(checkpoint)]) == 0
    assert seen == [[], [{"question": "Hi", "answer": "Hi"}]]
    assert capsys.readouterr().out == "Hi\nBye\n"


def test_missing_or_broken_checkpoint(tmp_path, capsys):
    assert main(["chat", str(tmp_path)]) == 1
    assert f"cannot load {tmp_path}: {tmp_path} is not a GPT checkpoint: it has no model.pt" in \
        capsys.readouterr().err
    (tmp_path / "model.pt").write_bytes(b"not a zip")
    (tmp_path / "tokenizer.json").write_text('{"format": "Other"}')
    with pytest.raises(ValueError, match="tokenizer.json: not a tokenizer file of ember.text"):
        load_checkpoint(tmp_path)


def _copy_checkpoint(checkpoint, directory):
    for name in ("model.pt", "tokenizer.json"):
        (directory / name).write_bytes((checkpoint / name).read_bytes())
    return directory


@pytest.mark.parametrize("damage, message", [
    ("truncated", "is not a PyTorch or ember checkpoint, or it is truncated or corrupt"),
    ("config", "'config' is not a GPTConfig: .*unexpected keyword argument 'foo'"),
    ("weights", "(?s)the weights do not fit the config: .*Missing key"),
    ("vocab", "the model has vocab_size 7 but tokenizer.json has 20 tokens"),
    ("no_bos", "tokenizer.json: the tokenizer has no <bos> or <eos> token"),
])
def test_damaged_checkpoint_is_reported_not_a_traceback(checkpoint, tmp_path, capsys, damage, message):
    directory = _copy_checkpoint(checkpoint, tmp_path)
    saved = ember.load(directory / "model.pt")
    if damage == "truncated":
        data = (directory / "model.pt").read_bytes()
        (directory / "model.pt").write_bytes(data[:len(data) // 2])
    elif damage == "config":
        ember.save({"model": saved["model"], "config": {"foo": 1}}, directory / "model.pt")
    elif damage == "weights":
        ember.save({"model": {}, "config": saved["config"]}, directory / "model.pt")
    elif damage == "vocab":
        config = dict(saved["config"], vocab_size=7)
        model = GPT(GPTConfig(**config))
        ember.save({"model": model.state_dict(), "config": config}, directory / "model.pt")
    else:
        CharTokenizer.from_corpus(map(format_qa, PAIRS)).save(directory / "tokenizer.json")
    with pytest.raises(ValueError, match=message):
        load_checkpoint(directory)
    assert main(["chat", str(directory)]) == 1
    assert f"ember chat: cannot load {directory}: " in capsys.readouterr().err


def test_ctrl_c_exits_quietly_with_status_130(checkpoint, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", _Stdin("", tty=True))

    def interrupted(prompt):
        raise KeyboardInterrupt
    monkeypatch.setattr("builtins.input", interrupted)
    assert main(["chat", str(checkpoint)]) == 130
    assert capsys.readouterr().err == "\n"


def test_output_closed_by_its_reader_stops_without_a_traceback(checkpoint):
    # `ember chat CHECKPOINT < questions | head -1`: the pipe closes after the first answer.
    chat = subprocess.Popen([sys.executable, "-m", "ember", "chat", str(checkpoint)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chat.stdin.write(b"Hi\n" * 2000)
    chat.stdin.close()
    assert chat.stdout.readline() == b"Hello!\n"
    chat.stdout.close()
    assert chat.wait(timeout=120) == 0
    assert chat.stderr.read() == b""


def test_cli_lists_chat(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "chat" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["chat", "--help"])
    assert exit_info.value.code == 0
    assert "[CHECKPOINT]" in capsys.readouterr().out


def test_chat_without_a_path_answers_from_the_default_checkpoint(checkpoint, tmp_path, monkeypatch, capsys):
    _copy_checkpoint(checkpoint, (tmp_path / "ember" / "transformer").mkdir(parents=True) or
                     tmp_path / "ember" / "transformer")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "stdin", _Stdin("What is 2 + 2?\n", tty=False))
    assert main(["chat"]) == 0
    assert capsys.readouterr().out.strip() != ""


class _Stdin:
    """A stand-in for ``sys.stdin``: lines to read, and whether it is a terminal."""

    def __init__(self, text, tty=False):
        self.lines = text.splitlines(keepends=True)
        self.tty = tty

    def isatty(self):
        return self.tty

    def readline(self):
        return self.lines.pop(0) if self.lines else ""
