"""REVIEW21: adversarial checks of session 20's first wave (graph breaks split inside loops,
branches, ``with`` bodies and callees; returned views of inputs remade after each replay)
against ember eager over several calls. Tests named ``*_fixed`` failed before their fix;
the others pin cases that held."""
import builtins
import functools
import pprint
import sys

import numpy as np
import pytest

import ember
from ember import nn

pytestmark = pytest.mark.usefixtures("fresh_cache")

BACKEND = "aot_eager"  # the graph interpreted on arrays: no C compiler run
RNG = np.random.default_rng(21)


def _data(*shape, dtype=np.float32, grad=False):
    return ember.tensor(RNG.standard_normal(shape).astype(dtype), requires_grad=grad)


def _flat(v):
    return [z for x in v for z in _flat(x)] if isinstance(v, (list, tuple)) else [v]


def _same(got, want):
    for g, w in zip(_flat(got), _flat(want), strict=True):
        if isinstance(w, ember.Tensor):
            assert (g.shape, g.stride(), g.dtype) == (w.shape, w.stride(), w.dtype)
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)
        else:
            assert g == pytest.approx(w, rel=1e-6)


def _alias(got, source):
    """``got`` is a view of ``source`` as eager's: same base, a write through it reaches it, and
    the version counter is shared."""
    assert got._base is (source if source._base is None else source._base)
    before = source._version
    with ember.no_grad():
        got.add_(1)
    assert source._version > before


# --- graph breaks split inside statements and callees (SPLIT20) ------------------------------

def _loop_else(x):
    log = []
    for _ in range(3):
        x = x * 2
        log.append(x.sum().item())
        if log[-1] > 1e9:
            break
    else:
        x = x + 1
    return x, log


def _nested_break(x):
    out = []
    for i in range(3):
        for j in range(3):
            x = x + 1
            v = x.sum().item()
            if j == 1:
                break
        out.append(v)
    return x * i, out, j


def _unpack_accumulate(pairs):
    total = 0.0
    for a, (b, c) in pairs:
        loss = (a * b + c).sum()
        total += loss.item()
    return total, a, b


def _return_in_loop(x):
    for i in range(4):
        x = x.sin()
        if x.sum().item() > 0:
            return x, i
        x = x - 1
    return x, -1


def _no_grad_body(x):
    with ember.no_grad():
        y = x * 2
        v = y.sum().item()
        z = y + v
    return (z * x).sum()


def _comprehension_lambda(x):
    ys = [x * k for k in range(3)]
    s = ys[0].sum().item()
    g = (lambda t: t * s)(ys[1])
    return sum(ys) + g, s


@pytest.mark.parametrize("fn, make", [
    (_loop_else, lambda k: (_data(3),)),
    (_nested_break, lambda k: (_data(3),)),
    (_unpack_accumulate, lambda k: ([(_data(2), (_data(2), _data(2))) for _ in range(3)],)),
    (_return_in_loop, lambda k: (_data(3) + k,)),
    (_comprehension_lambda, lambda k: (_data(3),)),
])
def test_split_statements_match_eager(fn, make):
    compiled = ember.compile(fn, backend=BACKEND)
    for k in range(3):
        args = make(k)
        _same(compiled(*args), fn(*args))


def test_split_no_grad_body_gradients():
    compiled = ember.compile(_no_grad_body, backend=BACKEND)
    for _ in range(3):
        x = _data(3, grad=True)
        x2 = x.detach().clone().requires_grad_()
        _same(compiled(x2), _no_grad_body(x))
        _no_grad_body(x).backward(), compiled(x2).backward()
        _same(x2.grad, x.grad)


def _raising(x):
    if x.sum().item() > 100:
        raise ValueError("too big")
    return x * 3


def _calls_raising(x):
    y = x + 1
    z = _raising(y)
    return z.sum()


def _calls_raising_too(x):
    return _raising(x - 1) * 2


def test_callee_raising_and_shared_by_two_functions():
    f, g = ember.compile(_calls_raising, backend=BACKEND), ember.compile(_calls_raising_too, backend=BACKEND)
    for _ in range(3):
        x = _data(3)
        _same(f(x), _calls_raising(x))
        _same(g(x), _calls_raising_too(x))
    with pytest.raises(ValueError, match="too big"):
        f(ember.full((3,), 100.0))
    _same(f(ember.ones(3)), _calls_raising(ember.ones(3)))


