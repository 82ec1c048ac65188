"""Differential testing against real torch.

A :class:`Case` is an op call written once as ``fn(lib, *inputs)``, where ``lib`` is either
``ember`` or ``torch``. :func:`check` draws the same random inputs for both libraries, runs
the call in each, and compares outputs (shape, dtype, values with nan == nan), then the
gradients of every input for a random upstream gradient and, for ``grad2`` cases, the
gradients of a random projection of those gradients (second order, ``create_graph=True``).
When torch raises, ember must raise the same exception class.

Inputs are :class:`Arg` specs (anything else is passed to both libraries unchanged). An Arg
describes a leaf tensor and the view of it that the op receives, so ``T(R(3, 4))`` hands the
op a transposed (non-contiguous) tensor and gradients are compared on the contiguous leaf.
"""
import zlib

import numpy as np
import pytest
import torch

import ember

FLOATS = ("float32", "float64")
TOL = {"float16": (2e-3, 2e-3), "float32": (2e-4, 2e-5), "float64": (1e-7, 1e-9)}
inf, nan = float("inf"), float("nan")


class Arg:
    """A tensor input: ``draw(rng, shape)`` makes the leaf's values, ``dtype`` None means the
    case's float dtype, ``view`` turns the leaf into what the op receives."""

    def __init__(self, shape, draw, dtype=None, grad=None, view=None, leaf_shape=None):
        self.shape = tuple(shape)
        self.draw = draw
        self.dtype = dtype
        self.grad = grad
        self.view = view
        self.leaf_shape = self.shape if leaf_shape is None else tuple(leaf_shape)

    def array(self, rng, fdtype):
        dtype = self.dtype or fdtype
        return np.asarray(self.draw(rng, self.leaf_shape)).astype(dtype)

    def requires_grad(self, fdtype):
        dtype = np.dtype(self.dtype or fdtype)
        return dtype.kind == "f" if self.grad is None else self.grad


def R(*shape, **kw):
    """Standard normal values."""
    return Arg(shape, lambda rng, s: rng.standard_normal(s), **kw)


def P(*shape, **kw):
    """Positive values in [0.5, 2)."""
    return Arg(shape, lambda rng, s: rng.uniform(0.5, 2.0, s), **kw)


def U(*shape, **kw):
    """Values in (-0.9, 0.9): the domain of asin/acos."""
    return Arg(shape, lambda rng, s: rng.uniform(-0.9, 0.9, s), **kw)


def D(*shape, **kw):
    """Distinct values (a shuffled grid), so sort and arg-reductions have no ties."""
    def draw(rng, s):
        n = int(np.prod(s))
        return (rng.permutation(n).reshape(s) - n / 2) / 4.0
    return Arg(shape, draw, **kw)


def V(values, dtype=None, **kw):
    """Fixed values (edge cases: 0, inf, nan, ties)."""
    values = np.asarray(values)
    if dtype is None and values.dtype.kind != "f":
        dtype = values.dtype
    return Arg(values.shape, lambda rng, s: values, dtype=dtype, **kw)


def I(*shape, low=-5, high=6, dtype="int64"):
    """Random integers in [low, high) (no gradient)."""
    return Arg(shape, lambda rng, s: rng.integers(low, high, s), dtype=dtype, grad=False)


def B(*shape):
    """Random booleans."""
    return Arg(shape, lambda rng, s: rng.random(s) < 0.5, dtype="bool", grad=False)


def T(arg):
    """``arg`` handed over transposed (last two dims swapped), so it is not contiguous."""
    s = arg.leaf_shape
    inner = arg.view
    leaf = s[:-2] + (s[-1], s[-2])
    return Arg(arg.shape, arg.draw, arg.dtype, arg.grad, leaf_shape=leaf,
               view=lambda t: _then(inner, t.transpose(-1, -2)))


def S(arg):
    """``arg`` handed over as every other element of a leaf twice as long in dim 0."""
    s = arg.leaf_shape
    inner = arg.view
    leaf = (2 * s[0],) + s[1:]
    return Arg(arg.shape, arg.draw, arg.dtype, arg.grad, leaf_shape=leaf,
               view=lambda t: _then(inner, t[::2]))


def _then(inner, t):
    return t if inner is None else inner(t)


