"""A compiled function in the profiler: one ``CompiledFunction`` range per call (torch's
profiles show compiled code as one region), holding a range per generated C kernel and per
node run from Python, with the same results as unprofiled calls."""
import warnings

import numpy as np

import ember


def test_compiled_call_is_one_range_with_its_kernels_inside():
    ember.compiler.reset()

    def f(x):
        return (x * 2).logcumsumexp(0).exp() + 1  # C loop, logcumsumexp from Python, C loop

    compiled = ember.compile(f, fullgraph=True)
    x = ember.randn(5, 3)
    for _ in range(3):
        plain = compiled(x)
    with ember.profiler.profile() as prof:
        profiled = compiled(x)
    np.testing.assert_array_equal(profiled.numpy(), plain.numpy())
    np.testing.assert_allclose(profiled.numpy(), f(x).numpy(), rtol=1e-6)
    regions = [e for e in prof.events() if e.name == "CompiledFunction"]
    assert len(regions) == 1 and regions[0].cpu_parent is None
    inside = [e.name for e in regions[0].cpu_children]
    assert [name.split(" ")[0] for name in inside] == ["compiled::k0", "ember::Logcumsumexp", "compiled::k2"], inside
    assert "Mul(mul)" in inside[0] and "Add(add)" in inside[2]
    assert all(e.cpu_parent is not None for e in prof.events() if e.name != "CompiledFunction")
    ember.compiler.reset()


def test_generated_python_call_is_one_range_with_a_range_per_node(monkeypatch):
    # no compiler (or a C build still under way with async_compile): the graph runs as the
    # generated Python, which shows in the profiler as the C does
    from ember.compiler.backends import toolchain
    ember.compiler.reset()
    monkeypatch.setattr(toolchain, "find_compiler", lambda: None)

    def f(x):
        return (x * 2).logcumsumexp(0).exp() + 1

    compiled = ember.compile(f, fullgraph=True)
    x = ember.randn(5, 3)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "ember.compile: no C compiler", RuntimeWarning)
        plain = compiled(x)
    with ember.profiler.profile() as prof:
        profiled = compiled(x)
    np.testing.assert_array_equal(profiled.numpy(), plain.numpy())
    np.testing.assert_allclose(profiled.numpy(), f(x).numpy(), rtol=1e-6)
    regions = [e for e in prof.events() if e.name == "CompiledFunction"]
    assert len(regions) == 1 and regions[0].cpu_parent is None
    assert [e.name for e in regions[0].cpu_children] == ["ember::Mul", "ember::Logcumsumexp", "ember::Exp", "ember::Add"]
    ember.compiler.reset()