def _recurse(x, n):
    if n == 0:
        return x
    x = x * 2
    x = x + x.sum().item()
    return _recurse(x, n - 1)


def _wrap(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


@_wrap
def _wrapped(x):
    y = x * 2
    return y + y.sum().item()


@pytest.mark.parametrize("fn", [lambda x: _recurse(x, 3), lambda x: _wrapped(x) * 3, _wrapped])
def test_recursion_and_wrapped_callees(fn):
    compiled = ember.compile(fn, backend=BACKEND)
    for _ in range(3):
        x = _data(2)
        _same(compiled(x), fn(x))


def test_callee_rebound_between_calls():
    def g1(x):
        return x + x.sum().item()

    def g2(x):
        return x * x.sum().item()

    current = [g1]

    def f(x):
        y = x * 2
        z = current[0](y)
        return z * 2

    compiled = ember.compile(f, backend=BACKEND)
    for g in (g1, g2, g1, g2):
        current[0] = g
        x = _data(2)
        _same(compiled(x), f(x))


class _Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        self.last = h.detach().sum().item()
        return h.relu()


class _Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub, self.out = _Sub(), nn.Linear(3, 1)

    def forward(self, x):
        h = self.sub(x)
        h = self.sub(h)
        return self.out(h).sum()


def test_submodule_called_twice_logs_and_gradients():
    ember.manual_seed(1)
    eager = _Outer()
    ember.manual_seed(1)
    model = _Outer()
    compiled = ember.compile(model, backend=BACKEND)
    for _ in range(3):
        x = _data(2, 3)
        want, got = eager(x), compiled(x)
        want.backward(), got.backward()
        _same(got, want)
        assert model.sub.last == pytest.approx(eager.sub.last, rel=1e-6)
        for p, q in zip(model.parameters(), eager.parameters()):
            _same(p.grad, q.grad)


# --- returned views of inputs (ALIAS20) ------------------------------------------------------

def test_view_as_real_is_remade_fixed():
    """view_as_real (an 'untracked' view op) came back on replay as a tensor sharing the input's
    memory but with no _base and its own version counter."""
    compiled = ember.compile(lambda z: ember.view_as_real(z), backend=BACKEND)
    for _ in range(3):
        z = ember.complex(_data(3, 4), _data(3, 4))
        got = compiled(z)
        _same(got, ember.view_as_real(z))
        _alias(got, z)
        _same(got, ember.view_as_real(z))


def test_view_of_grad_is_remade_fixed():
    """A view of a parameter's .grad came back on replay with no _base (a tensor sharing the
    .grad's memory, its version counter not)."""
    lin = nn.Linear(3, 3)
    compiled = ember.compile(lambda x: (lin.weight.grad[0], x * 2), backend=BACKEND)
    for _ in range(3):
        lin.weight.grad = _data(3, 3)
        got, _ = compiled(_data(2))
        _same(got, lin.weight.grad[0])
        _alias(got, lin.weight.grad)


@pytest.mark.parametrize("view", [
    lambda x: x.view(ember.int32), lambda x: x.unfold(1, 2, 1), lambda x: x.as_strided((2, 2), (1, 2), 1),
    lambda x: x[..., None], lambda x: x.T, lambda x: x[1:].t(), lambda x: x.unbind(0)[1],
])
def test_views_alias_their_input(view):
    compiled = ember.compile(view, backend=BACKEND)
    for _ in range(3):
        x = _data(6, 5)[::2]
        got = compiled(x)
        _same(got, view(x))
        _alias(got, x)


@pytest.mark.parametrize("view", [lambda x: x.unsqueeze(0).expand(3, -1, -1), lambda x: x.mT,
                                  lambda x: x.diagonal(), lambda x: x[1:, ::2]])
def test_views_backward_dynamic(view):
    compiled = ember.compile(view, backend=BACKEND, dynamic=True)
    for k in range(3):
        x = _data(3 + k, 4 + 2 * k, grad=True)
        x2 = x.detach().clone().requires_grad_()
        want, got = view(x), compiled(x2)
        _same(got, want)
        g = _data(*want.shape)
        want.backward(g), got.backward(g)
        _same(x2.grad, x.grad)


# --- print and the standard streams are graph breaks (NEWBIE20) ------------------------------

_PRINT = print  # bound before any call is recorded


def _print_alias(x):
    y = x * 2
    _PRINT("alias", y.shape[0])
    return y + 1


def _stdout_write(x):
    y = x * 2
    sys.stdout.write("written\n")
    return y + 1


def _pretty(x):
    y = x * 2
    pprint.pprint({"rows": y.shape[0]})
    return y + 1


def _print_file(x):
    y = x * 2
    print("to file", file=sys.stdout)
    return y + 1


@pytest.mark.parametrize("fn", [_print_alias, _stdout_write, _pretty, _print_file])
def test_prints_on_every_call_fixed(fn, capsys):
    """A print bound to another name before the call, sys.stdout.write and pprint printed only
    while the call was recorded (a replay skipped them)."""
    compiled = ember.compile(fn, backend=BACKEND)
    for _ in range(3):
        x = _data(3)
        _same(compiled(x), fn(x))
    assert capsys.readouterr().out.count("\n") == 6
    with pytest.raises(ember._dynamo.exc.Unsupported):
        ember.compile(fn, backend=BACKEND, fullgraph=True)(_data(3))


def test_print_and_streams_restored(capsys):
    stdout, stderr, printer = sys.stdout, sys.stderr, builtins.print

    def fails(x):
        print("before")
        raise KeyError("boom")

    with pytest.raises(KeyError):
        ember.compile(fails, backend=BACKEND)(_data(2))
    assert (sys.stdout, sys.stderr, builtins.print) == (stdout, stderr, printer)



# --- sparse graph break, and what is left -----------------------------------------------------

def _sparse(scale=1.0):
    return ember.sparse_coo_tensor(ember.tensor([[0, 1, 2], [1, 0, 2]]), ember.tensor([1.0, 2.0, 3.0]) * scale, (3, 3))


def _reads_sparse(x, s):
    return ember.sparse.mm(s, x * 2).relu() + s.to_dense().sum()


def test_sparse_argument_fullgraph_raises_fixed():
    """A sparse argument ran the call eagerly even with fullgraph=True (torch raises
    Unsupported 'Attempted to wrap sparse Tensor'); without it each call equals eager."""
    with pytest.raises(ember._dynamo.exc.Unsupported, match="Attempted to wrap sparse Tensor"):
        ember.compile(_reads_sparse, backend=BACKEND, fullgraph=True)(_data(3, 2), _sparse())
    compiled = ember.compile(_reads_sparse, backend=BACKEND)
    for k in range(3):
        x, s = _data(3, 2), _sparse(k + 1.0)
        _same(compiled(x, s), _reads_sparse(x, s))


@pytest.mark.xfail(strict=True, reason="a returned conj() view comes back on replay as a copy without the "
                                        "conjugate bit (Conj is no is_view op: aliases.py does not remake it)")
def test_conj_view_is_remade():
    compiled = ember.compile(lambda z: z.conj(), backend=BACKEND)
    for _ in range(3):
        z = ember.complex(_data(3), _data(3))
        got = compiled(z)
        assert got.is_conj() and got._base is z


def _export_names(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.bn = lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3)
            self.register_buffer("scale", lib.ones(3))
            self.sub = lib.nn.Sequential(lib.nn.Linear(3, 2))

        def forward(self, x, y, *, z):
            return self.sub(self.bn(self.fc(x)) * self.scale + y) + z.sum()

    lib.manual_seed(0)
    model = Net().eval()
    args, kwargs = (lib.ones(2, 3), lib.ones(2, 3) * 2), {"z": lib.ones(2)}
    program = lib.export.export(model, args, kwargs)
    names = [n.name for n in program.graph.nodes if n.op == "placeholder"]
    return names, program.module()(*args, **kwargs).detach().numpy()


def test_export_placeholders_in_torchs_order_fixed():
    """Export listed the placeholders in the order the forward first read them (p_fc_weight,
    p_fc_bias, x, b_bn_running_var, ...); torch lists parameters, buffers (each in the module's
    order, the unread num_batches_tracked too), then user inputs."""
    import torch
    want, want_out = _export_names(torch)
    got, got_out = _export_names(ember)
    assert got == want
    np.testing.assert_allclose(got_out, want_out, rtol=1e-5)
