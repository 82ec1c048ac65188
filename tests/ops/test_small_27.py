"""SMALL27, against torch 2.13: ``cat``/``stack`` (and their kin) refuse a generator or any other
non-sequence with the parser's TypeError; ``out=`` sharing memory with an input is refused as torch
does; the ``out=`` autograd error names the op; views made under ``no_grad``/``inference_mode`` of a
tensor requiring grad require grad; ``tensor``/``full`` of ints past int64 (and of numbers past a
dtype's range) raise torch's error classes and words."""
import warnings

import pytest
import torch as real

import ember as torch


def _outcome(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch warns that a non-empty out= is resized)
            result = fn(lib)
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e).__name__, str(e)
    return "ok", result.tolist() if hasattr(result, "tolist") else result


def _same(fn):
    ours, theirs = _outcome(torch, fn), _outcome(real, fn)
    assert ours == theirs


JOINS = {
    "cat": lambda t, xs, **kw: t.cat(xs, **kw), "stack": lambda t, xs, **kw: t.stack(xs, **kw),
    "concat": lambda t, xs, **kw: t.concat(xs, **kw), "concatenate": lambda t, xs, **kw: t.concatenate(xs, **kw),
    "hstack": lambda t, xs, **kw: t.hstack(xs, **kw), "vstack": lambda t, xs, **kw: t.vstack(xs, **kw),
    "dstack": lambda t, xs, **kw: t.dstack(xs, **kw), "column_stack": lambda t, xs, **kw: t.column_stack(xs, **kw)}


@pytest.mark.parametrize("name", JOINS)
@pytest.mark.parametrize("kind", ["generator", "map", "set", "tensor"])
def test_join_refuses_what_is_no_tuple_or_list(name, kind):
    def run(t):
        a, b = t.ones(2), t.zeros(2)
        given = {"generator": (x for x in (a, b)), "map": map(lambda x: x, (a, b)), "set": {a},
                 "tensor": t.ones(2, 2)}[kind]
        return JOINS[name](t, given)
    _same(run)
    assert _outcome(torch, run)[0] == "TypeError"


def test_join_still_takes_tuples_and_lists_and_keyword():
    _same(lambda t: t.cat(tensors=(t.ones(2), t.zeros(1))))
    _same(lambda t: t.stack([t.ones(2), t.zeros(2)], 1))
    _same(lambda t: t.cat(tensors=(x for x in [t.ones(2)])))


