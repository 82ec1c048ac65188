"""Dynamic sizes as torch 2.13 names them, graph counts against its ``CompileCounter`` call by
call and values against its eager: automatic dynamic and ``mark_dynamic`` give each dimension a
symbol of its own (a (5, 5) input is ``(s0, s1)``, so (5, 6) needs no graph; only
``dynamic=True``'s first graph shares one between equal sizes), merged where the program needs
the sizes equal (``x @ y``: compiler/duck_sizes.py); the size ``reshape(n, -1)`` infers is
``numel // n`` (compiler/size_fits.py ``_fit_quotient``), one graph for the values of ``n``."""
import pytest
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters


def _counts(fn, module, calls, **options):
    """The graph count after each call (``calls``: functions of the module making the arguments)
    of ``fn`` compiled afresh, and each call's result as a list (or the exception's class)."""
    if module is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        compiled, count = torch.compile(fn, backend=counter, **options), lambda: counter.frame_count
    else:
        ember.compiler.reset()
        compiled = ember.compile(fn, backend="aot_eager", **options)
        count = lambda: counters["stats"]["unique_graphs"]  # noqa: E731
    counts, results = [], []
    for make in calls:
        try:
            results.append(compiled(*make(module)).tolist())
        except RuntimeError as error:  # (torch's TorchRuntimeError is one)
            results.append(RuntimeError.__name__ if isinstance(error, RuntimeError) else error)
        counts.append(count())
    return counts, results


def _same(fn, calls, want_counts, **options):
    want = _counts(fn, torch, calls, **options)
    got = _counts(fn, ember, calls, **options)
    assert got[1] == want[1]
    assert got[0] == want[0] == want_counts


def _inputs(*shapes, mark=False):
    """A call's arguments: ``arange`` tensors of ``shapes``, each dim marked dynamic with ``mark``."""
    def make(module):
        made = []
        for shape in shapes:
            x = module.arange(float(torch.Size(shape).numel())).reshape(shape) * 0.5
            for d in range(len(shape) if mark else 0):
                module._dynamo.mark_dynamic(x, d)
            made.append(x)
        return made
    return make


def _row_sums(x):
    return (x * 2).sum(-1)


@pytest.mark.parametrize("shapes, counts, options", [
    ([(3, 1), (2, 2), (2, 3)], [1, 2, 2], {}),
    ([(4, 4), (5, 5), (5, 6), (7, 3)], [1, 2, 2, 2], {}),
    ([(4, 4), (5, 5), (5, 6)], [1, 1, 2], {"dynamic": True}),  # (duck sized: one symbol at (4, 4))
])
def test_equal_sizes_of_one_input_are_two_symbols(shapes, counts, options):
    """The REALPROG29 program: ember shared one symbol between the two fives (3 graphs)."""
    _same(_row_sums, [_inputs(s) for s in shapes], counts, **options)


def test_marked_dims_of_equal_size_are_two_symbols():
    _same(_row_sums, [_inputs((4, 4), mark=True), _inputs((5, 6), mark=True), _inputs((7, 7), mark=True)], [1, 1, 1])


@pytest.mark.parametrize("fn, shapes", [
    (lambda x, y: x @ y, [((4, 4), (4, 4)), ((5, 5), (5, 5)), ((5, 6), (6, 7)), ((8, 8), (8, 8))]),
    (lambda x, y: x * y + 1, [((4,), (4,)), ((5,), (5,)), ((6,), (6,)), ((2,), (2,))]),
    (lambda x, y: x + y, [((4, 4), (4,)), ((5, 5), (5,)), ((5, 6), (6,)), ((7, 3), (3,))]),
])
def test_sizes_the_program_needs_equal_are_merged(fn, shapes):
    """Probed apart, ``x @ y``'s inner sizes raise: probed together they hold, one symbol (torch's
    guard ``Eq(s1, s2)``), the others apart."""
    _same(fn, [_inputs(*s) for s in shapes], [1] + [2] * (len(shapes) - 1))


def _n_ks(*ks, length=12):
    return [lambda module, k=k: (module.arange(float(length)), k) for k in ks]


@pytest.mark.parametrize("fn", [
    lambda x, n: x.reshape(n, -1) * 2,
    lambda x, n: x.unflatten(0, (n, -1)) * 2,
    lambda x, n: x.view(-1, n) + n,
])
def test_an_int_sizing_a_view_with_minus_one(fn):
    """``12 // i0``: one graph for 2, 3, 4, 6 (ember: a graph per value); 5 does not divide 12,
    eager's RuntimeError."""
    _same(fn, _n_ks(2, 3, 4, 6, 5, 4), [1, 2, 2, 2, 2, 2])


def test_reshape_of_an_input_whose_length_changes_too():
    """``s0 // i0``: the probes of ``s0`` go on past the sizes that ``i0`` does not divide."""
    calls = [lambda module, m=m, k=k: (module.arange(float(m)), k)
             for m, k in ((12, 2), (12, 3), (24, 4), (18, 6), (30, 5), (8, 3), (16, 8))]
    _same(lambda x, n: x.reshape(n, -1).sum(1), calls, [1, 2, 3, 3, 3, 3, 3])


@pytest.mark.parametrize("fn", [
    lambda x, k: x[:k].sum(0) * 2,
    lambda x, k: x[k:].sum(0) * 2,
    lambda x, k: x[:k, :k].sum(0) * 2,  # (two dims of one size: k is below both)
])
def test_a_slice_bound_below_a_length_that_changes_too(fn):
    """torch guards ``k <= s0``: ember's bound is ``i0 <= s0`` where it was ``i0 <= 8`` (the
    probes of ``s0`` at 2 cut the slice short: another program, a graph per length)."""
    calls = [lambda module, n=n, k=k: (module.arange(float(n * n)).reshape(n, n), k)
             for n, k in ((8, 3), (10, 4), (12, 5), (9, 2), (16, 7), (20, 3), (11, 11), (6, 2))]
    _same(fn, calls, [1] + [2] * 7)


def test_a_slice_bound_below_one_of_two_equal_lengths():
    """``x[:, :k]`` of a square input: the bound is ``i0 <= s1``, x's dim 1 (``i0 <= s0`` too, by
    its size alone, recompiled at (6, 7) with k = 7)."""
    calls = [lambda module, n=n, m=m, k=k: (module.ones(n, m), k)
             for n, m, k in ((4, 4, 4), (5, 5, 5), (6, 6, 3), (6, 7, 7))]
    _same(lambda x, k: x[:, :k].sum(-1), calls, [1, 2, 2, 2])


def test_an_int_at_1_is_specialised_as_a_value_not_for_good():
    """``x[:min(k, 4)]`` at k = 0, 1, 2, ...: torch specialises 0 and 1 and makes the third graph
    dynamic; ember specialised k for good at 1, a graph per value."""
    _same(lambda x, k: x[:min(k, 4)] * 2, _n_ks(0, 1, 2, 3, 4, 5, 6, length=6), [1, 2, 3, 3, 3, 3, 3])
