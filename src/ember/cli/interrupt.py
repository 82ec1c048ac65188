"""Ctrl-C that always stops the command.

Python raises ``KeyboardInterrupt`` in whatever Python code runs when SIGINT arrives. When that
code is a weakref callback or a ``__del__`` (ember's memory accounting runs one each time an
array dies, many times per training step), the interpreter cannot pass the exception on: it
reports it through ``sys.unraisablehook`` ("Exception ignored in ...") and carries on, so the
Ctrl-C is lost and the run goes on to its end. :func:`install` makes the hook send SIGINT to the
process again a moment later, outside the callback, where it stops the command as the user meant.
"""
import os
import signal
import sys
import threading

REDELIVERY_SECONDS = 0.01


def install():
    """Make a Ctrl-C swallowed by a callback arrive again; other unraisable errors are reported
    as before. Does nothing when SIGINT does not raise ``KeyboardInterrupt`` (a handler is set)."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return
    previous = sys.unraisablehook

    def hook(unraisable):
        if issubclass(unraisable.exc_type, KeyboardInterrupt):
            timer = threading.Timer(REDELIVERY_SECONDS, os.kill, (os.getpid(), signal.SIGINT))
            timer.daemon = True
            timer.start()
            return
        previous(unraisable)

    sys.unraisablehook = hook
