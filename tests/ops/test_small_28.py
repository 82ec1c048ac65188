"""Small eager parity items of session 28, each against torch 2.13: Tensor methods refuse
``out=`` (and arguments to methods taking none) in torch's words; comparisons refuse a str or
None operand and the operators answer NotImplemented; ``keepdim`` that is no bool; the range
factories' ``out=``; the fft family's ``out=`` errors; ``hstack(tensors=...)``'s wording;
``unsafe_split`` inside ``inference_mode``; ``cat``/``stack`` resizing ``out`` before their
overlap error."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _outcome(call):
    """(class name, message, result) of ``call()``, and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
            outcome = ("ok", "", result)
        except Exception as error:  # the class and words are what is compared
            outcome = (type(error).__name__, str(error), None)
    return outcome, [str(w.message).split(" (Triggered internally")[0] for w in caught]


def _same_refusal(call):
    (t, e) = (_outcome(lambda: call(torch, torch.ones(2, 3), torch.zeros(2, 3))),
              _outcome(lambda: call(ember, ember.ones(2, 3), ember.zeros(2, 3))))
    assert t[0][0] != "ok"
    assert e[0][:2] == t[0][:2]


# the direct call form: torch names a method without arguments TensorBase.exp there
# (getattr(x, "exp")(1) says Tensor.exp)
METHOD_OUT = [
    lambda m, x, o: x.sum(1, out=o), lambda m, x, o: x.sum(out=o), lambda m, x, o: x.mean(1, out=o),
    lambda m, x, o: x.add(x, out=o), lambda m, x, o: x.mul(2, out=o), lambda m, x, o: x.sub(x, out=o),
    lambda m, x, o: x.matmul(x.T, out=o), lambda m, x, o: x.clamp(0, out=o), lambda m, x, o: x.clip(0, out=o),
    lambda m, x, o: x.exp(out=o), lambda m, x, o: x.abs(out=o), lambda m, x, o: x.cumsum(0, out=o),
    lambda m, x, o: x.max(1, out=o), lambda m, x, o: x.eq(x, out=o), lambda m, x, o: x.div(x, out=o),
    lambda m, x, o: x.pow(2, out=o), lambda m, x, o: x.lt(x, out=o), lambda m, x, o: x.multiply(x, out=o),
    lambda m, x, o: x.subtract(x, out=o), lambda m, x, o: x.all(out=o), lambda m, x, o: x.var(out=o),
    lambda m, x, o: x.round(out=o), lambda m, x, o: x.flip(1, out=o), lambda m, x, o: x.amax(out=o),
    lambda m, x, o: x.logsumexp(0, out=o), lambda m, x, o: x.norm(out=o), lambda m, x, o: x.atan2(x, out=o),
    lambda m, x, o: x.clamp_min(x, out=o), lambda m, x, o: x.tril(out=o), lambda m, x, o: x.logdet(out=o),
    lambda m, x, o: x.addcmul(x, x, out=o), lambda m, x, o: x.float_power(2, out=o)]


@pytest.mark.parametrize("call", METHOD_OUT)
def test_tensor_methods_refuse_out_in_torchs_words(call):
    x, o = ember.ones(2, 3), ember.zeros(2, 3)
    _same_refusal(call)
    with pytest.raises(TypeError):
        call(ember, x, o)
    assert o.abs().sum().item() == 0  # nothing was written


@pytest.mark.parametrize("call", [
    lambda m, x, o: x.trace(1), lambda m, x, o: x.trace(out=o), lambda m, x, o: x.exp(1, 2),
    lambda m, x, o: x.sigmoid(foo=1), lambda m, x, o: x.addmm(foo=1), lambda m, x, o: x.addmm(x, x, x, x, beta=1),
    lambda m, x, o: x.add(x, x, alpha=1), lambda m, x, o: x.add(x, x, x), lambda m, x, o: m.add(x, x, x, x, alpha=1),
    lambda m, x, o: m.eq(x, "s"), lambda m, x, o: x.eq("s"), lambda m, x, o: m.ne(x, None), lambda m, x, o: x.ge(None),
    lambda m, x, o: m.greater(x, "s"), lambda m, x, o: x < "s", lambda m, x, o: m.cat(x), lambda m, x, o: m.stack(x),
    lambda m, x, o: m.logsumexp(x, 0, keepdim="s"), lambda m, x, o: x.logsumexp(0, keepdim=None),
    lambda m, x, o: m.max(x, 0, keepdim="s"), lambda m, x, o: x.median(0, keepdim=None),
    lambda m, x, o: m.amax(x, 0, keepdim="s"), lambda m, x, o: x.nansum(0, keepdim=None),
    lambda m, x, o: m.argmin(x, 0, keepdim="s"), lambda m, x, o: x.nanmean(0, keepdim=1),
    lambda m, x, o: m.all(x, 0, keepdim="s"), lambda m, x, o: x.any(0, keepdim=None),
    lambda m, x, o: x.eq(other="s"), lambda m, x, o: x.lerp(x, weight="s"), lambda m, x, o: x.clamp(min=0, foo=1),
    lambda m, x, o: x.tile(2, out=o), lambda m, x, o: x.float(out=o), lambda m, x, o: x.positive(out=o),
    lambda m, x, o: x.type_as(x, out=o), lambda m, x, o: x.fliplr(out=o),
    lambda m, x, o: m.hstack(tensors=(t for t in [x])), lambda m, x, o: m.hstack((t for t in [x])),
    lambda m, x, o: m.vstack(tensors=1), lambda m, x, o: m.row_stack((t for t in [x]))])
