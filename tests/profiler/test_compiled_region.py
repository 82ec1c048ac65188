"""A compiled function in the profiler: one ``CompiledFunction`` range per call (torch's
profiles show compiled code as one region), holding a range per generated C kernel and per
node run from Python, with the same results as unprofiled calls."""
import warnings

import numpy as np

import ember


def _f(x):
    return (x * 2).logcumsumexp(0).exp() + 1  # C loop, logcumsumexp from Python, C loop


def _region(compiled, x, warm=3):
    """The names of the ranges inside the one ``CompiledFunction`` range of a profiled call,
    after checking that call's values against unprofiled calls and eager."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "ember.compile: no C compiler", RuntimeWarning)
        for _ in range(warm):
            plain = compiled(x)
    with ember.profiler.profile() as prof:
        profiled = compiled(x)
    np.testing.assert_array_equal(profiled.numpy(), plain.numpy())
    np.testing.assert_allclose(profiled.numpy(), _f(x).numpy(), rtol=1e-6)
    regions = [e for e in prof.events() if e.name == "CompiledFunction"]
    assert len(regions) == 1 and regions[0].cpu_parent is None
    assert all(e.cpu_parent is not None for e in prof.events() if e.name != "CompiledFunction")
    return [e.name for e in regions[0].cpu_children]


def test_compiled_call_is_one_range_with_its_kernels_inside():
    ember.compiler.reset()
    inside = _region(ember.compile(_f, fullgraph=True), ember.randn(5, 3))
    assert [name.split(" ")[0] for name in inside] == ["compiled::k0", "ember::Logcumsumexp", "compiled::k2"], inside
    assert "Mul(mul)" in inside[0] and "Add(add)" in inside[2]
    ember.compiler.reset()


def test_generated_python_call_is_one_range_with_a_range_per_node(monkeypatch):
    # no compiler (or a C build still under way with async_compile): the graph runs as the
    # generated Python, which shows in the profiler as the C does
    from ember.compiler.backends import toolchain
    ember.compiler.reset()
    monkeypatch.setattr(toolchain, "find_compiler", lambda: None)
    inside = _region(ember.compile(_f, fullgraph=True), ember.randn(5, 3), warm=1)
    assert inside == ["ember::Mul", "ember::Logcumsumexp", "ember::Exp", "ember::Add"]
    ember.compiler.reset()
