"""torch's ``TORCH_WARN_ONCE``: a deprecation warning given the first time only, per process.

Each warning is known by its message; :data:`GIVEN` holds those already given (a test that wants
to see one again removes its message)."""
import warnings

GIVEN = set()


def warn_once(message, category=UserWarning):
    """Warns ``message`` (``category``), pointing at the user's line (the first frame outside
    ember), unless it was given before in this process."""
    if message not in GIVEN:
        from ._ops.args import caller_level
        GIVEN.add(message)
        warnings.warn(message, category, stacklevel=caller_level())
