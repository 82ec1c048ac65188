"""``torch.export.Dim`` and export's ``dynamic_shapes=`` forms, read as a dynamic shape spec.

torch's forms (https://pytorch.org/docs/stable/export.html#expressing-dynamism): a dict keyed
by ``forward``'s argument names, or a tuple/list matching the positional arguments; per tensor a
dict ``{dim: Dim}`` or a sequence with one entry per dimension; per list/tuple/dict argument the
same structure nested; ``None``/``Dim.STATIC`` for static. Each becomes a
:class:`~ember.fx.experimental.dynamic_spec.ShapesSpec` (``Dim`` is a ``ShapeVar``), so export
reads torch's forms and 2.14's ``dynamic_spec`` forms alike.
"""
import inspect
import itertools
import math

from .._tensor import Tensor
from ..compiler.exc import UserError
from ..compiler.symbolic import Expr
from ..fx.experimental.dynamic_spec import (DictSpec, IntVar, ObjectSpec, ParamsSpec, SeqSpec, ShapesSpec,
                                            ShapeVar, TensorSpec, resolve_dynamic_shapes)

__all__ = ["Dim", "ValueRanges", "shapes_spec"]

_SPECS = (ShapesSpec, ParamsSpec)
_ENTRY_SPECS = (TensorSpec, DictSpec, SeqSpec, ObjectSpec, IntVar)


class _DimHint:
    """``Dim.AUTO`` (dynamic where the program allows, else static), ``Dim.DYNAMIC`` (must be
    dynamic), ``Dim.STATIC`` (static)."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"DimHint({self.kind})"


class Dim(ShapeVar):
    """A named dynamic dimension of an exported program (``torch.export.Dim``): sizes in
    ``[min, max]`` (``min`` default 0, ``max`` default unbounded). ``2 * dim`` or ``dim + 1``
    declares a dimension derived from it.

    Raises:
        ValueError: ``min < 0``; ``max < min``.
    """
    __slots__ = ()

    def __init__(self, name, *, min=None, max=None):
        min = 0 if min is None else min
        if max is not None and max < min:
            raise ValueError(f"Dim {name!r}: max ({max}) must be >= min ({min})")
        super().__init__(name, min=min, max=max)

    def __repr__(self):
        bounds = ([] if self.min == 2 else [f"min={self.min}"]) + ([] if self.max is None else [f"max={self.max}"])
        return f"Dim({', '.join([repr(self.name)] + bounds)})"


Dim.AUTO, Dim.DYNAMIC, Dim.STATIC = _DimHint("AUTO"), _DimHint("DYNAMIC"), _DimHint("STATIC")


class ValueRanges:
    """The range of a size symbol in ``ExportedProgram.range_constraints``: ``lower`` and
    ``upper`` (``math.inf`` when unbounded), printed ``VR[2, 64]`` / ``VR[0, int_oo]`` as torch's."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, math.inf if upper is None else upper

    def __eq__(self, other):
        return isinstance(other, ValueRanges) and (self.lower, self.upper) == (other.lower, other.upper)

    def __repr__(self):
        return f"VR[{self.lower}, {'int_oo' if self.upper == math.inf else self.upper}]"


