"""Float arguments ember specialised (a graph per value) where torch 2.13's automatic dynamic
makes one symbol (2 graphs): a fill value (``full``, ``new_full``, ``full_like``, ``fill_``:
compiler/traced_floats.py ``fill_node``), an operand of a float16/bfloat16 product or quotient
(``x.half() * lr``: ``_at_float32``), ``elu``'s ``alpha``, ``threshold``'s ``threshold`` and
``value`` (``_ATTRIBUTE_OPS``), ``abs(lr)``, ``where(c, x, lr)``. Graphs are counted against torch's CompileCounter,
call by call; values against torch's and ember's eager, compared by repr (-0.0 told from 0.0,
nan equal to nan)."""
import math
import warnings

import torch

from graph_counts import compiled_afresh, graph_counts

import ember

# (nan: torch 2.13 recompiles for it, ember's float guard takes it; its values are compared below)
VALUES = (0.1, 0.2, 0.0, -0.5, 3.0, -0.0, 1e-40, math.inf, -math.inf, 1e300, 0.7)


def ember_or_torch(x):
    """The module ``x`` comes from."""
    return torch if isinstance(x, torch.Tensor) else ember


def _fills(x, v):
    t = ember_or_torch(x)
    filled = (x * 1).fill_(v)
    return t.cat([x.new_full((2,), v), t.full((2, 3), v).reshape(-1), t.full_like(x, v), filled * 2,
                  t.full((2,), v, dtype=t.float64).float()])


