"""Declared dynamic shapes (``torch.fx.experimental.dynamic_spec``, PyTorch 2.14).

Which tensor dimensions of a function's arguments change, and within which ranges, declared
once on the function and read by ``ember.compile``::

    B = ShapeVar("B", max=64)

    @dynamic_spec(ShapesSpec({"x": TensorSpec([B, STATIC])}, assumptions=[B % 2 == 0]))
    def f(x): ...

A :class:`ShapeVar` (``min=0``) or :class:`IntVar` is a size symbol (an
:class:`ember.compiler.symbolic.Expr`), so ``B * 2 + 1`` is a derived size and ``B % 2 == 0`` an
assumption. At each call the declared sizes are read from the arguments and checked: a size
outside its ``[min, max]``, a derived size that is not its expression, a pinned size that
differs or a false assumption raises RuntimeError naming the variable, the argument and the
sizes; a compiled graph is never silently recompiled for them. Dimensions not declared
(``STATIC`` or None) are static: guarded, recompiled when they change.
"""
import functools
import inspect
import itertools
import math

from ..._tensor import Tensor
from ...compiler.capture import flatten
from ...compiler.dynamic import ARG
from ...compiler.symbolic import Cond, Expr, evaluate, free_symbols

__all__ = ["ShapeVar", "IntVar", "STATIC", "TensorSpec", "ObjectSpec", "DictSpec", "SeqSpec",
           "ParamsSpec", "ShapesSpec", "dynamic_spec", "resolve_dynamic_shapes"]

STATIC = None  # a static dimension (torch's readable alias of None)
_INDENT = "  "
_ATTR = "_dynamic_spec"


class IntVar(Expr):
    """A dynamic integer (``torch.fx.experimental.dynamic_spec.IntVar``): a size symbol named
    ``name``, optionally bounded by ``min``/``max`` (inclusive). Arithmetic builds derived sizes
    (``A * 2 + 1``), comparisons build assumptions (``A % 2 == 0``). ``optimization_hint`` is kept
    for torch's API (ember's probes start from the sizes of the first call)."""
    _uids = itertools.count()

    def __init__(self, name=None, *, min=None, max=None, optimization_hint=None):
        self.name = name if name is not None else f"anon{next(IntVar._uids)}"
        super().__init__("sym", (self.name,))
        self.min, self.max, self.optimization_hint = min, max, optimization_hint

    __slots__ = ("name", "min", "max", "optimization_hint")

    def __repr__(self):
        parts = [self.name] + [f"{k}={v}" for k, v in (("min", self.min), ("max", self.max),
                                                         ("optimization_hint", self.optimization_hint))
                               if v is not None]
        return f"{type(self).__name__}({', '.join(parts)})"


class ShapeVar(IntVar):
    """A dynamic tensor dimension (``>= 0``): ``ShapeVar("batch", max=64)``.

    Raises:
        ValueError: ``min < 0``.
    """
    __slots__ = ()

    def __init__(self, name=None, *, min=0, max=None, optimization_hint=None):
        if min < 0:
            raise ValueError(f"ShapeVar requires min >= 0 (a dimension is non-negative); got min={min}. "
                             f"Use IntVar(...) for an unrestricted integer.")
        super().__init__(name, min=min, max=max, optimization_hint=optimization_hint)


class TensorSpec:
    """Per-dimension spec of a tensor argument: an IntVar/ShapeVar (dynamic), an expression of
    them (derived), an int (pinned to that size) or ``STATIC``/None, one per dimension.

    Raises:
        TypeError: an entry of another type.
    """

    def __init__(self, dims):
        for i, d in enumerate(dims):
            if d is not None and (not isinstance(d, (int, Expr)) or isinstance(d, bool)):
                raise TypeError(f"TensorSpec dim {i}: expected an IntVar, an expression of them, an int "
                                f"or STATIC, got {type(d).__name__}: {d!r}")
        self._specs = list(dims)

    def __getitem__(self, index):
        return self._specs[index]

    def __len__(self):
        return len(self._specs)

    def __iter__(self):
        return iter(self._specs)

    def __repr__(self):
        return "\n".join(["Tensor:"] + [f"{_INDENT}{i}: {s!r}" for i, s in enumerate(self._specs)])


