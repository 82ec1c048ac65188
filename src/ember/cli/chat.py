"""``ember chat [CHECKPOINT]``: ask a trained GPT questions.

At a terminal it first says what the model is and what it knows, shows a ``> `` prompt and
answers each question, until end of input (Ctrl-D) or ``quit``/``exit``; ``/examples`` lists
questions it was trained on; Ctrl-C exits with status 130. An answer to a question far from
every training question (:func:`ember.models.qa.familiarity`) starts with ``(guess)``. With standard input piped in
it answers each line, one answer line per input line (an empty line gets an empty answer),
and prints no prompts; it stops quietly when the reader of its output goes away.

CHECKPOINT is a directory written by :func:`ember.models.qa.save_checkpoint`; without it,
the one the ``transformer`` milestone saves (``ember milestones run transformer``).
"""
import os
import sys

from ..milestones.transformer import checkpoint_dir
from ..models import qa

QUIT_WORDS = ("quit", "exit", "/quit", "/exit")  # the slash forms, as /examples


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "chat", help="ask a trained GPT questions",
        description="Ask a trained GPT questions: a '> ' prompt at a terminal, or one answer per "
                    "line of piped standard input. Exit with Ctrl-D, 'quit' or 'exit'.")
    parser.add_argument("checkpoint", metavar="CHECKPOINT", nargs="?",
                        help="checkpoint directory (model.pt and tokenizer.json); default: the one "
                             "'ember milestones run transformer' saves")
    parser.add_argument("--follow-up", action="store_true",
                        help="show the model the previous question and answer as context, as in "
                             "the training data's follow-up questions")
    parser.set_defaults(handler=chat)


def chat(args):
    if args.checkpoint is None:
        args.checkpoint = str(checkpoint_dir())
        if not (checkpoint_dir() / qa.MODEL_FILE).exists():
            print(f"ember chat: no checkpoint at {args.checkpoint} yet; make one with "
                  f"'ember milestones run transformer' (a few minutes), or pass a checkpoint directory",
                  file=sys.stderr)
            return 1
    try:
        model, tokenizer = qa.load_checkpoint(args.checkpoint)
    except (OSError, ValueError) as error:
        print(f"ember chat: cannot load {args.checkpoint}: {error}", file=sys.stderr)
        return 1
    try:
        return _answer_lines(args, model, tokenizer, Knowledge(args.checkpoint, model))
    except KeyboardInterrupt:  # Ctrl-C: leave without a traceback, with the shell's status
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # whoever read the answers stopped (e.g. `| head -1`): stop too
        try:  # the interpreter's final flush of stdout would raise again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0


class Knowledge:
    """What the checkpoint's model was trained on (its ``questions.json``), for the banner,
    ``/examples`` and marking guesses."""

    def __init__(self, checkpoint, model):
        self.model = model
        self.known = qa.load_questions(checkpoint)
        self.questions = [q["question"] for q in self.known]

    def banner(self):
        config = self.model.config
        parameters = sum(p.numel() for p in self.model.parameters())
        what = (f"ember chat: a {config.n_layer}-block character-level GPT ({parameters:,} parameters, "
                f"context {config.block_size} characters).")
        if not self.known:
            return what + " Type quit or press Ctrl-D to leave."
        categories = ", ".join(dict.fromkeys(q["category"] for q in self.known))
        return (f"{what}\nIt memorised the answers to {len(self.known)} questions of ember's bundled Q&A set "
                f"({categories}) and answers those and close variants; it knows nothing else, so an answer "
                f"to a question far from all of them is made up and marked (guess).\n"
                f"Type /examples to see questions it was trained on, quit or Ctrl-D to leave.")

    def examples(self, count=10):
        step = max(1, len(self.questions) // count)
        return self.questions[::step][:count]

    def mark(self, question, reply):
        if self.questions and qa.familiarity(question, self.questions) < qa.GUESS_BELOW:
            return f"(guess) {reply}"
        return reply


def _answer_lines(args, model, tokenizer, knowledge):
    interactive = sys.stdin.isatty()
    if interactive:
        print(knowledge.banner())
    context = []
    while True:
        try:
            line = input("> ") if interactive else sys.stdin.readline()
        except EOFError:
            print()
            return 0
        if not interactive and not line:
            return 0
        question = line.strip()
        if question.lower() in QUIT_WORDS:
            return 0
        if not question:
            if not interactive:
                print()
            continue
        if interactive and question == "/examples":
            print("\n".join(knowledge.examples()) or "(this checkpoint does not list its training questions)")
            continue
        try:
            reply = qa.answer(model, tokenizer, question, context)
        except ValueError as error:  # a question too long for the model's context
            print(f"ember chat: {error}", file=sys.stderr)
            reply = ""
        print(knowledge.mark(question, reply) if reply else reply, flush=True)
        if args.follow_up:
            context = [{"question": question, "answer": reply}]
