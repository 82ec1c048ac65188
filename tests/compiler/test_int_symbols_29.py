"""Int arguments that ember still specialised (a graph per value) where torch 2.13's automatic
dynamic makes one symbol (2 graphs), graph counts compared with torch's CompileCounter call by
call and values with torch's eager: an int beside a float constant in an expression whose left
operand the bytecode reading (compiler/traced_reads.py ``_span_kind``) could not type (a
subscript: ``x.max(0)[0] * 0.5 + n``)."""
import pytest
import torch

from graph_counts import graph_counts

import ember

INTS = [(k,) for k in (1, 2, 3, 4, 5, 0, -2, 6, 7)]


def _max_values(x, n):
    return x.max(0)[0] * 0.5 + n


def _item(x, n):
    return x[0] * 2.0 + n


def _topk(x, n):
    return x.topk(2).values * 0.5 - n


def _slice_sum(x, n):
    return x[1:3].sum() * 0.5 + n


def _transposed(x, n):
    return x.reshape(2, 3).T * 0.5 + n


@pytest.mark.parametrize("fn", [_max_values, _item, _topk, _slice_sum, _transposed])
def test_an_int_beside_a_tensor_subscript_times_a_float_is_one_symbol(fn):
    want_counts, want = graph_counts(fn, torch, INTS)
    got_counts, got = graph_counts(fn, ember, INTS)
    assert got_counts == want_counts == [1] + [2] * (len(INTS) - 1)
    assert got == want


def _item_branch(x, n):
    """``x[0].item() * 0.5`` is a float: ``+ n`` reads the int unseen, and steers the branch."""
    return (-x if x[1].item() * 0.5 + n > 50 else x) * n


def test_a_float_item_beside_the_int_keeps_eagers_branch():
    ember.compiler.reset()
    compiled = ember.compile(_item_branch, backend="aot_eager")
    for k in (0, 1, 2, 3, 49, 50, 51, 99, 7):
        assert compiled(ember.arange(6.0), k).tolist() == _item_branch(torch.arange(6.0), k).tolist(), k
