"""Complex graphs as real ones: every complex value of a captured graph becomes a pair of real
values (its real and imaginary parts), and each complex op the arithmetic on those pairs, so
the code generator sees float32/float64 nodes only and fuses them into its C loops and BLAS
products (PyTorch 2.14's experimental compilation of complex tensors does the same).

``z = x + iy``, ``w = u + iv``:
  add/sub: ``(x ± u, y ± v)``;  mul: ``(xu - yv, xv + yu)``;  matmul and linear (``z W^T + b``):
  four real products;  div and reciprocal (``1 / w``): Smith's algorithm (scaled by the larger
  of ``|u|``, ``|v|``, as NumPy and torch divide: no overflow of ``u² + v²``);  exp:
  ``e^x (cos y, sin y)``;  log: ``(log hypot(x, y), atan2(y, x))``;  sqrt: the principal
  root's parts from ``sqrt((|z| + |x|) / 2)``, both on parts scaled by a power of 2 (no
  overflow for finite parts);  ``z ** p`` (an integer below 100 in magnitude): repeated products;  vector_norm: the same norm of ``hypot(x, y)``;  abs:
  ``hypot(x, y)``;  angle: ``atan2(y, x)``;  sgn: ``z / |z|`` (0 at 0);  conj: ``(x, -y)``;  real, imag: a part;  ``complex(x, y)`` (and so ``polar``):
  its operands;  views, indexing, ``sum``, ``cat``, ``where``: the same op on each part.

The arithmetic is written out as NumPy computes complex numbers (``z * 0.1`` multiplies by
``0.1 + 0i``), so results agree with eager ones to rounding (the C compiler may contract
``xu - yv`` into a fused multiply-add); infinities and NaNs inside complex ``exp``, ``div`` and
``sgn`` follow the real formulas, not C99 Annex G's special cases. Any other op on complex
values runs unchanged on the whole complex array (built from its parts when needed:
``Complex``) and counts in ``counters["complex"]["fallback:<op>"]``; decomposed nodes count in
``counters["complex"]["decomposed"]``. ``EMBER_LOGS=complex`` prints both per graph. The
graph's inputs, outputs and mutations keep their complex dtypes: its callers see no change.

Graphs with size symbols (dynamic shapes) are left complex: their generated Python is
shape-generic and runs complex ops on NumPy.
"""
import math
import sys

import numpy as np

from .. import _dtype
from .._ops.complex import Complex
from .._ops.core import OPS
from .graph import Graph, Node

__all__ = ["decompose_complex"]

# Ops that act on the real and imaginary parts alike (linear in the data, the other arguments
# -- conditions, indices, sizes -- shared): the same op on each part.
PER_PART = frozenset({"View", "Permute", "Expand", "Slice", "Squeeze", "Unsqueeze", "Clone", "Flip",
                      "Roll", "Tril", "Triu", "Diagonal", "Index", "Gather", "Cat", "Stack", "Where", "Cumsum",
                      "IndexBackward", "CopySlices", "Sum"})
# Views between a complex array and its interleaved real numbers: free on the whole array, kept.
WHOLE = frozenset({"ViewAsReal", "ViewAsComplex"})


def _is_complex(value):
    return isinstance(value, Node) and getattr(value.meta.get("dtype"), "is_complex", False)


def _is_number(value):
    return isinstance(value, (int, float, complex, np.number)) and not isinstance(value, (bool, np.bool_))


def decompose_complex(graph, log=False):
    """``graph`` with its complex ops computed on real and imaginary parts (a new Graph with the
    same placeholders, in order, the same outputs and mutations, and ``complex_counts``: {"decomposed":
    nodes, "fallback:<op>": nodes}); ``graph`` itself when it has no complex values or has size
    symbols."""
    if graph.symbols or graph.any_shape or not any(_is_complex(n) for n in graph.nodes):
        return graph
    new = _Decomposer(graph).run()
    if log:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(new.complex_counts.items()))
        print(f"[ember.compile complex] {counts}", file=sys.stderr)
    return new