class _Entries:
    """A spec over a container: ``kind`` names it in ``repr``."""
    kind = ""

    def __init__(self, entries=None):
        self._entries = dict(entries) if entries else {}

    def __contains__(self, key):
        return key in self._entries

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)

    def items(self):
        """The ``(name, spec)`` entries, in order."""
        return self._entries.items()

    def __repr__(self):
        lines = [f"{self.kind}:"]
        for key, spec in self._entries.items():
            text = repr(spec)
            label = self._label(key)
            if "\n" in text:
                lines += [f"{_INDENT}{label}:"] + [_INDENT * 2 + line for line in text.splitlines()]
            else:
                lines.append(f"{_INDENT}{label}: {text}")
        return "\n".join(lines)


class ObjectSpec(_Entries):
    """Specs of an object argument's attributes: ``ObjectSpec({"k": TensorSpec([B, None])})``.

    Its sizes are read and checked at every call like an argument's (ranges, derived sizes,
    assumptions, variables shared with the arguments). ``ember.compile`` and ``ember.export``
    make the tensors it declares inputs of the graph (read from the object at each call), so their declared
    dimensions are size symbols too: an attribute rebound to a tensor of another declared
    size runs the same graph."""
    kind = "object_spec"

    def _label(self, key):
        return f".{key}"


class DictSpec(_Entries):
    """Specs of a dict argument's entries (str or int keys).

    Raises:
        TypeError: a key of another type.
    """
    kind = "dict_spec"

    def __init__(self, entries=None):
        super().__init__(entries)
        for k in self._entries:
            if not isinstance(k, (str, int)):
                raise TypeError(f"DictSpec entries must have str or int keys, got {type(k).__name__}: {k!r}")

    def _label(self, key):
        return f"[{key!r}]"


class SeqSpec(_Entries):
    """Specs of a list or tuple argument, by position (positions past its end are static)."""
    kind = "seq_spec"

    def __init__(self, entries):
        super().__init__(enumerate(entries))

    def _label(self, key):
        return f"[{key}]"


class ParamsSpec:
    """Specs of a function's parameters by name; ``"*args"`` (a list) and ``"**kwargs"`` (a
    dict) for the variadic ones. Parameters not named are static.

    Raises:
        ValueError: ``"*args"`` not a list, ``"**kwargs"`` not a dict, another ``*`` key.
    """

    def __init__(self, params=None):
        self._named_args, self._varargs, self._varkw = {}, None, None
        for key, value in (params or {}).items():
            if key == "*args":
                if not isinstance(value, list):
                    raise ValueError(f"ParamsSpec '*args' value must be a list of specs, got {type(value).__name__}")
                self._varargs = list(value)
            elif key == "**kwargs":
                if not isinstance(value, dict):
                    raise ValueError(f"ParamsSpec '**kwargs' value must be a dict of specs, got {type(value).__name__}")
                self._varkw = dict(value)
            elif key.startswith("*"):
                raise ValueError(f"Unknown sentinel key {key!r} in ParamsSpec; only '*args' and '**kwargs' "
                                 f"are reserved")
            else:
                self._named_args[key] = value

    def __repr__(self):
        entries = list(self._named_args.items())
        if self._varargs is not None:
            entries.append(("*args", SeqSpec(self._varargs)))
        if self._varkw is not None:
            entries.append(("**kwargs", DictSpec(self._varkw)))
        lines = []
        for key, value in entries:
            text = repr(value)
            lines += [f"{key}:"] + [_INDENT + ln for ln in text.splitlines()] if "\n" in text else [f"{key}: {text}"]
        return "\n".join(lines)


