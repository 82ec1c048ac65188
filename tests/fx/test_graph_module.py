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