class _Decomposer:
    def __init__(self, graph):
        self.old, self.g = graph, Graph()
        self.env = {}     # old node -> new node (real values; complex values kept whole)
        self.parts = {}   # old complex node -> (real part, imaginary part): new nodes or numbers
        self.counts = {}

    # ---- building real nodes ------------------------------------------------------------------
    def call(self, name, args, kwargs=None, dtype=None, shape=None):
        nodes = [a for a in args if isinstance(a, Node)]
        if shape is None:
            shape = np.broadcast_shapes(*(tuple(n.meta["shape"]) for n in nodes))
        dtype = dtype or nodes[-1].meta["dtype"]  # Where(condition, a, b): b's
        return self.g.call_op(OPS[name], tuple(args), dict(kwargs or {}),
                              {"shape": tuple(shape), "dtype": dtype, "requires_grad": False})

    def add(self, a, b, name="Add"):
        if not isinstance(a, Node) and not isinstance(b, Node):
            return a + b if name == "Add" else a - b
        return self.call(name, (a, b))

    def sub(self, a, b):
        return self.add(a, b, "Sub")

    def mul(self, a, b):
        if not isinstance(a, Node) and not isinstance(b, Node):
            return a * b
        if isinstance(a, Node) and isinstance(b, float) and b == 1.0:  # x * 1 is x, also for inf, nan
            return a
        if isinstance(b, Node) and isinstance(a, float) and a == 1.0:
            return b
        return self.call("Mul", (a, b))

    def div(self, a, b):
        return a / b if not isinstance(a, Node) and not isinstance(b, Node) else self.call("Div", (a, b))

    def neg(self, a):
        return -a if not isinstance(a, Node) else self.call("Neg", (a,))

    def real_zeros(self, like):
        """Zeros of ``like``'s shape and dtype (``x < x`` is false for every x, NaN included)."""
        less = self.call("Lt", (like, like), dtype=_dtype.bool)
        return self.call("ToDtype", (less,), {"dtype": like.meta["dtype"]}, like.meta["dtype"])

    # ---- complex values as pairs, and back --------------------------------------------------------
    def pair(self, value, part_dtype=None):
        """(real, imaginary) of an old node or a Python number (numbers stay numbers)."""
        if _is_number(value):
            return float(np.real(value)), float(np.imag(value))
        if value in self.parts:
            return self.parts[value]
        new = self.env[value]
        if not _is_complex(value):  # a real operand of a complex op
            if part_dtype is not None and new.meta["dtype"] is not part_dtype:
                new = self.call("ToDtype", (new,), {"dtype": part_dtype}, part_dtype)
            result = (new, self.real_zeros(new))
        else:  # the parts as contiguous arrays (one C loop reading the complex array once: the
            # products' BLAS calls need unit strides, the loops read them faster)
            real = new.meta["dtype"].to_real()
            result = tuple(self.call("Clone", (self.call(part, (new,), dtype=real),), {"contiguous": True})
                           for part in ("Real", "Imag"))
        self.parts[value] = result
        return result

    def whole(self, value):
        """The new node holding old complex node ``value`` as one complex array."""
        if value not in self.env:
            re, im = self.parts[value]
            self.env[value] = self.g.call_op(Complex, (re, im), {}, dict(value.meta))
        return self.env[value]

    # ---- the pass -----------------------------------------------------------------------------------
    def run(self):
        for p in self.old.placeholders:
            self.env[p] = self.g.placeholder(p.name, p.meta)
        for node in self.old.nodes:
            if node.op != "call_op":
                continue
            rule = _RULES.get(getattr(node.target, "name", None))
            result = rule(self, node) if rule is not None and self.decomposable(node) else None
            if result is None:
                self.copy(node)
                continue
            self.counts["decomposed"] = self.counts.get("decomposed", 0) + 1
            if isinstance(result, tuple):
                self.parts[node] = tuple(self.fit(p, node) for p in result)
            else:
                self.env[node] = result
        outputs = [self.value(o) for o in self.old.outputs]
        for placeholder, value in self.old.mutations:
            self.g.mutate(self.env[placeholder], self.value(value))
        self.g.output(outputs)
        self.g.complex_counts = self.counts
        return self.g

    def value(self, old):
        if not isinstance(old, Node):
            return old
        return self.whole(old) if _is_complex(old) else self.env[old]

    def fit(self, part, node):
        """A part as a node of ``node``'s shape (a number or a broadcast operand expanded)."""
        shape, dtype = tuple(node.meta["shape"]), node.meta["dtype"].to_real()
        if not isinstance(part, Node):
            raise AssertionError(f"{node.name}: a constant part")  # rules always make nodes
        if tuple(part.meta["shape"]) != shape:
            part = self.call("Expand", (part,), {"shape": shape}, shape=shape)
        return part if part.meta["dtype"] is dtype else self.call("ToDtype", (part,), {"dtype": dtype}, dtype)

    def decomposable(self, node):
        """Complex values in or out, and no complex number among the attrs."""
        values = list(node.args) + [v for v in node.kwargs.values()]
        flat = [x for v in values for x in (v if isinstance(v, (tuple, list)) else (v,))]
        if any(isinstance(v, (complex, np.complexfloating)) for v in node.kwargs.values()):
            return False
        return _is_complex(node) or any(_is_complex(a) for a in flat)

    def copy(self, node):
        """``node`` unchanged, on whole values; a complex result is split when a later rule asks."""
        name = getattr(node.target, "name", "getitem")
        if (self.decomposable(node) or _is_complex(node)) and name not in WHOLE:
            key = "fallback:" + name
            self.counts[key] = self.counts.get(key, 0) + 1

        def arg(a):
            if isinstance(a, (tuple, list)):
                return type(a)(arg(x) for x in a)
            return self.value(a) if isinstance(a, Node) else a
        kwargs = {k: arg(v) for k, v in node.kwargs.items()}
        self.env[node] = self.g.call_op(node.target, arg(node.args), kwargs, dict(node.meta))