class ShapesSpec:
    """The dynamic-shape spec of a call: ``params`` (a :class:`ParamsSpec` or a dict for one)
    and ``assumptions``, comparisons of the variables checked at every call.

    Raises:
        TypeError: ``params`` of another type, an assumption that is not a comparison.
        NotImplementedError: ``globals`` (reserved, as in torch).
    """

    def __init__(self, params=None, *, globals=None, assumptions=None):
        if globals is not None:
            raise NotImplementedError("ShapesSpec.globals is not supported yet")
        if isinstance(params, dict):
            params = ParamsSpec(params)
        elif params is not None and not isinstance(params, ParamsSpec):
            raise TypeError(f"shapes_spec must be ParamsSpec, dict, or None, got {type(params).__name__}")
        self._params, self._assumptions = params, []
        for i, a in enumerate(assumptions or ()):
            if not isinstance(a, Cond):
                raise TypeError(f"ShapesSpec.assumptions[{i}]: expected a comparison of IntVar/ShapeVar "
                                f"(B % 2 == 0), got {type(a).__name__}: {a!r}")
            self._assumptions.append(a)

    @property
    def assumptions(self):
        return list(self._assumptions)

    def __repr__(self):
        lines = ["shapes_spec:"]
        if self._params is not None:
            lines += [f"{_INDENT}params:"] + [_INDENT * 2 + ln for ln in repr(self._params).splitlines()]
        if self._assumptions:
            lines += [f"{_INDENT}assumptions:"] + [_INDENT * 2 + repr(a) for a in self._assumptions]
        return "\n".join(lines)

    # ---- what ember.compile reads ---------------------------------------------------------------
    def check_signature(self, fn):
        """Raises ValueError when the spec names a parameter ``fn`` lacks."""
        params = inspect.signature(fn).parameters
        kinds = {p.kind for p in params.values()}
        spec = self._params or ParamsSpec()
        for name in spec._named_args:
            if name not in params or params[name].kind in (inspect.Parameter.VAR_POSITIONAL,
                                                           inspect.Parameter.VAR_KEYWORD):
                raise ValueError(f"dynamic shape spec names parameter {name!r}, which "
                                 f"{getattr(fn, '__qualname__', fn)} does not have "
                                 f"(its parameters: {', '.join(params) or 'none'})")
        for key, kind in (("*args", inspect.Parameter.VAR_POSITIONAL), ("**kwargs", inspect.Parameter.VAR_KEYWORD)):
            if getattr(spec, "_varargs" if key == "*args" else "_varkw") is not None and kind not in kinds:
                raise ValueError(f"dynamic shape spec has {key!r}, but {getattr(fn, '__qualname__', fn)} "
                                 f"takes no {key}")

    def check(self, fn, args, kwargs):
        """Raises (as :meth:`bind`) when the call ``fn(*args, **kwargs)`` breaks the spec."""
        self.bind(fn, args, kwargs)

    def bind(self, fn, args, kwargs, inputs=None):
        """The declared dimensions of this call, checked. ``inputs``: ``flatten((args,
        kwargs))`` when the caller has it.

        Returns ``(dims, ranges, sizes)``: ``{(index in flatten((args, kwargs)), dim): Expr}``
        (``{(ARG, position in (*args, *kwargs.values())): Expr}`` for an int argument),
        ``{name: (min, max)}`` (max None: unbounded) and the variables' values.

        Raises:
            RuntimeError: a size outside its variable's range, a derived size that is not its
                expression, a pinned size that differs, a false assumption; a tensor's rank
                that differs from its TensorSpec's length.
            ValueError: an ObjectSpec naming an attribute the object lacks.
            NotImplementedError: an IntVar for a value that is no int argument of the
                function (ember guards tensors and ints passed as arguments).
        """
        signature = _signature(fn)
        bound = signature.bind(*args, **kwargs)
        flat = {id(t): k for k, t in enumerate(flatten((args, kwargs)) if inputs is None else inputs)}
        found = []  # (where, flat index, dim, spec, size)
        spec = self._params or ParamsSpec()
        params = signature.parameters
        for name, value in bound.arguments.items():
            kind = params[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL and spec._varargs is not None:
                for i, (s, v) in enumerate(zip(spec._varargs, value)):
                    _walk(s, v, f"{name}[{i}]", flat, found)
            elif kind == inspect.Parameter.VAR_KEYWORD and spec._varkw is not None:
                for k, s in spec._varkw.items():
                    if k in value:
                        _walk(s, value[k], f"{name}[{k!r}]", flat, found)
            elif name in spec._named_args:
                _walk(spec._named_args[name], value, name, flat, found, _position(name, args, kwargs, signature))
        variables, sizes, dims, where_of = {}, {}, {}, {}
        for where, k, d, s, n in found:
            if isinstance(s, IntVar):
                other = variables.setdefault(s.name, s)
                if other is not s:
                    raise ValueError(f"two different IntVar/ShapeVar are named {s.name!r} in one spec")
                here = where if k == ARG else f"{where}.size({d})"
                if sizes.setdefault(s.name, n) != n:
                    raise RuntimeError(f"{here} = {n}, but {where_of[s.name]} = {sizes[s.name]} and both are {s.name}")
                where_of.setdefault(s.name, here)
            if isinstance(s, Expr) and k is not None:
                dims[(k, d)] = s
        for where, k, d, s, n in found:
            if isinstance(s, Expr) and not isinstance(s, IntVar):
                missing = [v for v in free_symbols(s) if v not in sizes]
                if missing:
                    raise ValueError(f"{where}.size({d}) is declared {s}, but {', '.join(missing)} is not "
                                     f"the size of any dimension")
                if evaluate(s, sizes) != n:
                    here = where if k == ARG else f"{where}.size({d})"
                    raise RuntimeError(f"{here} = {n}, but the spec declares it {s} = "
                                       f"{evaluate(s, sizes)} ({_values(sizes)})")
        for name, var in variables.items():
            lo, hi = _low(var), var.max
            if sizes[name] < lo or hi is not None and sizes[name] > hi:
                raise RuntimeError(f"{where_of[name]} = {sizes[name]} is outside the range [{lo}, "
                                   f"{'inf' if hi is None else hi}] of {type(var).__name__} {name} declared "
                                   f"by the dynamic shape spec")
        for a in self._assumptions:
            names = free_symbols(a)
            if all(n in sizes for n in names) and not a.evaluate(sizes):
                raise RuntimeError(f"assumption {a} of the dynamic shape spec is false for this call "
                                   f"({_values(sizes)})")
        ranges = {n: (_low(v), v.max) for n, v in variables.items()}
        return dims, ranges, sizes


    def held(self, fn, args, kwargs, paths=None):
        """The tensors objects passed to ``fn`` hold where the spec declares a TensorSpec
        inside an ObjectSpec: ``[(where, owner, key, tensor, is_attribute)]`` (``owner.key``,
        or ``owner[key]`` in a dict or list the object holds). ``ember.compile`` and
        ``ember.export`` make them graph inputs. ``paths``, a list, gets for each the way to it
        from the call's arguments: ``(parameter name, (is_attribute, key), ...)``."""
        out = []
        spec = self._params or ParamsSpec()
        for name, value in _signature(fn).bind(*args, **kwargs).arguments.items():
            if name in spec._named_args:
                _held(spec._named_args[name], value, name, out, False, [] if paths is None else paths, (name,))
        return out


def _held(spec, value, where, out, inside, paths, path):
    """Collects :meth:`ShapesSpec.held`'s entries below ``value`` (``path`` leads to it);
    ``inside``: reached through an object."""
    if isinstance(spec, ObjectSpec):
        items = [(key, s, getattr(value, key), f"{where}.{key}", True) for key, s in spec.items()
                 if hasattr(value, key)]  # a missing attribute: bind raises
        inside = True
    elif isinstance(spec, (DictSpec, SeqSpec)):
        items = [(key, s, value[key], f"{where}[{key!r}]", False) for key, s in spec.items()
                 if (key in value if isinstance(spec, DictSpec) else key < len(value))]
    else:
        return
    for key, s, v, here, attribute in items:
        if inside and isinstance(s, TensorSpec) and isinstance(v, Tensor):
            out.append((here, value, key, v, attribute))
            paths.append((*path, (attribute, key)))
        else:
            _held(s, v, here, out, inside, paths, (*path, (attribute, key)))


def _position(name, args, kwargs, signature):
    """Where argument ``name`` is in ``(*args, *kwargs.values())`` (the guards' numbering)."""
    if name in kwargs:
        return len(args) + list(kwargs).index(name)
    index = list(signature.parameters).index(name)
    return index if index < len(args) else None


@functools.lru_cache(maxsize=64)
def _signature(fn):
    return inspect.signature(fn)


def _low(var):
    """An IntVar's lower bound: -inf when unbounded (a ShapeVar's is 0 by default)."""
    return -math.inf if var.min is None else var.min


def _values(sizes):
    return ", ".join(f"{n} = {v}" for n, v in sizes.items())


def _walk(spec, value, where, flat, found, position=None):
    """Collects ``(where, flat index, dim, spec, size)`` of the dimensions ``spec`` declares on
    ``value`` (``(where, ARG, position, spec, value)`` for an int argument at ``position`` of
    ``(*args, *kwargs.values())``)."""
    if spec is None:
        return
    if isinstance(spec, TensorSpec):
        if not isinstance(value, Tensor):
            raise TypeError(f"{where}: a TensorSpec for a {type(value).__name__}")
        if len(spec) != value.dim():
            raise RuntimeError(f"{where} has {value.dim()} dimensions (shape {list(value.shape)}), but its "
                               f"TensorSpec declares {len(spec)}")
        for d, s in enumerate(spec):
            n = value.shape[d]
            if isinstance(s, int) and s != n:
                raise RuntimeError(f"{where}.size({d}) = {n}, but the spec pins it to {s}")
            if isinstance(s, Expr):  # index None: a tensor an object holds, not among the inputs given
                found.append((where, flat.get(id(value)), d, s, n))
    elif isinstance(spec, (DictSpec, SeqSpec)):
        for key, s in spec.items():
            if isinstance(spec, DictSpec) or key < len(value):
                _walk(s, value[key], f"{where}[{key!r}]", flat, found)
    elif isinstance(spec, ObjectSpec):
        for key, s in spec.items():
            if not hasattr(value, key):
                raise ValueError(f"{where}: the ObjectSpec names attribute {key!r}, which the "
                                 f"{type(value).__name__} passed has not")
            _walk(s, getattr(value, key), f"{where}.{key}", flat, found)
    elif isinstance(spec, Expr):
        if position is None or type(value) is not int:
            raise NotImplementedError(f"{where}: an IntVar is supported for an int argument of the function, "
                                      f"got {type(value).__name__} (sizes inside containers: use a TensorSpec)")
        found.append((where, ARG, position, spec, value))


def _coerce(spec):
    if spec is None or isinstance(spec, ShapesSpec):
        return spec
    if isinstance(spec, (dict, ParamsSpec)):
        return ShapesSpec(spec)
    raise TypeError(f"dynamic spec expects a dict, ShapesSpec, or ParamsSpec, got {type(spec).__name__}")


def dynamic_spec(spec):
    """Attaches a :class:`ShapesSpec` (or a dict / :class:`ParamsSpec` for one) to a function or
    a module's ``forward``; ``ember.compile`` reads it.

    Raises:
        TypeError: ``spec`` of another type.
        ValueError: a second ``@dynamic_spec`` on the same function.
    """
    resolved = _coerce(spec)
    if resolved is None:
        raise TypeError(f"dynamic_spec(): `spec` must be a dict, ParamsSpec, or ShapesSpec, got {type(spec).__name__}.")

    def decorate(fn):
        if hasattr(fn, _ATTR):
            raise ValueError(f"@dynamic_spec(...) is already attached to {getattr(fn, '__qualname__', repr(fn))}. "
                             f"Stacking multiple @dynamic_spec decorators on the same function is not allowed; "
                             f"merge them into a single spec.")
        setattr(fn, _ATTR, resolved)
        return fn
    return decorate


def resolve_dynamic_shapes(fn_or_module, dynamic_shapes):
    """The spec in effect for a call site: the ``@dynamic_spec`` of the function (a module's
    ``forward``), else ``dynamic_shapes`` coerced to a ShapesSpec (None when neither).

    Raises:
        ValueError: both are given (torch's message).
    """
    fn = getattr(fn_or_module, "forward", fn_or_module) if not inspect.isfunction(fn_or_module) else fn_or_module
    attached = getattr(fn, _ATTR, None)
    if attached is None:
        return _coerce(dynamic_shapes)
    if dynamic_shapes is not None:
        raise ValueError("Both `@dynamic_spec(...)` is attached to the function/forward AND a "
                         "`dynamic_shapes=` argument was passed. Provide only one.")
    return attached
