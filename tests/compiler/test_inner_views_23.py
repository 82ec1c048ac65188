"""Compiled outputs that are views of intermediates, and empty outputs: strides, storage offset
and ``_base`` as torch.compile's per backend (``compiler/inner_views.py``)."""
import numpy as np
import pytest
import torch

import ember

CASES = {  # name: (function of x, x's shape)
    "stepped": (lambda t: (t * 2)[:, ::2], (3, 6)),
    "expanded": (lambda t: (t * 2)[:1].expand(3, -1), (3, 6)),
    "offset": (lambda t: (t * 2)[1:], (3, 6)),
    "diagonal": (lambda t: (t * 2).diagonal(), (3, 3)),
    "empty_t": (lambda t: t.t() * 2, (0, 3)),
    "empty_permuted": (lambda t: t.permute(2, 0, 1) + 1, (2, 0, 3)),
}
# torch 2.13's torch.compile(backend="inductor") on CPU, second call (obtained once by running it:
# it costs seconds per case): (strides, storage_offset); _base is None for all of them
INDUCTOR = {"stepped": ((6, 2), 0), "expanded": ((0, 1), 0), "offset": ((6, 1), 6), "diagonal": ((4,), 0),
            "empty_t": ((1, 1), 0), "empty_permuted": ((2, 1, 1), 0)}


def _layout(t):
    return t.stride(), t.storage_offset(), None if t._base is None else (tuple(t._base.shape), t._base.stride())


def _data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _torch(x):
    # contiguous strides (torch.tensor of an empty NumPy array has strides of 0)
    return torch.empty(x.shape).copy_(torch.from_numpy(x))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_view_of_intermediate_as_torch_compile(name, backend):
    fn, shape = CASES[name]
    compiled = ember.compile(fn, backend=backend)
    if backend == "inductor":
        strides, offset = INDUCTOR[name]
        want = None, strides, offset
    else:
        torch._dynamo.reset()
        ref = torch.compile(fn, backend=backend)
        ref(_torch(_data(shape, 0)))
        want = ref(_torch(_data(shape, 1)))
    for seed in range(3):  # the capture (an eager run, checked for values only), then replays
        x = _data(shape, seed)
        got = compiled(ember.tensor(x))
        np.testing.assert_array_equal(got.numpy(), fn(_torch(x)).numpy())
        if not seed:
            continue
        if backend == "inductor":
            assert (got._base, got.stride(), got.storage_offset()) == want, name
        else:
            assert _layout(got) == _layout(want), name


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_view_of_intermediate_with_a_backward(backend):
    # torch (aot_eager and inductor alike): strides (6, 2), _base None, on CompiledFunctionBackward
    compiled = ember.compile(lambda t: (t * 2)[:, ::2], backend=backend)
    for seed in range(3):
        x = ember.tensor(_data((3, 6), seed), requires_grad=True)
        got = compiled(x)
        assert (got.stride(), got.storage_offset(), got._base is None) == ((6, 2), 0, seed > 0)
        got.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.tile([2, 0], (3, 3)).astype(np.float32))


def test_aot_eager_view_of_intermediate_is_a_view():
    # torch's aot_eager returns the view itself: a write through it reaches its _base
    compiled = ember.compile(lambda t: (t * 2)[:, ::2], backend="aot_eager")
    for seed in range(2):
        got = compiled(ember.tensor(_data((3, 6), seed)))
    got.fill_(7.0)
    assert (got._base[:, ::2] == 7).all() and got._base._version == got._version == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_conj_of_an_input_is_its_conj_view(backend):
    # torch.compile (all three backends): is_conj(), _base the input; ember's conj view holds
    # conjugated values kept in step with the input, so the imaginary parts are negated
    compiled = ember.compile(lambda z: z.conj(), backend=backend)
    for seed in range(3):
        x = _data((2, 3), seed)
        z = ember.complex(ember.tensor(x[0]), ember.tensor(x[1]))
        got = compiled(z)
        assert got.is_conj() and got._base is z
        np.testing.assert_array_equal(got.resolve_conj().numpy(), np.conj(z.numpy()))