# ---- the rules: (decomposer, old node) -> (real, imaginary) parts, a real node, or None -----------
def _parts_of(d, node, i=0):
    return d.pair(node.args[i], node.meta["dtype"].to_real() if _is_complex(node) else None)


def _add(d, node, name="Add"):
    alpha = node.kwargs.get("alpha", 1)
    if not isinstance(alpha, (int, float)):
        return None
    (x, y), (u, v) = _parts_of(d, node, 0), _parts_of(d, node, 1)
    if alpha != 1:
        u, v = d.mul(u, float(alpha)), d.mul(v, float(alpha))
    return d.add(x, u, name), d.add(y, v, name)


def _mul(d, node):
    return _product(d, _parts_of(d, node, 0), _parts_of(d, node, 1))


def _div(d, node):
    return _quotient(d, _parts_of(d, node, 0), _parts_of(d, node, 1))


def _reciprocal(d, node):
    """``1 / z``: the quotient of ``1 + 0i``, as NumPy computes it."""
    return _quotient(d, (1.0, 0.0), _parts_of(d, node))


def _quotient(d, numerator, divisor):
    """Smith's algorithm: the ratio of the divisor's smaller part to its larger one scales it."""
    (x, y), (u, v) = numerator, divisor

    def u_larger():  # |u| >= |v|: r = v/u, z/w = ((x + y r) + i(y - x r)) / (u + v r)
        r = d.div(v, u)
        den = d.add(u, d.mul(v, r))
        return d.div(d.add(x, d.mul(y, r)), den), d.div(d.sub(y, d.mul(x, r)), den)

    def v_larger():  # r = u/v, z/w = ((x r + y) + i(y r - x)) / (u r + v)
        r = d.div(u, v)
        den = d.add(d.mul(u, r), v)
        return d.div(d.add(d.mul(x, r), y), den), d.div(d.sub(d.mul(y, r), x), den)
    if not isinstance(u, Node):  # a constant divisor (not 0: Python raised): the branch is known now
        return u_larger() if abs(u) >= abs(v) else v_larger()
    abs_u, abs_v = d.call("Abs", (u,)), d.call("Abs", (v,))
    pick = d.call("Ge", (abs_u, abs_v), dtype=_dtype.bool)
    (re1, im1), (re2, im2) = u_larger(), v_larger()
    # by zero: (x / |u|, y / |v|), infinities or NaN, as NumPy and torch
    zero = d.call("Eq", (d.add(abs_u, abs_v), 0.0), dtype=_dtype.bool)
    return (d.call("Where", (zero, d.div(x, abs_u), d.call("Where", (pick, re1, re2)))),
            d.call("Where", (zero, d.div(y, abs_v), d.call("Where", (pick, im1, im2)))))