OUT_CASES = {
    "stack, out first": lambda t, a, b: t.stack([a, b], out=a),
    "stack, out first, dim=1": lambda t, a, b: t.stack([a, b], dim=1, out=a),
    "stack, out later": lambda t, a, b: t.stack([b, a, b], dim=1, out=a),
    "stack, out only": lambda t, a, b: t.stack([a, a], out=a),
    "stack, shapes differ": lambda t, a, b: t.stack([a, a, b[:1]], out=a),
    "stack, a row of out": lambda t, a, b: t.stack([a[0], b[0]], out=a),
    "stack, memory ranges meet (not dense)": lambda t, a, b: t.stack([a[:, 1], b[0, :2]], out=a[:, ::2]),
    "stack, no overlap": lambda t, a, b: t.stack([b[0], b[1]], out=a),
    "cat, out among inputs": lambda t, a, b: t.cat([a, b], out=a),
    "cat, overlapping slice": lambda t, a, b: t.cat([a.view(-1)[1:3]], out=a.view(-1)[:2]),
    "cat, apart slice": lambda t, a, b: t.cat([a.view(-1)[3:5]], out=a.view(-1)[:2]),
    "cat, no overlap": lambda t, a, b: t.cat([b, b], out=a),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_join_out_among_inputs(case):
    _same(lambda t: OUT_CASES[case](t, t.arange(6.0).reshape(2, 3), t.ones(2, 3)))


def test_out_autograd_error_names_the_op():
    cases = [
        lambda t, x, m, o: t.add(x, 1, out=o), lambda t, x, m, o: t.mul(x, x, out=o),
        lambda t, x, m, o: t.matmul(m, m, out=t.empty(2, 2)), lambda t, x, m, o: t.mm(m, m, out=t.empty(2, 2)),
        lambda t, x, m, o: t.bmm(m[None], m[None], out=t.empty(1, 2, 2)),
        lambda t, x, m, o: t.cat([x, x], out=t.empty(4)), lambda t, x, m, o: t.hstack([x, x], out=t.empty(4)),
        lambda t, x, m, o: t.stack([x, x], out=t.empty(2, 2)), lambda t, x, m, o: t.sum(m, 0, out=o),
        lambda t, x, m, o: t.clamp(x, 0, 1, out=o), lambda t, x, m, o: t.clip(x, 0, 1, out=o),
        lambda t, x, m, o: t.exp(x, out=o), lambda t, x, m, o: t.maximum(x, x, out=o),
        lambda t, x, m, o: t.linalg.vector_norm(x, out=t.empty(())),
        lambda t, x, m, o: t.add(x.detach(), 1, out=t.empty(2, requires_grad=True)),
    ]
    for case in cases:
        fn = (lambda c: lambda t: c(t, t.ones(2, requires_grad=True), t.ones(2, 2, requires_grad=True), t.empty(2)))(case)
        _same(fn)
        assert "(): functions with out=... arguments don't support automatic differentiation" in _outcome(torch, fn)[1]


@pytest.mark.parametrize("mode", ["inference_mode", "no_grad"])
def test_views_made_without_grad_mode_require_grad_as_their_base(mode):
    def views(t):
        x, y = t.ones(4, 2, requires_grad=True), None
        y = x * 2
        with getattr(t, mode)():
            made = [*x.unbind(0), *x.split(2), *x.split([1, 3]), *x.chunk(2), *t.unbind(x, 1), *x.tensor_split(2),
                    *t.vsplit(x, 2), x.view(8), x.narrow(0, 0, 2), x[0], x.t(), *y.unbind(0), y.view(8)]
            inside = [(v.requires_grad, v.is_leaf, v.grad_fn is None, v.is_inference()) for v in made]
            plain = (x * 2).requires_grad
        return inside, [v.requires_grad for v in made], plain
    _same(views)


def test_a_view_made_under_no_grad_then_used_with_grad():
    def run(t):
        x = t.ones(3, requires_grad=True)
        with t.no_grad():
            v = x[:2]
        (v * 3).sum().backward()
        return v.grad.tolist(), x.grad
    _same(run)


NUMBERS = {
    "tensor(10**300)": lambda t: t.tensor(10 ** 300),
    "tensor(-10**300)": lambda t: t.tensor(-10 ** 300),
    "tensor([1, 10**300])": lambda t: t.tensor([1, 10 ** 300]),
    "tensor([1., 10**300])": lambda t: t.tensor([1.0, 10 ** 300]),
    "tensor(2**63)": lambda t: t.tensor(2 ** 63),
    "tensor(2**63 - 1)": lambda t: t.tensor(2 ** 63 - 1),
    "tensor(-2**63 - 1)": lambda t: t.tensor(-2 ** 63 - 1),
    "tensor([0, 2**63])": lambda t: t.tensor([0, 2 ** 63]),
    "as_tensor(2**64)": lambda t: t.as_tensor(2 ** 64),
    "tensor(2**63, float32)": lambda t: t.tensor(2 ** 63, dtype=t.float32),
    "tensor(10**300, float64)": lambda t: t.tensor(10 ** 300, dtype=t.float64),
    "tensor([10**300], float32)": lambda t: t.tensor([10 ** 300], dtype=t.float32),
    "tensor(10**400, float64)": lambda t: t.tensor(10 ** 400, dtype=t.float64),
    "tensor(10**300, complex64)": lambda t: t.tensor(10 ** 300, dtype=t.complex64),
    "tensor(10**300, bool)": lambda t: t.tensor(10 ** 300, dtype=t.bool),
    "tensor(1e300, float32)": lambda t: t.tensor(1e300, dtype=t.float32),
    "tensor(1e300, float16)": lambda t: t.tensor(1e300, dtype=t.float16),
    "tensor(300, uint8)": lambda t: t.tensor(300, dtype=t.uint8),
    "tensor(-200, uint8)": lambda t: t.tensor(-200, dtype=t.uint8),
    "tensor(2**40, int32)": lambda t: t.tensor(2 ** 40, dtype=t.int32),
    "tensor(True, int8)": lambda t: t.tensor(True, dtype=t.int8),
    "tensor(2.5, uint8)": lambda t: t.tensor(2.5, dtype=t.uint8),
    "tensor(2**63, int64)": lambda t: t.tensor(2 ** 63, dtype=t.int64),
    "tensor(10**300, int8)": lambda t: t.tensor(10 ** 300, dtype=t.int8),
    "tensor(1e300, int64)": lambda t: t.tensor(1e300, dtype=t.int64),
    "tensor(inf, int64)": lambda t: t.tensor(float("inf"), dtype=t.int64),
    "tensor(2**64, uint64)": lambda t: t.tensor(2 ** 64, dtype=t.uint64),
    "full 10**300": lambda t: t.full((2,), 10 ** 300),
    "full 2**63": lambda t: t.full((2,), 2 ** 63),
    "full 2**64": lambda t: t.full((2,), 2 ** 64),
    "full -2**63 - 1": lambda t: t.full((2,), -2 ** 63 - 1),
    "full 2**63 float32": lambda t: t.full((2,), 2 ** 63, dtype=t.float32),
    "full 2**64 float32": lambda t: t.full((2,), 2 ** 64, dtype=t.float32),
    "full 10**300 float64": lambda t: t.full((2,), 10 ** 300, dtype=t.float64),
    "full 10**300 bool": lambda t: t.full((2,), 10 ** 300, dtype=t.bool),
    "full 1e300 float32": lambda t: t.full((2,), 1e300, dtype=t.float32),
    "full 1e300": lambda t: t.full((2,), 1e300),
    "full 2**64 uint64": lambda t: t.full((2,), 2 ** 64, dtype=t.uint64),
    "full 2**63 uint64": lambda t: t.full((2,), 2 ** 63, dtype=t.uint64),
    "fill_ 10**300": lambda t: t.zeros(2).fill_(10 ** 300),
    "full_like 2**64": lambda t: t.full_like(t.zeros(2), 2 ** 64),
    "new_full 2**64": lambda t: t.zeros(2).new_full((2,), 2 ** 64),
    "scalar_tensor 10**300": lambda t: t.scalar_tensor(10 ** 300),
    "masked_fill 10**300": lambda t: t.zeros(2).masked_fill(t.tensor([True, False]), 10 ** 300),
}


@pytest.mark.parametrize("case", NUMBERS)
def test_numbers_past_a_dtype_as_torch(case):
    _same(NUMBERS[case])
