"""Cutting a graph's C into translation units by the compiler's expected time
(``toolchain.compile_cost``), and compiling the costliest first, so the CPUs finish together."""
import pytest

from ember.compiler.backends import cgen, toolchain


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