def _complex(d, node):
    """``complex(real, imag)``: its real operands are the parts."""
    return d.env[node.args[0]], d.env[node.args[1]]


def _neg(d, node):
    x, y = _parts_of(d, node)
    return d.neg(x), d.neg(y)


def _conj(d, node):
    x, y = _parts_of(d, node)
    return x, d.neg(y)


def _real(d, node):
    return _parts_of(d, node)[0 if node.target.name == "Real" else 1]


def _to_dtype(d, node):
    target, source = node.kwargs["dtype"], node.args[0]
    if not target.is_complex:  # complex -> real keeps the real part, as torch (with a warning)
        x = d.pair(source)[0]
        return x if x.meta["dtype"] is target else d.call("ToDtype", (x,), {"dtype": target}, target)
    x, y = d.pair(source, target.to_real())
    cast = lambda p: p if p.meta["dtype"] is target.to_real() else d.call(  # noqa: E731
        "ToDtype", (p,), {"dtype": target.to_real()}, target.to_real())
    return cast(x), cast(y)


def _exp(d, node):
    x, y = _parts_of(d, node)
    e = d.call("Exp", (x,))
    return d.mul(e, d.call("Cos", (y,))), d.mul(e, d.call("Sin", (y,)))


def _abs(d, node):
    if not _is_complex(node.args[0]):
        return None
    return d.call("Hypot", d.pair(node.args[0]))


def _angle(d, node):
    if not _is_complex(node.args[0]):
        return None
    x, y = d.pair(node.args[0])
    return d.call("Atan2", (y, x))


def _sgn(d, node):
    x, y = _parts_of(d, node)
    r = d.call("Hypot", (x, y))
    zero = d.call("Eq", (r, 0.0), dtype=_dtype.bool)
    safe = d.call("Where", (zero, 1.0, r))  # z / |z|, with 0 / 1 = 0 at z = 0
    return d.div(x, safe), d.div(y, safe)


def _scaled(d, x, y):
    """``(x s, y s, per, m)`` with ``s`` a power of 2 per element: 1/4 where ``m = max(|x|,
    |y|)`` is above a quarter of the dtype's largest value (``|z|``, and ``|z| + |x|``, would
    overflow), ``2**(2k)`` where it is below ``2**-2k`` (k = 32 for float32, 256 for float64:
    halving a subnormal loses bits), else 1; ``per(f)`` is ``f(s)`` per element (a select of
    three constants).  Powers of 2 scale exactly; NaNs and infinities keep s = 1/4 or 1
    (comparisons with NaN are false)."""
    dtype = x.meta["dtype"]
    big, k = float(np.finfo(dtype.np).max) * 0.25, (32 if dtype.itemsize == 4 else 256)
    m = d.call("Maximum", (d.call("Abs", (x,)), d.call("Abs", (y,))))
    is_big = d.call("Gt", (m, big), dtype=_dtype.bool)
    is_small = d.call("Lt", (m, 2.0 ** -(2 * k)), dtype=_dtype.bool)

    def per(f):
        return d.call("Where", (is_big, f(0.25), d.call("Where", (is_small, f(2.0 ** (2 * k)), f(1.0)), dtype=dtype)),
                      dtype=dtype)
    s = per(float)
    return d.mul(x, s), d.mul(y, s), per, m