def test_fill_value_counts_and_values():
    calls = [(v,) for v in VALUES]
    want_counts, want = graph_counts(_fills, torch, calls)
    got_counts, got = graph_counts(_fills, ember, calls)
    assert got_counts == want_counts == [1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
    assert repr(got) == repr(want)
    assert want[-2][0] == "RuntimeError"  # (1e300 beyond float32's range: eager's error, a graph of its own)


def test_fill_value_nan_and_eager():
    compiled, count = compiled_afresh(_fills, ember)
    for v in (0.5, 0.25, math.nan, -math.nan, 2.0):
        want = _fills(torch.arange(6.0), v).tolist()
        assert repr(compiled(ember.arange(6.0), v).tolist()) == repr(want), v
        assert repr(_fills(ember.arange(6.0), v).tolist()) == repr(want), v
    assert count() == 2


def _halves(x, v):
    t, h = ember_or_torch(x), x.half()
    return t.cat([h * v, h / v, v / (h + 1), (v * x.bfloat16()).half(), h * v * 2]).float()


def test_float16_operand_counts_and_values():
    """``x_half * lr``: the product at float32 with the float not rounded to 16 bits first (eager's
    opmath), then rounded once: a graph input (it was a graph per value)."""
    calls = [(v,) for v in (0.1, 0.3, -1.7, 3e5, 1e-8, -0.0, math.inf, 7.123456789)]
    want_counts, want = graph_counts(_halves, torch, calls)
    got_counts, got = graph_counts(_halves, ember, calls)
    assert got_counts == want_counts == [1] + [2] * 7
    assert repr(got) == repr(want)


def _half_step(module, v, compiled):
    x = (module.arange(6.0) * 0.37 - 1).half().requires_grad_()
    y = compiled(x, v)
    y.sum().backward()
    return repr((y.tolist(), x.grad.tolist()))


def test_float16_operand_gradients():
    """A training step's backward takes the float too; a float32 product past float16's range is
    inf silently, as eager's (the compiled cast warned of an overflow)."""
    fn = lambda x, v: x * v / 3 + x / v  # noqa: E731
    compiled, count = compiled_afresh(fn, ember)
    for v in (0.5, 0.3, -2.7, math.nan, 1e-5):
        want = _half_step(torch, v, fn)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            assert _half_step(ember, v, compiled) == want, v
        assert _half_step(ember, v, fn) == want, v
    assert count() == 2


def _attributes(x, v):
    F = ember_or_torch(x).nn.functional
    return ember_or_torch(x).cat([F.elu(x - 3, v), F.threshold(x - 3, v, v * 2 - 1), F.threshold(x - 3, 0.5, v)])


def test_op_attribute_counts_and_values():
    """``elu``'s ``alpha``, ``threshold``'s ``threshold`` and ``value``: graph inputs (a graph per
    value before; ``celu``, ``softplus``, ``hardtanh``, ``softshrink``, ``hardshrink``: test_floats_30)."""
    calls = [(v,) for v in (0.1, 0.2, 0.0, -0.5, 3.0, -0.0, 1e-40, math.inf, -math.inf, 1e300, 2.0)]
    want_counts, want = graph_counts(_attributes, torch, calls)
    got_counts, got = graph_counts(_attributes, ember, calls)
    assert got_counts == want_counts == [1] + [2] * 10
    assert want[-2][0] == got[-2][0] == "RuntimeError"
    for g, w in zip(got[:-2] + got[-1:], want[:-2] + want[-1:]):  # elu's expm1: within 2 ulp of torch's (its
        assert len(g) == len(w) and all(map(_close, g, w)), (g, w)  # vector kernel's last bit differs by CPU)


def _close(a, b):
    """``a`` and ``b`` both nan, or equal in sign (-0.0 told from 0.0) and within 2.5e-7 of each other,
    relatively."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.copysign(1, a) == math.copysign(1, b) and (a == b or abs(a - b) <= 2.5e-7 * abs(b))


def _attribute_step(module, v, compiled, dtype):
    """The values and gradient of ``compiled`` at ``v`` as one float64 torch tensor."""
    x = module.tensor([-3.0, -1.5, -0.0, 0.0, 0.25, 2.0, math.nan], dtype=getattr(module, dtype), requires_grad=True)
    y = compiled(x, v)
    y.sum().backward()
    return torch.tensor(y.tolist() + x.grad.tolist(), dtype=torch.float64)


def test_op_attribute_gradients():
    """Their backward takes the float too (``elu``'s slope at and below 0, ``threshold``'s mask):
    within an ulp of eager's (the C code's ``exp`` is not NumPy's, as on main for ``x.exp() * lr``)."""
    fn = lambda x, v: ember_or_torch(x).cat([ember_or_torch(x).nn.functional.elu(x, v),  # noqa: E731
                                             ember_or_torch(x).nn.functional.threshold(x * 2, v, v / 4)])
    for dtype, rtol in (("float32", 2e-7), ("float64", 1e-15)):
        compiled, count = compiled_afresh(fn, ember)
        for v in (0.5, 1.5, -2.0, 0.0, math.nan, 0.25):
            want = _attribute_step(torch, v, fn, dtype)
            for got in (_attribute_step(ember, v, compiled, dtype), _attribute_step(ember, v, fn, dtype)):
                assert torch.allclose(got, want, rtol=rtol, atol=0, equal_nan=True), (dtype, v, got, want)
                assert got.signbit().tolist() == want.signbit().tolist(), (dtype, v, got, want)
        assert count() == 2


def _python_and_where(x, v):
    t = ember_or_torch(x)
    return t.cat([x * abs(v), x * math.sqrt(abs(v) + 1), t.where(x > 2, x, v), t.where(x > 2, x.long(), -v)])


def test_abs_and_where_counts_and_values():
    """``abs(lr)`` is computed by Python at each call, as ``math.sqrt(lr)`` (it was a use of the
    float); ``where(c, x, lr)`` casts the float to the result's dtype."""
    calls = [(v,) for v in (0.1, 0.2, 0.0, -0.5, 3.0, -0.0, 1e-40, math.inf, -math.inf, 1e300, 2.0)]
    want_counts, want = graph_counts(_python_and_where, torch, calls)
    got_counts, got = graph_counts(_python_and_where, ember, calls)
    assert got_counts == want_counts == [1] + [2] * 10
    assert repr(got) == repr(want)


def _sized(x, v):
    t = ember_or_torch(x)
    return t.cat([x * v, t.full((2,), v), x.half().float() * v]).sum(), x.new_full((x.shape[0] // 2,), v)


def test_float_beside_dynamic_sizes():
    """A dynamic graph's first call at a new size is recorded with its float arguments traced again
    (recorded plain, it was no longer the fitted graph: a graph per size and per value, 7 here)."""
    results = {}
    for module in (torch, ember):
        compiled, count = compiled_afresh(_sized, module)
        results[module] = [(compiled(module.arange(float(n)), v), count())
                           for n, v in ((3, .5), (5, .5), (7, 2.5), (9, 1.5), (11, .7), (13, -1.0), (4, 2.0))]
    got, want = ([(a.tolist(), b.tolist(), n) for (a, b), n in results[m]] for m in (ember, torch))
    assert repr(got) == repr(want) and [n for *_, n in got] == [1, 2, 3, 3, 3, 3, 3]


def _constants(x, v):
    t, x = ember_or_torch(x), x[:2]
    return t.cat([x + t.full((2,), v, dtype=t.int64), x + t.full_like(x, v, dtype=t.bfloat16), x + t.tensor([v, 1], dtype=t.int64),
                  t.arange(0.0, v + 2, 0.25).sum().reshape(1), x + t.as_tensor(v * 3, dtype=t.int32)])


def test_floats_read_into_constants_keep_their_values():
    """A float a factory reads into a constant whose values differ from it (truncated to an int,
    rounded to bfloat16, an ``arange``'s bound) is a use: the first value's result came back for
    every value (wrong results, main's)."""
    calls = [(v,) for v in (0.1, 2.7, -1.5)]  # (the float traced at 2.7, the third call checks)
    want_counts, want = graph_counts(_constants, torch, calls)
    got_counts, got = graph_counts(_constants, ember, calls)
    assert repr(got) == repr(want)
    assert got_counts == [1, 2, 3]


def _computed_by_ember(x, v):
    t = ember_or_torch(x)
    return t.cat([t.nn.functional.rrelu(x - 3, v / 10, v / 5), t.logspace(0, v, 3),
                  t.nn.functional.interpolate(x.reshape(1, 1, 6), scale_factor=v / 2 + 1).reshape(-1)])


def test_floats_ember_computes_with_keep_their_values():
    """A float that ember's own code computes with or converts (``rrelu``'s mean slope
    ``(lower + upper) / 2``, ``logspace``'s ``float(end)``, ``interpolate``'s
    ``float(scale_factor)``) is a use: its plain result was kept in the graph, the first traced
    value's result came back for every value (wrong results, main's)."""
    calls = [(v,) for v in (0.1, 2.7, 0.5)]
    want_counts, want = graph_counts(_computed_by_ember, torch, calls)
    got_counts, got = graph_counts(_computed_by_ember, ember, calls)
    assert [len(r) for r in got] == [len(r) for r in want] and got_counts == [1, 2, 3]
    assert torch.allclose(torch.tensor([x for r in got for x in r]), torch.tensor([x for r in want for x in r]), rtol=1e-6)