class Case:
    """One op call compared across libraries for each dtype in ``dtypes`` (None: the inputs
    fix their own dtypes). ``grad=False`` compares values only; ``grad2`` adds second order;
    ``tol`` = (rtol, atol) overrides the per-dtype tolerance. ``float64_oracle`` compares a
    float32 run with torch's float64 run of the same inputs, rounded to float32, at the float32
    tolerance: for transcendental ops, whose float32 kernels in torch differ by CPU (AVX2 and
    AVX-512 give different tails and infinities), while float64 results do not."""

    def __init__(self, name, fn, *args, dtypes=FLOATS, grad=True, grad2=False, tol=None,
                 float64_oracle=False):
        self.name, self.fn, self.args = name, fn, args
        self.dtypes, self.grad, self.grad2, self.tol = dtypes, grad, grad2, tol
        self.float64_oracle = float64_oracle


def params(cases):
    """pytest parameters, one per case and dtype, named ``name-dtype``."""
    out, seen = [], set()
    for c in cases:
        for d in c.dtypes:
            pid = c.name if d is None else f"{c.name}-{d}"
            assert pid not in seen, f"duplicate case id {pid}"
            seen.add(pid)
            out.append(pytest.param(c, d, id=pid))
    return out


def _leaves(case, dtype, rng):
    e_leaves, t_leaves = [], []
    for a in case.args:
        if isinstance(a, Arg):
            arr = a.array(rng, dtype)
            rg = a.requires_grad(dtype)
            e_leaves.append(ember.tensor(arr.copy(), requires_grad=rg))
            t_leaves.append(torch.tensor(arr.copy(), requires_grad=rg))
        else:
            e_leaves.append(a)
            t_leaves.append(a)
    return e_leaves, t_leaves


def _inputs(case, leaves):
    return [a.view(x) if isinstance(a, Arg) and a.view is not None else x
            for a, x in zip(case.args, leaves)]


def _flat(out):
    if isinstance(out, (tuple, list)) and not isinstance(out, (torch.Size, ember.Size)):
        return [y for x in out for y in _flat(x)]
    return [out]


def _dtype_name(d):
    return str(d).split(".")[-1]


def compare(e, t, tol=None, what="output"):
    """ember value ``e`` equals torch value ``t`` (tensors, sequences, numbers). ``tol`` is
    (rtol, atol); by default it follows each tensor's dtype."""
    if isinstance(t, torch.Tensor):
        rtol, atol = tol or TOL.get(_dtype_name(t.dtype), TOL["float64"])
        assert isinstance(e, ember.Tensor), f"{what}: expected a Tensor, got {type(e).__name__}"
        assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != {tuple(t.shape)}"
        assert _dtype_name(e.dtype) == _dtype_name(t.dtype), f"{what}: dtype {e.dtype} != {t.dtype}"
        ea, ta = np.asarray(e._data), t.detach().numpy(force=True)  # force: torch's ZeroTensor grads
        if ta.dtype.kind in "biu" and ea.dtype.kind in "biu":
            np.testing.assert_array_equal(ea, ta, err_msg=what)
        else:
            np.testing.assert_allclose(ea.astype(np.float64), ta.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=what)
        return
    if isinstance(t, (tuple, list)) and not isinstance(t, torch.Size):
        assert isinstance(e, (tuple, list)), f"{what}: expected a sequence, got {type(e).__name__}"
        assert len(e) == len(t), f"{what}: {len(e)} items != {len(t)}"
        for i, (x, y) in enumerate(zip(e, t)):
            compare(x, y, tol, f"{what}[{i}]")
        return
    if isinstance(t, torch.Size):
        assert tuple(e) == tuple(t), f"{what}: {tuple(e)} != {tuple(t)}"
        return
    if isinstance(t, torch.dtype):
        assert isinstance(e, ember.dtype) and _dtype_name(e) == _dtype_name(t), f"{what}: {e} != {t}"
        return
    if isinstance(t, float) and np.isnan(t):
        assert isinstance(e, float) and np.isnan(e), f"{what}: {e!r} != nan"
        return
    assert type(e) is type(t), f"{what}: type {type(e).__name__} != {type(t).__name__}"
    if isinstance(t, float):
        np.testing.assert_allclose(e, t, rtol=1e-7, atol=1e-12, err_msg=what)
    else:
        assert e == t, f"{what}: {e!r} != {t!r}"


