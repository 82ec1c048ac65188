"""Python's ``math`` functions and the built-in ``min``/``max`` while int or float arguments are
traced (:mod:`.traced_ints`): ``math.sqrt(lr)`` of a traced float is a traced float (an input
Python computes at each call), ``min(k, 8)`` of traced ints a traced int whose expression is
torch's ``sym_min``. :func:`patch_math` and :func:`patch_minmax` put the tracing versions in place
for a recording, :func:`unpatch_math` puts the originals back."""
import builtins
import math

from .patches import patch, unpatch
from .structure import user_frame
from .symbolic import Expr, minimum
from .traced_ints import MINMAX, FloatInt, TracedFloat, TracedInt, _from_user

__all__ = ["MATH", "patch_math", "unpatch_math", "patch_minmax"]

# ``math``'s functions of one float that torch 2.13 traces (``math.exp``, ``log``, ``fabs``, ``erf``
# ... it specialises): while floats are traced, ``math.sqrt(lr)`` called from the user's code makes a
# traced float (the graph takes what Python computes at each call)
MATH = ("sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "log2", "radians")
# those giving a float of every finite float: of a float made from traced ints (``math.cos(math.pi * k / 6)``)
# no guard is needed (its graph input computed by Python at each call, as ``k * 0.5``'s)
_TOTAL = {"sin", "cos", "tan", "atan", "tanh", "radians"}


def _traced_math(name, original):
    def traced(*args):
        result = original(*args)
        x = args[0] if len(args) == 1 else None
        if type(x) is TracedFloat and x.uses[0].active and type(result) is float and _from_user() and (all(
                seen.floats for seen in x.uses) or name in _TOTAL):  # (``math.cos(k / 6)``: an input Python computes)
            return TracedFloat(result, x.uses, (f"math.{name}", x))
        for f in args:  # (``math.log(lr, 2)``: its value read unseen)
            if type(f) is TracedFloat and f.uses[0].active:
                for seen in f.uses:
                    seen.append(("math", f"{user_frame()} (math.{name})"))
            elif hasattr(type(f), "read_unseen") and _from_user():  # (an optimizer group's entry: group_writes)
                f.read_unseen()
        return result
    traced.__name__, traced.__doc__ = name, original.__doc__
    return traced


def patch_math():
    """Puts tracing versions of :data:`MATH`'s functions into ``math`` (a float argument traced:
    ``math.sqrt(lr)`` is traced too); returns what :func:`unpatch_math` puts back."""
    return patch(math, MATH, _traced_math)


def unpatch_math(saved, module=math):
    """Puts back ``math``'s functions (:func:`patch_math`), or ``module``'s, once the last
    recording that patched them ends (:func:`.patches.unpatch`)."""
    unpatch(saved, module)


def _traced_minmax(name, original):
    def traced(*args, **kwargs):
        if len(args) > 1 and not kwargs and any(type(a) is TracedInt for a in args) and all(
                type(a) is int or type(a) is TracedInt and a.expr is not None and a.uses.active for a in args) \
                and _from_user():  # (``min(k, 8)``: an expression of the symbols, as torch's sym_min)
            uses = next(a.uses for a in args if type(a) is TracedInt)
            expr, value = args[0].expr if type(args[0]) is TracedInt else int(args[0]), int.__int__(args[0])
            for a in args[1:]:
                e, v = a.expr if type(a) is TracedInt else int(a), int.__int__(a)
                made = minimum(name, expr, e)
                if isinstance(made, Expr):  # (which operand it took: guarded where it sizes a value)
                    MINMAX[made] = ("__lt__", 0, value - v < 0, expr - e) if isinstance(expr, Expr) else (
                        "__gt__", 0, v - value > 0, e - expr)
                expr, value = made, original(value, v)
            return TracedInt(value, uses, expr)
        found = _float_ints(name, args)  # (``max(round(lr), 2.5)``)
        if found and _from_user():
            _note_uses(name, found)
        return original(*args, **kwargs)
    traced.__name__, traced.__doc__ = name, original.__doc__
    return traced


def _float_ints(name, args):
    """The :class:`FloatInt` among a built-in's arguments (or the items of its one list or tuple:
    ``sum([0.5, round(lr)])``) while recorded: ``max(round(lr), 2.5)``, ``divmod(7.0, int(lr))``,
    ``pow(1.5, round(lr))`` compare or compute with a float's own C methods, which read the int's
    digits unseen; called from the user's code, each is a use (a graph per value, not a stale one)."""
    items = args[0] if len(args) == 1 or args and name in ("sum", "sorted") else args
    items = (*items, *args[1:]) if type(items) in (list, tuple) and items is not args else args
    return [a for a in items if type(a) is FloatInt and a.uses[0].active]


def _note_uses(name, found):
    for seen in {id(u): u for a in found for u in a.uses}.values():
        seen.append((name, user_frame()))


def _noting_read(name, original):
    def noting(*args, **kwargs):
        found = _float_ints(name, args)
        if found and _from_user():
            _note_uses(name, found)
        return original(*args, **kwargs)
    noting.__name__, noting.__doc__ = name, original.__doc__
    return noting


def patch_minmax():
    """Puts tracing versions of the built-in ``min`` and ``max`` into :mod:`builtins` while int
    or float arguments are traced: ``min(k, 8)``, ``max(k, j)`` of traced ints and ints, called from the
    user's code, is a traced int (torch's ``sym_min``), not two comparisons; and versions of
    ``divmod``, ``pow``, ``sum`` and ``sorted`` noting a use of an int of a traced float they
    are given (:func:`_float_ints`); returns what :func:`unpatch_math` puts back (with ``module=builtins``)."""
    return {**patch(builtins, ("min", "max"), _traced_minmax),
            **patch(builtins, ("divmod", "pow", "sum", "sorted"), _noting_read)}