def _log(d, node):
    """``log z = log|z| + i atan2(y, x)`` (``log 0 = -inf + 0i``), ``log|z|`` as
    ``log(|z s|) - log s`` (:func:`_scaled`: no overflow of ``|z|`` for finite parts) and, for
    ``m = max(|x|, |y|)`` within 1/2 of 1, as ``log1p((m - 1)(m + 1) + n²) / 2`` (``n`` the
    smaller part: no loss of ``n²`` next to 1, ``log(1 + 1e-10 i)`` has real part 5e-21)."""
    x, y = _parts_of(d, node)
    xs, ys, per, m = _scaled(d, x, y)
    far = d.sub(d.call("Log", (d.call("Hypot", (xs, ys)),)), per(math.log))
    n = d.call("Minimum", (d.call("Abs", (x,)), d.call("Abs", (y,))))
    near = d.mul(d.call("Log1p", (d.add(d.mul(d.sub(m, 1.0), d.add(m, 1.0)), d.mul(n, n)),)), 0.5)
    is_near = d.call("Lt", (d.call("Abs", (d.sub(m, 1.0),)), 0.5), dtype=_dtype.bool)
    return d.call("Where", (is_near, near, far)), d.call("Atan2", (y, x))


def _sqrt(d, node):
    """The principal root without cancellation (the C99 ``csqrt`` algorithm): on the scaled
    parts of :func:`_scaled`, ``t = sqrt((|z| + |x|) / 2) / sqrt(s)``, then ``(t, y / 2t)`` for
    ``x >= 0`` and ``(|y| / 2t, t with y's sign)`` for ``x < 0``; ``sqrt(±0 ± 0i) = 0 ± 0i``, and
    C99's special value ``sqrt(x ± inf i) = inf ± inf i`` for every x, NaN included (the other
    special values follow from the formulas)."""
    x, y = _parts_of(d, node)
    xs, ys, per, _ = _scaled(d, x, y)
    ts = d.call("Sqrt", (d.mul(d.add(d.call("Hypot", (xs, ys)), d.call("Abs", (xs,))), 0.5),))
    t = d.mul(ts, per(lambda s: 1 / math.sqrt(s)))
    twice_t = d.mul(t, 2.0)
    right = d.call("Ge", (x, 0.0), dtype=_dtype.bool)
    # x >= 0 and t = 0 only at z = 0, where y / 2t would be 0 / 0: y itself (a signed zero)
    imag_right = d.call("Where", (d.call("Eq", (t, 0.0), dtype=_dtype.bool), y, d.div(y, twice_t)))
    real = d.call("Where", (right, t, d.div(d.call("Abs", (y,)), twice_t)))
    imag = d.call("Where", (right, imag_right, d.call("Copysign", (t, y))))
    infinite_y = d.call("IsInf", (y,), dtype=_dtype.bool)
    return d.call("Where", (infinite_y, float("inf"), real)), d.call("Where", (infinite_y, y, imag))


def _pow(d, node):
    """``z ** p`` for an integer ``p`` below 100 in magnitude: repeated squaring (``1 / z**|p|``
    by :func:`_quotient` for negative ones; ``z ** 0 = 1``, and ``0 ** p`` is NaN for ``p < 0``,
    as NumPy's complex power).  Other powers run whole: NumPy's ``cpow`` special values at
    infinite and NaN parts (``(-inf + 1i) ** 0.5 = inf + nan i``, ``(nan + inf i) ** -1.5 = -0``)
    have no short real formula."""
    p = node.args[1]
    if (not _is_complex(node) or not isinstance(p, (int, float)) or isinstance(p, bool)
            or not math.isfinite(p) or p != int(p) or abs(p) >= 100):
        return None
    z = _parts_of(d, node)
    x, y = z
    if p == 0:
        zero = d.real_zeros(x)
        return d.add(zero, 1.0), zero
    result, square, n = None, z, int(abs(p))
    while True:
        if n & 1:
            result = square if result is None else _product(d, result, square)
        n >>= 1
        if not n:
            break
        square = _product(d, square, square)
    if p > 0:
        return result
    result = _quotient(d, (1.0, 0.0), result)
    at_zero = d.call("Eq", (d.call("Hypot", (x, y)), 0.0), dtype=_dtype.bool)
    return tuple(d.call("Where", (at_zero, float("nan"), part)) for part in result)