def check(case, dtype):
    """Runs ``case`` in both libraries at ``dtype`` and compares everything (see module doc)."""
    rng = np.random.default_rng(zlib.crc32(f"{case.name}-{dtype}".encode()))
    e_leaves, t_leaves = _leaves(case, dtype, rng)
    try:
        t_out = case.fn(torch, *_inputs(case, t_leaves))
    except Exception as exc:  # torch rejects the call: ember must reject it the same way
        with pytest.raises(type(exc)):
            case.fn(ember, *_inputs(case, e_leaves))
        return
    e_out = case.fn(ember, *_inputs(case, e_leaves))
    tol = case.tol
    oracle = case.float64_oracle and dtype == "float32"
    if oracle:
        compare_dtypes(e_out, t_out)
        t_leaves = [x.detach().double().requires_grad_(x.requires_grad)
                    if isinstance(x, torch.Tensor) and x.dtype == torch.float32 else x for x in t_leaves]
        t_out = _rounded_to_float32(case.fn(torch, *_inputs(case, t_leaves)))
    compare(e_out, t_out, tol)
    if not case.grad:
        return
    t_outs = [y for y in _flat(t_out) if isinstance(y, torch.Tensor)]
    e_outs = [y for y in _flat(e_out) if isinstance(y, ember.Tensor)]
    for i, (e, t) in enumerate(zip(e_outs, t_outs)):
        assert e.requires_grad == t.requires_grad, f"output[{i}].requires_grad {e.requires_grad} != {t.requires_grad}"
    pairs = [(e, t) for e, t in zip(e_outs, t_outs) if t.requires_grad]
    wrt = [i for i, x in enumerate(t_leaves) if isinstance(x, torch.Tensor) and x.requires_grad]
    if not pairs or not wrt:
        return
    ups = [rng.standard_normal(tuple(t.shape)).astype(_dtype_name(t.dtype)) for _, t in pairs]
    t_grads = torch.autograd.grad([t for _, t in pairs], [t_leaves[i] for i in wrt],
                                  [torch.tensor(u) for u in ups], allow_unused=True,
                                  create_graph=case.grad2)
    e_grads = ember.autograd.grad([e for e, _ in pairs], [e_leaves[i] for i in wrt],
                                  [ember.tensor(u) for u in ups], allow_unused=True,
                                  create_graph=case.grad2)
    for i, e, t in zip(wrt, e_grads, t_grads):
        _compare_grad(e, t, t_leaves[i], tol, f"grad of input {i}", oracle)
    if case.grad2:
        _check_second_order(case, rng, wrt, e_leaves, t_leaves, e_grads, t_grads, tol, oracle)


def compare_dtypes(e, t):
    """The same structure of tensors with the same dtypes and shapes (values not compared)."""
    e_flat, t_flat = _flat(e), _flat(t)
    assert len(e_flat) == len(t_flat), f"{len(e_flat)} outputs != {len(t_flat)}"
    for i, (x, y) in enumerate(zip(e_flat, t_flat)):
        if isinstance(y, torch.Tensor):
            assert isinstance(x, ember.Tensor), f"output[{i}]: expected a Tensor, got {type(x).__name__}"
            assert _dtype_name(x.dtype) == _dtype_name(y.dtype), f"output[{i}]: dtype {x.dtype} != {y.dtype}"


def _rounded_to_float32(out):
    """float64 tensors of a torch result as float32 (differentiably), the rest unchanged."""
    if isinstance(out, torch.Tensor):
        return out.to(torch.float32) if out.dtype == torch.float64 else out
    if isinstance(out, (tuple, list)) and not isinstance(out, torch.Size):
        return type(out)(_rounded_to_float32(x) for x in out) if type(out) in (tuple, list) else out
    return out


def _compare_grad(e, t, leaf, tol, what, oracle=False):
    """None (unused input) and zeros are the same gradient."""
    if t is None:
        t = torch.zeros_like(leaf)
    if oracle:
        t = _rounded_to_float32(t.detach())
    if e is None:
        e = ember.zeros(tuple(t.shape), dtype=getattr(ember, _dtype_name(t.dtype)))
    compare(e, t, tol, what)


def _check_second_order(case, rng, wrt, e_leaves, t_leaves, e_grads, t_grads, tol, oracle=False):
    """Gradients of ``sum(grad_i * w_i)`` for random ``w_i``: the Hessian-vector products."""
    ws = [rng.standard_normal(tuple(e_leaves[i].shape)).astype(_dtype_name(e_leaves[i].dtype)) for i in wrt]
    t_terms = [(g * torch.tensor(w)).sum() for g, w in zip(t_grads, ws) if g is not None and g.requires_grad]
    e_terms = [(g * ember.tensor(w)).sum() for g, w in zip(e_grads, ws) if g is not None and g.requires_grad]
    t_hv = torch.autograd.grad(sum(t_terms), [t_leaves[i] for i in wrt], allow_unused=True) \
        if t_terms else [None] * len(wrt)
    e_hv = ember.autograd.grad(sum(e_terms), [e_leaves[i] for i in wrt], allow_unused=True) \
        if e_terms else [None] * len(wrt)
    for i, e, t in zip(wrt, e_hv, t_hv):
        _compare_grad(e, t, t_leaves[i], tol, f"second-order grad of input {i}", oracle)
