"""Int arguments that ember still specialised (a graph per value) where torch 2.13's automatic
dynamic makes one symbol (2 graphs), graph counts compared with torch's CompileCounter call by
call and values with torch's eager: an int beside a float constant in an expression whose left
operand the bytecode reading (compiler/traced_reads.py ``_span_kind``) could not type (a
subscript: ``x.max(0)[0] * 0.5 + n``, a function's or a layer's result: ``F.relu(x) * 0.5 + n``); a ``min``/``max`` of an int symbol as a size (a slice's
bound, ``narrow``'s length, ``ones``' size, ``repeat``'s count: fitted as ``min(i0, 4)`` over
probes on both sides of its corner, compiler/size_fits.py ``_fit_minmax``)."""
import pytest
import torch

from graph_counts import compiled_afresh, graph_counts

import ember

INTS = [(k,) for k in (1, 2, 3, 4, 5, 0, -2, 6, 7)]


def _max_values(x, n):
    return x.max(0)[0] * 0.5 + n


def _item(x, n):
    return x[0] * 2.0 + n


def _topk(x, n):
    return x.topk(2).values * 0.5 - n


@pytest.mark.parametrize("fn", [_max_values, _item, _topk])
def test_an_int_beside_a_tensor_subscript_times_a_float_is_one_symbol(fn):
    want_counts, want = graph_counts(fn, torch, INTS)
    got_counts, got = graph_counts(fn, ember, INTS)
    assert got_counts == want_counts == [1] + [2] * (len(INTS) - 1)
    assert got == want


def _relu_torch(x, n):
    return torch.nn.functional.relu(x - 2) * 0.5 + n


def _relu_ember(x, n):
    return ember.nn.functional.relu(x - 2) * 0.5 + n


def _layer(module):
    class Scaled(module.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.scale = module.nn.Linear(6, 3), 0.5

        def forward(self, x, n):
            return self.fc(x) * 0.5 + n, (-x if self.scale * n > 2.5 else x) * n  # (a float attribute: a use)
    module.manual_seed(0)
    return Scaled()


def test_an_int_beside_a_function_or_layer_result_times_a_float_is_one_symbol():
    """``F.relu(x) * 0.5 + n``, ``self.fc(x) * 0.5 + n``: ember's functions and layers give tensors
    (a graph per value before); ``self.scale * n`` is still a float's operator (a use of ``n``)."""
    want_counts, want = graph_counts(_relu_torch, torch, INTS)
    got_counts, got = graph_counts(_relu_ember, ember, INTS)
    assert got_counts == want_counts == [1] + [2] * (len(INTS) - 1)
    assert got == want
    ember.compiler.reset()
    layer, reference = _layer(ember), _layer(torch)
    layer.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in reference.state_dict().items()})
    compiled = ember.compile(layer)
    for n in (1, 2, 3, 6, 7, -2):  # (at 5, 6: the branch flips)
        got, want = compiled(ember.arange(6.0), n), reference(torch.arange(6.0), n)
        assert got[0].tolist() == pytest.approx(want[0].tolist(), abs=1e-5) and got[1].tolist() == want[1].tolist()


def _item_branch(x, n):
    """``x[0].item() * 0.5`` is a float: ``+ n`` reads the int unseen, and steers the branch."""
    return (-x if x[1].item() * 0.5 + n > 50 else x) * n


def test_a_float_item_beside_the_int_keeps_eagers_branch():
    ember.compiler.reset()
    compiled = ember.compile(_item_branch, backend="aot_eager")
    for k in (0, 1, 2, 3, 49, 50, 51, 99, 7):
        assert compiled(ember.arange(6.0), k).tolist() == _item_branch(torch.arange(6.0), k).tolist(), k


def _min_slice(x, k):
    return x[:min(k, 4)].sum() * max(k, 1)


def _min_returned(x, k):
    y, n = x * 2, min(k, 4)
    return y + n


def _min_sizes(x, k):
    module = torch if isinstance(x, torch.Tensor) else ember
    return x.narrow(0, 0, min(k, 5)).sum() + module.ones(min(k, 4)).sum() + x


def _min_repeat(x, k):
    return x.repeat(max(min(k, 3), 1)).reshape(-1, 2)[:, :1] + 1


