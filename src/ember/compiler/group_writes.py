"""Writes into an optimizer's param groups during a recorded call (``group["lr"] = lr``).

A graph reads an optimizer's hyperparameters from its groups at each call (``sources``'
``"hyper"`` inputs) and never writes them, so a call that writes a group has a side effect a
replay would lose: ``step(x, 0.1)``, ``step(x, 0.2)``, ``step(x, 0.1)`` replaying the first
graph left ``lr`` at 0.2. A write of the value a group already holds changes nothing a
comparison sees, so :func:`group_state` compares the entries by identity, having first put
a fresh copy of each float there (``stamp``): the call's write, even of an equal float (the
argument the optimizer was made with), is a new object. (A write of an equal small int or a
bool, which Python shares, stays unseen: it changes nothing the replay reads.)
"""

__all__ = ["group_state"]


class _Entries:
    """The entries of an optimizer's groups (their objects held: no id is reused), equal to
    another's where each group has the same keys holding the same objects."""

    def __init__(self, groups):
        self.entries = [tuple(g.items()) for g in groups]

    def __eq__(self, other):
        return type(other) is _Entries and len(self.entries) == len(other.entries) and all(
            len(a) == len(b) and all(ka == kb and va is vb for (ka, va), (kb, vb) in zip(a, b))
            for a, b in zip(self.entries, other.entries))

    __hash__ = None

    def __repr__(self):
        return f"param groups {self.entries!r}"


def group_state(optimizers, stamp=False):
    """What :func:`~.side_effects.python_state` compares of the ``optimizers``' groups,
    ``{where: entries}``: each entry by identity; with ``stamp`` (before the call) each float
    entry is first replaced by an equal new float (``-0.0`` and nan kept), so that any write shows."""
    for g in (g for opt in optimizers for g in opt.param_groups) if stamp else ():
        for key, value in g.items():
            if type(value) is float:
                g[key] = value * 1.0
    return {f"a param group of optimizer {k} ({type(opt).__name__})": _Entries(opt.param_groups)
            for k, opt in enumerate(optimizers)}
