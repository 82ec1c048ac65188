"""ember.fx against torch.fx 2.13, continued: unpacking Proxies, type annotations in the
printed graph and code, pickling and copying a GraphModule, dead code elimination."""
import copy
import operator
import pickle
from typing import List, Optional, Tuple

import pytest

import ember
import ember.fx
from torchcompare import assert_close, to_ember

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402


def both(fn):
    return fn(ember), fn(torch)


def test_unpacking_a_proxy_records_getitems_and_other_iteration_raises_torchs_trace_error():
    def unpacking(lib):
        def f(x):
            a, b = x.shape
            c, d, e = x.split(1)
            return (c + a) * b + d.sum() + e.size(0)
        return lib.fx.symbolic_trace(f)
    e, t = both(unpacking)
    assert e.code == t.code and str(e.graph) == str(t.graph)
    x = torch.randn(3, 2)
    assert_close(e(to_ember(x)), t(x))

    def looping(x):
        for row in x:
            x = x + row
        return x

    def starred(x):
        return x.new_zeros(*x)

    def starred_unpack(x):
        a, *rest = x  # UNPACK_EX: its length is not known either
        return a
    for f in (looping, starred, starred_unpack):
        with pytest.raises(torch.fx.proxy.TraceError) as want:
            torch.fx.symbolic_trace(f)
        with pytest.raises(ember.fx.proxy.TraceError) as got:
            ember.fx.symbolic_trace(f)
        assert str(got.value) == str(want.value)


def test_annotations_print_in_the_graph_and_the_code_as_torchs():
    def annotated(lib):
        def f(x: lib.Tensor, y: List[int], z: Optional[lib.Tensor], w: Tuple[lib.Tensor, ...], s: lib.Size,
              q: "lib.Tensor", n: int | None = 2, k: float = 1.5) -> Tuple[lib.Tensor, int]:
            return x * k + n, y
        return lib.fx.symbolic_trace(f)
    e, t = both(annotated)
    assert e.code == t.code
    assert str(e.graph) == str(t.graph)
    x = torch.randn(3)
    out_e, out_t = e(to_ember(x), [1], None, (), None, None), t(x, [1], None, (), None, None)
    assert_close(out_e[0], out_t[0])
    assert out_e[1] == out_t[1] == [1]

    def built(lib):
        g = lib.fx.Graph()
        x = g.placeholder("x", type_expr=lib.Tensor)
        r = g.call_function(lib.relu, (x,), type_expr=lib.Tensor)
        g.output(r, type_expr=lib.Tensor)
        return g.python_code("self").src, str(g)
    assert built(ember) == built(torch)
