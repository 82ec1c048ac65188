"""Calls torch's argument parser refuses (nothing given, a required argument missing, an
unknown keyword, a str where a number or tensor goes, too many arguments), for functions and
Tensor methods: ember's exception class and message are torch's, word for word."""
import pytest
import torch

import ember
from ember._ops.parser import SIGNATURES

CALLS = [((), {}), (("T",), {}), (("T",), {"foo": 1}), (("T", "s"), {}), (("s",), {}),
         (("T", 0, 0, 0, 0, 0, 0), {})]


def _outcome(call):
    try:
        call()
    except Exception as error:  # the class and words are what is compared
        return type(error).__name__, str(error)
    return "ok", ""


def _pairs():
    x, ex = torch.ones(2, 3), ember.ones(2, 3)
    for name in sorted(SIGNATURES):
        for args, kwargs in CALLS:
            for kind in ("f", "m"):
                if kind == "m" and (args[:1] != ("T",) or name in ("cat", "stack", "trace")):
                    continue  # (torch names `x.trace(1)` TensorBase.trace, `getattr(x, "trace")(1)` Tensor.trace)

                def call(lib, t, kind=kind, name=name, args=args, kwargs=kwargs):
                    values = [t if a == "T" else a for a in args]
                    if kind == "m":
                        return lambda: getattr(values[0], name)(*values[1:], **kwargs)
                    return lambda: getattr(lib, name)(*values, **kwargs)
                expected = _outcome(call(torch, x))
                if expected[0] == "TypeError":
                    yield f"{kind}-{name}{args}{kwargs}", expected, _outcome(call(ember, ex))


def test_refused_calls_raise_torchs_type_error_word_for_word():
    pairs = list(_pairs())
    assert len(pairs) > 300
    wrong = [(key, expected, got) for key, expected, got in pairs if got != expected]
    assert not wrong, "\n".join(f"{k}\n  torch: {e}\n  ember: {g}" for k, e, g in wrong[:5])


@pytest.mark.parametrize("call", [
    lambda m, x: m.logsumexp(x), lambda m, x: m.cat(), lambda m, x: m.clamp(), lambda m, x: m.add(x),
    lambda m, x: m.max(x, keepdim=True, foo=1), lambda m, x: x.max(keepdim=True, foo=1),
    lambda m, x: m.sum(x, keepdim=True), lambda m, x: x.sum(keepdims=True), lambda m, x: m.median(x, keepdim=True),
    lambda m, x: m.clamp(x, 1, 2, 3, 4), lambda m, x: m.max(x, 1, 2, 3, 4), lambda m, x: m.sum(x, (1, "a")),
    lambda m, x: m.transpose(x, 0, 1.5), lambda m, x: m.logsumexp(x, keepdim=True),
    lambda m, x: m.softmax(x, 0, foo=1), lambda m, x: m.outer(x, x, out=3), lambda m, x: m.cat([x, 1]),
    lambda m, x: x.sum(0, foo=1), lambda m, x: m.mm(x, x, 1, 2), lambda m, x: m.squeeze(x, 0, foo=1)])
def test_brief_cases_word_for_word(call):
    assert _outcome(lambda: call(ember, ember.ones(2, 3))) == _outcome(lambda: call(torch, torch.ones(2, 3)))


def test_a_call_torch_accepts_keeps_embers_own_error():
    got = _outcome(lambda: ember.cat([ember.ones(2), ember.ones(2, 2)]))
    assert got[0] == _outcome(lambda: torch.cat([torch.ones(2), torch.ones(2, 2)]))[0] == "RuntimeError"
    assert ember.sum(ember.ones(2, 3), axis=0, keepdims=True).shape == (1, 3)
    assert ember.ones(2, 3).max(axis=1).values.shape == (2,)