def _product(d, z, w):
    (x, y), (u, v) = z, w
    return d.sub(d.mul(x, u), d.mul(y, v)), d.add(d.mul(x, v), d.mul(y, u))


def _vector_norm(d, node):
    """A norm of complex entries is the same norm of their magnitudes ``hypot(x, y)``."""
    if not _is_complex(node.args[0]):
        return None
    return d.call("VectorNorm", (d.call("Hypot", d.pair(node.args[0])),), node.kwargs,
                  node.meta["dtype"], node.meta["shape"])


def _matmul(d, node):
    if not (_is_complex(node.args[0]) or _is_complex(node.args[1])):
        return None
    (x, y), (u, v) = _parts_of(d, node, 0), _parts_of(d, node, 1)
    shape = node.meta["shape"]
    mm = lambda a, b: d.call("Matmul", (a, b), shape=shape)  # noqa: E731
    return d.sub(mm(x, u), mm(y, v)), d.add(mm(x, v), mm(y, u))


def _addmm(d, node):
    """``bias + a b``: the products as :func:`_matmul`'s, each part's bias added by its product."""
    if not _is_complex(node):
        return None
    part_dtype = node.meta["dtype"].to_real()
    (b, c), (x, y), (u, v) = (d.pair(a, part_dtype) for a in node.args)
    shape = node.meta["shape"]
    mm = lambda a, w: d.call("Matmul", (a, w), shape=shape)  # noqa: E731
    addmm = lambda bias, a, w: d.call("Addmm", (bias, a, w), shape=shape)  # noqa: E731
    return d.sub(addmm(b, x, u), mm(y, v)), d.add(addmm(c, x, v), mm(y, u))


def _per_part(d, node):
    if node.target.name == "Sum" and node.kwargs.get("dtype") is not None:
        return None
    if not _is_complex(node):
        return None
    part_dtype = node.meta["dtype"].to_real()
    numbers_are_data = node.target.name == "Where"

    def arg(a, k):
        if isinstance(a, (tuple, list)):
            return type(a)(arg(x, k) for x in a)
        if isinstance(a, Node) and (a.meta["dtype"].is_complex or a.meta["dtype"].is_floating_point):
            return d.pair(a, part_dtype)[k]
        if isinstance(a, Node):
            return d.env[a]  # a condition or indices: shared
        if numbers_are_data and _is_number(a):
            return d.pair(a)[k]
        return a
    if any(isinstance(v, Node) or isinstance(v, (tuple, list)) and any(isinstance(x, Node) for x in v)
           for v in node.kwargs.values()):
        return None
    shape = node.meta["shape"]
    return tuple(d.call(node.target.name, arg(node.args, k), node.kwargs, part_dtype, shape) for k in (0, 1))


_RULES = {"Add": _add, "Sub": lambda d, n: _add(d, n, "Sub"), "Mul": _mul, "Div": _div,
          "Reciprocal": _reciprocal, "Complex": _complex, "Neg": _neg,
          "Conj": _conj, "ConjPhysical": _conj, "Real": _real, "Imag": _real, "ToDtype": _to_dtype,
          "Exp": _exp, "Log": _log, "Sqrt": _sqrt, "Pow": _pow, "VectorNorm": _vector_norm, "Abs": _abs, "Angle": _angle,
          "Sgn": _sgn, "Matmul": _matmul, "Addmm": _addmm,
          **{name: _per_part for name in PER_PART}}
