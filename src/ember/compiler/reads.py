"""The reads of a guard walk: closure cells, globals, default values and user classes' attributes,
each re-read on every call (:func:`reads_hold`) to tell whether the walk of :class:`~.guards.World` stands."""
import itertools
import operator

from .contents import container, function_like, same, scalar

__all__ = ["class_attributes", "reads_hold"]

_MISSING = object()


def class_attributes(cls, reads):
    """The Python values a user class holds (``scale = 2.0``, read as ``Config.scale`` or as
    ``self.scale``; its functions: ``act = staticmethod(torch.tanh)``): a graph has them baked
    in, so they are guarded, and the class is re-read on every call (a rebound attribute is a
    new walk, and a recompile, as torch's guards on them)."""
    reads.append((_class_values, (cls,), _class_values(cls)))
    return [v for k, v in vars(cls).items()
            if not k.startswith("__") and (scalar(v) or container(v) or function_like(v))]


def _class_values(cls):
    """A class's own attributes (compared by identity: one rebound is seen)."""
    return tuple(vars(cls).values())


def _defaults(fn):
    """The default values of ``fn``'s parameters, positional and keyword-only."""
    return [*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()]


def _read(cells, globals_, names):
    """The contents of closure ``cells`` and the ``globals_`` named (``_MISSING`` where none)."""
    try:
        values = list(map(_CONTENTS, cells))
    except ValueError:  # an empty cell
        values = [_cell_contents(cell) for cell in cells]
    values += map(globals_.get, names, itertools.repeat(_MISSING, len(names)))
    return values


_CONTENTS = operator.attrgetter("cell_contents")


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


def reads_hold(reads):
    """Whether each read of a walk (``(read, arguments, values)``) gives the same objects again."""
    for read, arguments, values in reads:
        if not same(read(*arguments), values):
            return False
    return True
