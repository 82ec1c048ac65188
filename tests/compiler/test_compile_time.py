"""What a cold compile spends: the graph's C cut into translation units by the compiler's
expected time (``toolchain.compile_cost``), compiled costliest first so the CPUs finish
together; row kernels that inline the vector exp once per element, not twice."""
import re

import numpy as np
import pytest

from ember.compiler.backends import cgen, compile_graph, toolchain
from graph_builder import Builder


def _loops(n, width=40):
    """C text of about ``width * n`` characters holding ``n`` loops."""
    return "".join(f"for (long i = 0; i < {width}; i++) a[i] += 1;\n" for _ in range(n))


def test_compile_cost_weighs_loops_and_vector_math_above_length():
    plain = "int x = 1;\n" * 100  # 1100 characters of straight-line code
    loops = _loops(10)
    math = "y[j] = em_expf(x[j]) + em_tanh(x[j]) + em_log1pf(x[j]);\n"
    assert len(loops) < len(plain) and toolchain.compile_cost(loops) > 5 * toolchain.compile_cost(plain)
    assert toolchain.compile_cost(math) == pytest.approx(len(math) / 1000 + 18)
    # names that only start like the math functions are not calls of it
    assert toolchain.compile_cost("em_explain(x); em_expfoo(y);") < 1


def test_units_balance_cost_not_length(monkeypatch):
    """Six kernels, three costly (loops) and three long but cheap, in four units on two CPUs:
    the costly ones are spread (the cut by length put two of them in one unit), and the helper's
    CPU gets one unit besides it, the other CPU two, their costs within one kernel of equal."""
    monkeypatch.setattr(cgen.CSource, "MIN_UNIT_CHARS", 1)
    costly, cheap = _loops(30, 10), "/* " + "x" * 3000 + " */\n"
    kernels = [costly, costly, cheap, costly, cheap, cheap]
    helper = _loops(20, 10)
    source = cgen.CSource("H", kernels, "M", [helper])
    units = source.units(4)
    assert units[-1] == helper and len(units) == 4
    body = [u[1:] for u in units[:-1]]  # without the head
    assert [u.count(costly) for u in body] == [1, 1, 1]
    costs = sorted(map(toolchain.compile_cost, units), reverse=True)
    cpus = [costs[0], costs[1]]  # the costliest first: each next unit to the CPU that is free first
    for c in costs[2:]:
        cpus[cpus.index(min(cpus))] += c
    assert abs(cpus[0] - cpus[1]) <= toolchain.compile_cost(costly)
    # without helpers: equal costs, as many units as asked
    plain = cgen.CSource("H", kernels, "M").units(3)
    assert [u.count(costly) for u in plain] == [1, 1, 1]
    assert cgen.CSource("H", kernels, "M", [helper]).units(1) == ["HM" + "".join(kernels), helper]