def shapes_spec(mod, args, kwargs, dynamic_shapes):
    """The spec in effect for exporting ``mod`` on ``(args, kwargs)``: ``(ShapesSpec or None,
    names of the symbols that may be specialised)`` (``Dim.AUTO``'s).

    Raises:
        ValueError: both ``@dynamic_spec`` on ``forward`` and ``dynamic_shapes=``.
        ember._dynamo.exc.UserError: a dict naming arguments ``forward`` lacks, a sequence of
            another length than the arguments, a spec whose structure does not match its
            argument, a dimension index out of range (torch's messages).
    """
    if dynamic_shapes is None or isinstance(dynamic_shapes, _SPECS) or (
            isinstance(dynamic_shapes, dict) and all(v is None or isinstance(v, _ENTRY_SPECS)
                                                     for v in dynamic_shapes.values())
            and any(isinstance(v, _ENTRY_SPECS) for v in dynamic_shapes.values())):
        return resolve_dynamic_shapes(mod, dynamic_shapes), set()
    resolve_dynamic_shapes(mod, None)  # a decorated forward refuses dynamic_shapes= too
    bound = inspect.signature(mod.forward).bind(*args, **kwargs)
    names = list(bound.arguments)
    if isinstance(dynamic_shapes, dict):
        if set(dynamic_shapes) != set(names):
            raise UserError(f"When `dynamic_shapes` is specified as a dict, its top-level keys must be the arg "
                            f"names {names} of `inputs`, but here they are {list(dynamic_shapes)}. Alternatively, "
                            f"you could also ignore arg names entirely and specify `dynamic_shapes` as a "
                            f"list/tuple matching `inputs`.")
        given = dynamic_shapes
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(names):
            raise UserError(f"When `dynamic_shapes` is specified as a list/tuple, its length must match the "
                            f"number of inputs ({len(names)}), but got {len(dynamic_shapes)}")
        given = dict(zip(names, dynamic_shapes))
    else:
        raise UserError(f"dynamic_shapes must be a dict, tuple or list, got {type(dynamic_shapes).__name__}")
    auto, fresh = set(), (f"s{k}" for k in itertools.count())
    taken = set()
    params = {name: _entry(spec, bound.arguments[name], name, auto, fresh, taken)
              for name, spec in given.items()}
    return ShapesSpec(params), auto


def _entry(spec, value, where, auto, fresh, taken):
    """The dynamic_spec entry of torch's ``spec`` for argument value ``value``."""
    if spec is None or spec is Dim.STATIC:
        return None
    if isinstance(value, Tensor):
        if isinstance(spec, dict):
            for d in spec:
                if not isinstance(d, int) or not -value.dim() <= d < value.dim():
                    raise UserError(f"Dynamic shape dimension {d!r} of {where} is out of range for a tensor of "
                                    f"{value.dim()} dimensions (shape {list(value.shape)})")
            per_dim = [spec.get(d, spec.get(d - value.dim())) for d in range(value.dim())]
        elif isinstance(spec, (tuple, list)) and len(spec) == value.dim():
            per_dim = list(spec)
        else:
            raise UserError(f"Expected dynamic shape spec of {where} (a tensor of shape {list(value.shape)}) to be "
                            f"a dict {{dim: Dim}} or a sequence of {value.dim()} entries, got {spec!r}")
        return TensorSpec([_dim(s, f"{where}.size({d})", auto, fresh, taken) for d, s in enumerate(per_dim)])
    if isinstance(value, (tuple, list)) and isinstance(spec, (tuple, list)) and len(spec) == len(value):
        return SeqSpec([_entry(s, v, f"{where}[{i}]", auto, fresh, taken) for i, (s, v) in enumerate(zip(spec, value))])
    if isinstance(value, dict) and isinstance(spec, dict) and set(spec) <= set(value):
        return DictSpec({k: _entry(s, value[k], f"{where}[{k!r}]", auto, fresh, taken) for k, s in spec.items()})
    raise UserError(f"Expected dynamic shape spec of {where} to match its value's structure "
                    f"({type(value).__name__}), got {spec!r}")


def _dim(spec, where, auto, fresh, taken):
    if spec is None or spec is Dim.STATIC:
        return None
    if isinstance(spec, _DimHint):  # torch's AUTO/DYNAMIC dims start at 2 (sizes 0 and 1 specialise)
        name = next(n for n in fresh if n not in taken)
        if spec is Dim.AUTO:
            auto.add(name)
        return ShapeVar(name, min=2)
    if isinstance(spec, Expr):
        taken.add(getattr(spec, "name", None))
        return spec
    raise UserError(f"Unexpected dynamic shape of {where}: {spec!r} (expected a Dim, Dim.AUTO, Dim.DYNAMIC, "
                    f"Dim.STATIC or None)")
