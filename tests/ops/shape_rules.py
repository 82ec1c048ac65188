"""The shape-rule checker: an observer of op dispatch that compares each op's ``Op.infer``
(computed without the kernel) with the ``(shape, dtype)`` of what the kernel returned.

Used by tests/ops/test_shape_rules.py's sweep and, under ``pytest --check-shape-rules``, by
every test of a run (tests/conftest.py)."""
import contextlib

from ember._ops import core


class RuleChecker(core.Observer):
    """Collects ``(op name, predicted, actual)`` for every call whose rule disagrees with its
    kernel (or raises where the kernel did not), and the set of ops it saw."""

    def __init__(self):
        self.seen, self.mismatches = set(), []

    def op_exit(self, op, inputs, attrs, output):
        if output is None:
            return  # the kernel refused the inputs
        self.seen.add(op)
        outputs = output if isinstance(output, tuple) else (output,)
        actual = tuple(None if out is None else (tuple(out.shape), out.dtype) for out in outputs)
        try:
            predicted = op.infer(*inputs, **attrs)
        except Exception as e:  # noqa: BLE001 - any failure of the rule is a finding
            predicted = f"{type(e).__name__}: {e}"
        if (predicted if isinstance(output, tuple) else (predicted,)) != actual:
            self.mismatches.append((op.name, predicted, actual))


@contextlib.contextmanager
def watching(checker):
    core.OBSERVERS.append(checker)
    try:
        yield checker
    finally:
        core.OBSERVERS.remove(checker)
