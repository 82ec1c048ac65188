"""``ember chat [CHECKPOINT]``: ask a trained GPT questions.

At a terminal it shows a ``> `` prompt and answers each question, until end of input
(Ctrl-D) or ``quit``/``exit``; Ctrl-C exits with status 130. With standard input piped in
it answers each line, one answer line per input line (an empty line gets an empty answer),
and prints no prompts; it stops quietly when the reader of its output goes away.

CHECKPOINT is a directory written by :func:`ember.models.qa.save_checkpoint`; without it,
the one the ``transformer`` milestone saves (``ember milestones run transformer``).
"""
import os
import sys

QUIT_WORDS = ("quit", "exit")


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
    from ..models.qa import MODEL_FILE, answer, load_checkpoint
    if args.checkpoint is None:
        from ..milestones.transformer import checkpoint_dir
        args.checkpoint = str(checkpoint_dir())
        if not (checkpoint_dir() / MODEL_FILE).exists():
            print(f"ember chat: no checkpoint at {args.checkpoint} yet; make one with "
                  f"'ember milestones run transformer' (a few minutes), or pass a checkpoint directory",
                  file=sys.stderr)
            return 1
    try:
        model, tokenizer = load_checkpoint(args.checkpoint)
    except (OSError, ValueError) as error:
        print(f"ember chat: cannot load {args.checkpoint}: {error}", file=sys.stderr)
        return 1
    try:
        return _answer_lines(args, model, tokenizer, answer)
    except KeyboardInterrupt:  # Ctrl-C: leave without a traceback, with the shell's status
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # whoever read the answers stopped (e.g. `| head -1`): stop too
        try:  # the interpreter's final flush of stdout would raise again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0


def _answer_lines(args, model, tokenizer, answer):
    interactive = sys.stdin.isatty()
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
        try:
            reply = answer(model, tokenizer, question, context)
        except ValueError as error:  # a question too long for the model's context
            print(f"ember chat: {error}", file=sys.stderr)
            reply = ""
        print(reply, flush=True)
        if args.follow_up:
            context = [{"question": question, "answer": reply}]