def test_a_cached_helper_reserves_no_cpu(monkeypatch):
    """With the helper's object cached (``built``), the kernels are cut into ``count`` units of
    equal cost, two per CPU, as without helpers (not one CPU's share less the helper's), and the
    helper is still listed (its object is linked)."""
    monkeypatch.setattr(cgen.CSource, "MIN_UNIT_CHARS", 1)
    costly = _loops(30, 10)
    kernels = [costly] * 8
    helper = _loops(40, 10)
    source = cgen.CSource("H", kernels, "M", [helper])
    cold = source.units(4)
    warm = source.units(4, built=lambda unit: unit == helper)
    assert warm[-1] == helper and cold[-1] == helper
    assert [u.count(costly) for u in warm[:-1]] == [2, 2, 2, 2] == [u.count(costly) for u in cgen.CSource("H", kernels, "M").units(4)]
    assert len(cold) == 4 and [u.count(costly) for u in cold[:-1]] != [2, 2, 2, 2]  # the helper's CPU holds fewer
    assert source.units(4, built=lambda unit: False) == cold


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_has_object_tells_what_build_will_compile(tmp_path, monkeypatch):
    """``has_object`` is true exactly for the units whose objects ``build`` cached (the same
    key: source, flags with or without OpenMP), so a later graph's cut skips them."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cc = toolchain.find_compiler()
    units = ["int g0(void) { return 3; }\n", "int g1(void) { return 4; }\n"]
    assert not any(toolchain.has_object(u, cc) for u in units)
    toolchain.build(units[:1], cc, parallel=False)
    assert toolchain.has_object(units[0], cc) and not toolchain.has_object(units[1], cc)
    compiled = []
    run = toolchain._run
    monkeypatch.setattr(toolchain, "_run", lambda cmd: (compiled.append(cmd), run(cmd))[1])
    lib = toolchain.build(units, cc, parallel=False)[0]
    assert len(compiled) == 2 and open(compiled[0][-3]).read() == units[1]  # one unit, then the link
    assert lib.g0() == 3 and lib.g1() == 4
    # OpenMP flags are part of the object's key
    openmp = bool(toolchain._openmp_flags(cc))
    assert toolchain.has_object(units[1], cc, openmp=True) is not openmp


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_the_costliest_unit_compiles_first(tmp_path, monkeypatch):
    """``build`` starts the compilers in order of cost (longest processing time first), whatever
    the units' order and lengths; the library links them all."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    order = []
    run = toolchain._run
    monkeypatch.setattr(toolchain, "_run", lambda cmd: (order.append(cmd[-3]), run(cmd))[1])
    units = ["/* " + "x" * 4000 + " */ int f0(void) { return 0; }\n",
             "int f1(int* a) { " + _loops(12) + " return a[0]; }\n",
             "int f2(int* a) { " + _loops(4) + " return a[1]; }\n"]
    lib = toolchain.build(units, toolchain.find_compiler(), parallel=False)[0]
    sources = [open(c).read() for c in order[:3]]
    assert sources == [units[1], units[2], units[0]]
    assert lib.f0() == 0


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_softmax_and_cross_entropy_gradient_take_each_exp_once(tmp_path, monkeypatch):
    """The softmax and the cross-entropy gradient keep each exponential for their scaling pass
    (their C calls em_expf once each), and equal the float64 closed forms:
    softmax(x), and (softmax(x) - onehot(y)) * g / rows with ignored rows 0 (a row of +-inf
    and NaN logits as eager: NaN)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rng = np.random.default_rng(7)
    rows, classes = 13, 37  # odd sizes: vector loops with remainders
    x = (rng.standard_normal((rows, classes)) * 4).astype(np.float32)
    x[3, 5] = np.inf
    x[4, :] = -np.inf
    x[4, 2] = 0.0
    labels = rng.integers(0, classes, rows)
    labels[::4] = -100
    b = Builder()
    xi, yi, gi = b.input("x", x), b.input("y", labels), b.input("g", np.full((), 0.5, np.float32))
    soft = b.call("Softmax", xi, dim=-1)
    grad = b.call("CrossEntropyBackward", gi, yi, None, b.call("Mul", xi, 1.0))
    g = b.output(soft, grad)
    fn = compile_graph(g, {})
    kernels = {name: text for name, text in re.findall(r"/\* ((?:gradient of )?cross entropy|softmax)[^\n]*\*/\n(.*?)\nint kernel_",
                                                     fn.c_source, re.S)}
    assert set(kernels) == {"softmax", "gradient of cross entropy"}
    assert all(text.count("em_expf(") == 1 for text in kernels.values())
    out_soft, out_grad = fn([x.copy(), labels.copy(), np.full((), 0.5, np.float32)])
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x64 - x64.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
    kept = labels != -100
    onehot = np.zeros_like(p)
    onehot[np.flatnonzero(kept), labels[kept]] = 1
    expected = np.where(kept[:, None], (p - onehot) * 0.5 / kept.sum(), 0.0)
    np.testing.assert_allclose(out_soft, p, rtol=2e-6, atol=1e-7)  # em_expf: 2 ulp, sum: ~n ulp
    np.testing.assert_allclose(out_grad, expected, rtol=2e-6, atol=1e-8)
    assert np.isnan(out_soft[3]).all() and out_soft[4, 2] == 1 and (out_soft[4, np.arange(classes) != 2] == 0).all()