def test_refusals_worded_as_torchs(call):
    _same_refusal(call)


def test_comparison_operators_answer_like_torch_for_other_operands():
    for lib in (torch, ember):
        x = lib.ones(2)
        assert (x == "s") is False and (x != "s") is True and (x == None) is False  # noqa: E711
        assert (x == np.float64(1)).tolist() == [True, True] and x.eq(1 + 2j).tolist() == [False, False]


def _range_calls():
    yield "arange int out", lambda m: _with_out(m.arange, 3., out=m.zeros(5, dtype=m.int64))
    yield "arange 2x2", lambda m: _with_out(m.arange, 4., out=m.zeros(2, 2))
    yield "arange empty", lambda m: _with_out(m.arange, 3, out=m.zeros(0))
    yield "arange fraction", lambda m: _with_out(m.arange, 0.5, 3, out=m.zeros(3, dtype=m.int64))
    yield "arange requires_grad", lambda m: _with_out(m.arange, 3., requires_grad=True, out=m.zeros(3))
    yield "arange grad out", lambda m: _with_out(m.arange, 3., out=m.zeros(3, requires_grad=True))
    yield "arange dtype", lambda m: _with_out(m.arange, 3., dtype=m.float64, out=m.zeros(3))
    yield "range 2x2", lambda m: _with_out(m.range, 0, 3, out=m.zeros(2, 2))
    yield "range 5", lambda m: _with_out(m.range, 0, 3, out=m.zeros(5))
    yield "range grad out", lambda m: _with_out(m.range, 0, 2, out=m.zeros(3, requires_grad=True))
    yield "linspace int", lambda m: _with_out(m.linspace, 0, 3, 4, out=m.zeros(5, dtype=m.int64))
    yield "linspace 2x2", lambda m: _with_out(m.linspace, 0, 1, 4, out=m.zeros(2, 2))
    yield "linspace dtype", lambda m: _with_out(m.linspace, 0, 1, 4, dtype=m.float64, out=m.zeros(4))
    yield "linspace grad out", lambda m: _with_out(m.linspace, 0, 1, 4, out=m.zeros(4, requires_grad=True))


def _with_out(factory, *args, out, **kwargs):
    return factory(*args, out=out, **kwargs), out


@pytest.mark.parametrize("call", [c for _, c in _range_calls()], ids=[n for n, _ in _range_calls()])
def test_range_factories_write_out_as_torchs(call):
    (t, t_warned), (e, e_warned) = _outcome(lambda: call(torch)), _outcome(lambda: call(ember))
    assert e[:2] == t[:2] and e_warned == t_warned
    if t[0] == "ok":  # (out itself, with the values)
        (t, t_out), (e, e_out) = t[2], e[2]
        assert t is t_out and e is e_out
        assert e.tolist() == t.tolist() and str(e.dtype) == str(t.dtype)
        assert tuple(e.shape) == tuple(t.shape) and e.requires_grad == t.requires_grad


def test_range_factories_return_out_itself_and_grad_mode_off_clears_its_flag():
    for lib in (torch, ember):
        out = lib.zeros(3, requires_grad=True)
        with lib.no_grad():
            assert lib.arange(3., out=out) is out
        assert not out.requires_grad and out.tolist() == [0., 1., 2.]


_C, _R = "complex64", "float32"
FFT_OUT = [  # (function, input dtype, out shape, out dtype, out requires grad)
    ("fft", _R, (4, 4), _C, True), ("fft", _C, (4, 4), _C, True), ("fftn", _R, (4, 4), _C, True),
    ("ifft", _R, (4, 4), _C, True), ("ifft2", _R, (4, 4), _C, True), ("rfft", _R, (4, 3), _C, True),
    ("irfft", _C, (4, 6), _R, True), ("hfft2", _C, (4, 6), _R, True), ("ihfft", _R, (4, 3), _C, True),
    ("ihfft2", _R, (4, 3), _C, True), ("fft", _R, (4, 4), _R, False), ("fft2", _R, (4, 4), "int64", False),
    ("irfft", _C, (4, 6), _C, False), ("ihfftn", _R, (4, 3), _R, False)]