POSITIVE = [(k,) for k in (1, 2, 3, 4, 5, 6, 3, 9)]


@pytest.mark.parametrize("fn", [_min_slice, _min_returned, _min_sizes, _min_repeat])
def test_a_min_of_an_int_symbol_as_a_size_is_one_symbol(fn):
    """torch's ``sym_min``: 2 graphs; ember guarded which operand ``min`` picked (3: ``k < 4``, ``k >= 4``)
    or, where Python computed the size from it (``narrow``, ``ones``), made a graph per value."""
    want_counts, want = graph_counts(fn, torch, POSITIVE)
    got_counts, got = graph_counts(fn, ember, POSITIVE)
    assert got_counts == want_counts == [1] + [2] * (len(POSITIVE) - 1)
    assert got == want


def _slice(x, k):
    return x[:k] * 2


SIGNED = [(k,) for k in (1, 2, 3, 4, 5, 6, 0, -2, -3, -1, -6, 7, 9, -8)]


@pytest.mark.parametrize("fn, counts", [
    (_min_slice, [1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4]),
    (_slice, [1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 5]),
])
def test_slice_bounds_of_both_signs_and_past_the_dim(fn, counts):
    """A slice's bound is compared as eager's slicing compares it (its sign, within the dim:
    compiler/traced_ints.py ``_note_bounds``), as torch guards it: a graph for the values on the
    same sides, not one per value (``x[:k]`` probed past the dim was a graph per value; a negative
    bound of ``x[:min(k, 4)]`` too). ember's counts are torch's (``x[:k]``: at most)."""
    want_counts, want = graph_counts(fn, torch, SIGNED)
    got_counts, got = graph_counts(fn, ember, SIGNED)
    assert got == want
    assert got_counts == counts and all(a <= b for a, b in zip(got_counts, want_counts))
    assert fn is _slice or got_counts == want_counts


def _counter(module, read):
    class Counter(module.nn.Module):
        def __init__(self):
            super().__init__()
            self.n = 1

        def forward(self, x, k):
            self.n = k + 1
            return x + k

    class Reading(Counter):
        def forward(self, x, k):
            out = x * self.n + k
            self.n = k + 1
            return out
    return Reading() if read else Counter()


@pytest.mark.parametrize("read", [False, True])
def test_an_int_attribute_set_from_an_int_symbol(read):
    """``self.n = k + 1``: set after each replay to the value of that call's ``k`` (as a float
    argument's: compiler/attribute_sets.py), one graph where no code reads ``self.n`` (the call
    ran eagerly at each value before, a Python side effect); read, its value guarded: a graph per
    value, as torch's. Its first call (k not yet a symbol) runs eagerly."""
    found = {}
    for module in (torch, ember):
        m = _counter(module, read)
        compiled, count = compiled_afresh(m, module)
        found[module] = [(compiled(module.arange(3.0), k).tolist(), m.n, type(m.n), count()) for k in (1, 2, 3, 0, -2)]
    assert [r[:3] for r in found[ember]] == [r[:3] for r in found[torch]]
    assert [r[3] for r in found[torch]] == ([1, 2, 3, 4, 5] if read else [1, 2, 2, 2, 2])
    assert [r[3] for r in found[ember]] == ([0, 1, 2, 3, 4] if read else [0, 1, 1, 1, 1])


def _rows(x, k):
    return x[:k].sum(0) * 2


def test_a_slice_bound_of_a_tensor_of_changing_length():
    """``x[:k]`` where x's length changes too: the bound's comparisons (``0 <= k <= n``) narrow the
    real call's range, not each probe's (a probe of x's length compared k with another n: k was
    specialised, 8 graphs; main 7; 5 in session 29); since session 30 the bound is torch's guard
    ``k <= s0`` (``i0 <= s0``, test_duck_30.py): torch's 2."""
    compiled, count = compiled_afresh(_rows, ember)
    counts = []
    for n, k in ((8, 3), (10, 4), (12, 5), (9, 2), (16, 7), (20, 3), (11, 11), (6, 2)):
        got = compiled(ember.arange(2.0 * n).reshape(n, 2), k).tolist()
        assert got == _rows(torch.arange(2.0 * n).reshape(n, 2), k).tolist(), (n, k)
        counts.append(count())
    assert counts == [1, 2, 2, 2, 2, 2, 2, 2]
