"""An int the compiled function reads from its own closure cell, changed between calls by the
enclosing function (issue 10, session 32): torch 2.13 takes it as a symbol after one recompile,
as an int argument; ember made a graph per value. Now the cell is a position after the arguments
(``compiler/closure_ints.py``), so it is a symbol where an int argument would be. Graph counts
are compared with torch's ``CompileCounter`` call by call, values with torch's by repr."""
import torch
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters

VALUES = (3, 4, 0, -2, 10 ** 6, 1, -20)


def _module(x):
    return torch if isinstance(x, torch.Tensor) else ember


def _compiler(module):
    """``(compile, count)`` of ``module`` (``torch`` or ``ember``) after a reset."""
    if module is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        return (lambda f: torch.compile(f, backend=counter)), lambda: counter.frame_count
    ember.compiler.reset()
    return ember.compile, lambda: counters["stats"]["unique_graphs"]


def _over_cells(module, body, calls):
    """Graph counts and results of ``body(x, n, m, flag)`` compiled as a closure over ``n``,
    ``m``, ``flag``, each call of ``calls`` setting them first."""
    compile_, count = _compiler(module)
    n, m, flag = 1, 2, True

    def f(x):
        return body(x, n, m, flag)
    compiled, counts, out = compile_(f), [], []
    for n, m, flag in calls:
        try:
            out.append(compiled(module.arange(12.0)).tolist())
        except Exception as error:
            out.append((type(error).__name__, str(error)))
        counts.append(count())
    return counts, out


def _number(x, n, m, flag):
    return x * n + 1 + x * (n * 0.5) + 0.25 * n


def _size(x, n, m, flag):
    return x[:n] * n + m + (1 if flag else 0)


def test_a_closure_int_taken_by_ops_is_a_symbol():
    calls = [(v, 2, True) for v in VALUES]
    want_counts, want = _over_cells(torch, _number, calls)
    got_counts, got = _over_cells(ember, _number, calls)
    assert got_counts == want_counts == [1] + [2] * (len(calls) - 1)
    assert repr(got) == repr(want)


def test_a_closure_int_as_a_size():
    """``x[:n]``: torch 2.13 specialises 0 and meets its clamps (5 graphs over these values);
    ember's size symbol covers more of them (4: its ranges are checked at each call), the values
    torch's. A bool cell stays a value (its flip a graph of its own in both)."""
    calls = [(v, 2, True) for v in (3, 4, 9, 0, -3)] + [(6, 3, False), (4, 5, False)]
    want_counts, want = _over_cells(torch, _size, calls)
    got_counts, got = _over_cells(ember, _size, calls)
    assert repr(got) == repr(want)
    assert got_counts[:3] == want_counts[:3] == [1, 2, 2] and got_counts[-1] < want_counts[-1]
    assert got_counts[-1] - got_counts[-3] == 1  # (the flag's flip: one more graph)


def test_a_closure_int_written_by_the_call():
    """``nonlocal n; n = n + 1``: each call's value and the cell left as eager's."""
    def run(module):
        compile_, _ = _compiler(module)
        n = 2

        def f(x):
            nonlocal n
            n = n + 1
            return x * n
        compiled = compile_(f)
        return [compiled(module.arange(3.0)).tolist() for _ in range(5)], n
    assert run(ember) == run(torch) == ([[0.0, k, 2.0 * k] for k in range(3, 8)], 7)


def test_beside_a_closure_float_and_in_a_modules_forward():
    """A closure's changing int beside its changing float and a float argument (torch 2 graphs,
    ember was 5), and a module whose ``forward`` reads a closure's int (torch 2, ember was 4)."""
    def run(module):
        compile_, count = _compiler(module)
        n, c = 3, 0.5

        def f(x, lr):
            return x[:n] * lr * c + n + x.sum() * (n * 0.25)

        class Scaled(module.nn.Module):
            def forward(self, x):
                return x * n + 1
        compiled, out, counts = compile_(f), [], []
        for n, c, lr in ((3, 0.5, 0.1), (4, 0.25, 0.2), (5, 1.5, 0.3), (6, 2.5, 0.4), (2, 0.5, 1.0)):
            out.append(compiled(module.arange(10.0), lr).tolist())
        counts.append(count())
        compiled = compile_(Scaled())
        for n in (3, 4, 5, 6):
            out.append(compiled(module.arange(4.0)).tolist())
        return counts + [count()], out
    want_counts, want = run(torch)
    got_counts, got = run(ember)
    assert got_counts == want_counts == [2, 4]  # (the function's graphs, then with the module's)
    assert repr(got) == repr(want)