@pytest.mark.parametrize("name, dtype, shape, out_dtype, grad", FFT_OUT)
def test_fft_out_errors_name_torchs_kernels(name, dtype, shape, out_dtype, grad):
    def call(m):
        out = m.zeros(*shape, dtype=getattr(m, out_dtype), requires_grad=grad)
        return getattr(m.fft, name)(m.ones(4, 4, dtype=getattr(m, dtype)), out=out)
    t, e = _outcome(lambda: call(torch))[0], _outcome(lambda: call(ember))[0]
    assert t[0] == "RuntimeError" and e[:2] == t[:2]


def test_unsafe_split_inside_inference_mode_gives_views_requiring_grad():
    for lib in (torch, ember):
        y = lib.randn(4, requires_grad=True)
        with lib.inference_mode():
            for pieces in (lib.unsafe_split(y, 2), lib.unsafe_chunk(y, 2), y.unsafe_split_with_sizes([1, 3])):
                assert [(p.requires_grad, p.is_inference(), p.grad_fn is None) for p in pieces] == [(True, False, True)] * 2
            inner = lib.randn(4)
            assert [p.is_inference() for p in lib.unsafe_split(inner, 2)] == [True, True]
        assert lib.unsafe_split(y, 2)[0].grad_fn.name() == "UnsafeSplitBackward0"


OVERLAPS = [  # the join, out, then the inputs made from it
    ("cat", lambda m: m.zeros(1), lambda o: ([o, o], {})),
    ("cat", lambda m: m.zeros(3), lambda o: ([o[:2], o[:2] + 1], {})),
    ("cat", lambda m: m.zeros(2, 3), lambda o: ([o, o], {"dim": 1})),
    ("stack", lambda m: m.zeros(1), lambda o: ([o, o], {})),
    ("stack", lambda m: m.zeros(2, 2), lambda o: ([o, o], {"dim": 1})),
    ("stack", lambda m: m.zeros(1), lambda o: ([o, o + 1], {})),
    ("stack", lambda m: m.zeros(1), lambda o: ([o + 1, o], {})),
    ("stack", lambda m: m.zeros(4), lambda o: ([o[:2], o[:2] + 1], {}))]


@pytest.mark.parametrize("join, out, inputs", OVERLAPS)
def test_cat_and_stack_resize_out_before_their_errors(join, out, inputs):
    got = []
    for lib in (torch, ember):
        o = out(lib)
        tensors, kwargs = inputs(o)
        (result, warned) = _outcome(lambda: getattr(lib, join)(tensors, out=o, **kwargs))
        got.append((result[:2], warned, tuple(o.shape)))
    assert got[0][0][0] == "RuntimeError" and got[1] == got[0]


def test_with_out_warns_as_torchs_resize_output():
    for lib in (torch, ember):
        (result, warned) = _outcome(lambda: lib.add(lib.ones(3), 1, out=lib.zeros(2)))
        assert result[0] == "ok" and warned == [
            "An output with one or more elements was resized since it had shape [2], which does not match the "
            "required output shape [3]. This behavior is deprecated, and in a future PyTorch release outputs will "
            "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
            "it, inplace, to zero elements with t.resize_(0)."]
        assert _outcome(lambda: lib.add(lib.ones(3), 1, out=lib.zeros(0)))[1] == []


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_variance_keepdim_that_is_no_bool_is_refused(name):
    # torch's parser refuses it (its words show dim as positional, ember's as a keyword)
    for lib in (torch, ember):
        x = lib.ones(2, 3)
        for keepdim in (3, "s", np.bool_(True)):
            with pytest.raises(TypeError, match=rf"^{name}\(\) received an invalid combination of arguments - got "
                                                r"\(.*keepdim=(int|str|numpy.bool)\)"):
                getattr(lib, name)(x, 0, keepdim=keepdim)
        result = getattr(lib, name)(x, 0, keepdim=True)
        assert (result[-1] if isinstance(result, tuple) else result).shape == (1, 3)


def test_numpy_bool_is_no_bool_for_the_parser():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match=r"^sum\(\): argument 'keepdim' must be bool, not numpy.bool$"):
            lib.sum(lib.ones(2, 3), 0, keepdim=np.bool_(True))
