"""Session 26's review: backward hooks and retained gradients under ``ember.compile``.

A tensor hook registered inside the compiled function (``y.register_hook(log)``) ran during the
forward call too, with a made-up gradient, while the capture recorded the backward (two calls
of the hook per step, the first seeing ones times the local derivative). A module's full
backward hooks (``register_full_backward_hook``, ``register_full_backward_pre_hook``) ran in
that recording and never again: the replays' backward skipped them (a hook scaling the
gradient was lost: wrong gradients). ``y.retain_grad()`` inside the function: the replays left
``y.grad`` None. torch runs each hook once per backward, in the backward, and fills ``y.grad``.

A call made under ``no_grad`` whose function computes under ``enable_grad``: replays returned
tensors requiring no grad (the backward lost). Results aliasing each other (``return y, y``,
``return y, y.view(-1)``, ``return y, y[1]``): replays returned separate tensors (``a is b``
False, a write into one not seen in the other). Such calls ran eagerly (graph break); since
session 27 they stay compiled, the aliases rebuilt and the grad mode replayed (test_alias_27.py).

An in-place write into a view of an input (``x[:, 1:].mul_(2)``) whose own array is a NumPy
view of a buffer (every ``randn``, a ``reshape``'s, a slice's): the write was lost on replay
(and in a split function's piece), since the capture looked for the buffer, not the input, among
the arrays it follows. It is now a write into the input (``CopySlices``), or a graph break when
the input is itself an ember view of a tensor the graph does not read (a write into that
input since session 27).
"""
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _hooked_step(lib, seen):
    def f(x):
        y = x * 2
        y.register_hook(lambda g: seen.append(g.clone()) or g * 3)
        return (y ** 2).sum()
    return f


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_tensor_hook_runs_once_per_backward_in_the_backward(lib):
    seen = []
    f = lib.compile(_hooked_step(lib, seen), **({} if lib is ember else {"backend": "eager"}))
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    for _ in range(4):
        x.grad = None
        out = f(x)
        assert seen == []  # nothing ran in the forward
        out.backward()
        assert len(seen) == 1 and seen.pop().tolist() == [4.0, -8.0, 12.0]  # dL/dy = 2y
        assert x.grad.tolist() == [24.0, -48.0, 72.0]  # 3 * 2y * 2


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
@pytest.mark.parametrize("kind", ["full", "pre"])
def test_module_backward_hooks_run_on_every_call(lib, kind):
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    seen = []
    if kind == "full":  # scales the input's gradient
        m.register_full_backward_hook(lambda mod, gi, go: seen.append(go[0].clone()) or (gi[0] * 10,))
    else:  # scales the output's gradient
        m.register_full_backward_pre_hook(lambda mod, go: seen.append(go[0].clone()) or (go[0] * 10,))
    cm = lib.compile(m, **({} if lib is ember else {"backend": "eager"}))
    x = lib.ones(4, 3, requires_grad=True)
    for _ in range(3):
        x.grad = None
        m.zero_grad()
        out = cm(x)
        assert seen == []
        out.sum().backward()
        assert len(seen) == 1 and seen.pop().tolist() == [[1.0, 1.0]] * 4
        assert lib.allclose(x.grad, (10 * m.weight.detach().sum(0)).expand(4, 3), rtol=1e-6, atol=0)
        expected = 10 * 4.0 if kind == "pre" else 4.0
        assert m.bias.grad.tolist() == [expected, expected]


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
@pytest.mark.parametrize("inside", [False, True], ids=["backward_after", "backward_inside"])
def test_retain_grad_inside_the_compiled_function(lib, inside):
    def f(x):
        y = x * 3
        y.retain_grad()
        loss = (y ** 2).sum()
        if inside:
            loss.backward()
        return loss, y
    cf = lib.compile(f, **({} if lib is ember else {"backend": "eager"}))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        x.grad = None
        loss, y = cf(x)
        if not inside:
            loss.backward()
        assert y.retains_grad and y.grad.tolist() == [6.0, 12.0]  # 2y
        assert x.grad.tolist() == [18.0, 36.0]


def _kw(lib):
    return {} if lib is ember else {"backend": "eager"}


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_enable_grad_inside_a_call_made_under_no_grad(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)

    def f(x):
        with lib.enable_grad():
            return m(x)
    cf = lib.compile(f, **_kw(lib))
    x = lib.ones(1, 3)
    for _ in range(3):
        with lib.no_grad():
            out = cf(x)
        assert out.requires_grad
        m.zero_grad()
        out.sum().backward()
        assert m.weight.grad.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
@pytest.mark.parametrize("case", ["same_twice", "view_of_another", "item_of_another"])
def test_results_aliasing_each_other_alias_on_every_call(lib, case):
    def f(x):
        y = x * 2
        return (y, y) if case == "same_twice" else (y, y.view(-1)) if case == "view_of_another" else (y, y[1])
    cf = lib.compile(f, **_kw(lib))
    for _ in range(3):
        a, b = cf(lib.ones(2, 2))
        assert (a is b) == (case == "same_twice")
        a.add_(1)  # eager: the write is seen through the other result
        assert b.tolist() == ([[3.0, 3.0]] * 2 if case == "same_twice" else [3.0] * (4 if case == "view_of_another" else 2))


def _write_through_view(x):
    x[:, 1:].mul_(2)
    v = x[1:]
    v.add_(1)
    return x.sum()


def _write_then_break(x):
    v = x[:, 1:]
    v.mul_(2)
    print(end="")  # a graph break
    return x.sum()


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
@pytest.mark.parametrize("fn", [_write_through_view, _write_then_break])
@pytest.mark.parametrize("make", ["reshaped", "slice_of_bigger", "randn"])
def test_in_place_write_into_a_view_of_an_input_whose_array_is_a_view(lib, fn, make):
    # reshape's and randn's arrays are NumPy views of a buffer: the write was lost on replay
    def made(i):
        if make == "reshaped":
            return (lib.arange(12.0) * (i + 1)).reshape(3, 4)
        if make == "slice_of_bigger":
            return (lib.arange(20.0) * (i + 1)).reshape(5, 4)[1:4]
        lib.manual_seed(i)
        return lib.randn(3, 4)
    cf = lib.compile(fn, **_kw(lib))
    for i in range(3):
        x, expected = made(i), made(i).clone()
        want, got = fn(expected), cf(x)
        assert lib.equal(x, expected) and float(got) == pytest.approx(float(want), rel=1e-6)
