"""F.ctc_loss / nn.CTCLoss against torch 2.13: losses and gradients (padded and concatenated
targets, tuple and tensor lengths, unbatched input, impossible alignments with and without
zero_infinity, the three reductions), grad_fn names, printed form and errors."""
import numpy as np
import pytest
import torch

import ember

TARGETS = np.array([[1, 2, 2], [3, 3, 0], [4, 0, 0]])


def run(lib, x, targets, lengths, **kwargs):
    lp = lib.tensor(x).log_softmax(-1).requires_grad_()
    loss = lib.nn.functional.ctc_loss(lp, targets(lib), *lengths(lib), **kwargs)
    (loss * lib.arange(1, loss.numel() + 1, dtype=loss.dtype).reshape(loss.shape)).sum().backward()
    return loss.detach().numpy(), lp.grad.numpy(), type(loss.grad_fn).__name__


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("form", ["padded-tuples", "concatenated-tensors"])
def test_values_and_gradients_equal_torchs(reduction, zero_infinity, form):
    # sample 1 cannot fit "3 3" (which needs a blank between) into 2 frames: loss inf, grad nan
    # (0 and 0 with zero_infinity); sample 2 has an empty target; float64 so the bound is tight.
    x = np.random.default_rng(0).standard_normal((6, 3, 5))
    il, tl = [6, 2, 5], [3, 2, 0]
    if form == "padded-tuples":
        targets, lengths = (lambda lib: lib.tensor(TARGETS)), (lambda lib: (tuple(il), list(np.array(tl))))
    else:
        flat = np.concatenate([row[:n] for row, n in zip(TARGETS, tl)])
        targets = lambda lib: lib.tensor(flat, dtype=lib.int32)  # noqa: E731
        lengths = lambda lib: (lib.tensor(il), lib.tensor(tl))  # noqa: E731
    e, t = (run(lib, x, targets, lengths, reduction=reduction, zero_infinity=zero_infinity)
            for lib in (ember, torch))
    np.testing.assert_allclose(e[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-10, atol=1e-12)
    assert e[2] == t[2]
    assert np.isnan(e[1]).any() == (not zero_infinity)


def test_float32_unbatched_and_the_module():
    x = np.random.default_rng(1).standard_normal((7, 6)).astype(np.float32)
    res = []
    for lib in (ember, torch):
        lp = lib.tensor(x).log_softmax(-1).requires_grad_()
        loss = lib.nn.CTCLoss(blank=5, reduction="none")(lp, lib.tensor([1, 0, 0, 2]), lib.tensor(7),
                                                            lib.tensor(4))
        loss.backward()
        res.append((loss.item(), lp.grad.numpy(), tuple(loss.shape), repr(lib.nn.CTCLoss(zero_infinity=True))))
    assert res[0][2:] == res[1][2:] == ((), "CTCLoss()")
    # float32 log-probabilities, the sums run in float64: a few float32 ulps apart from torch's
    assert abs(res[0][0] - res[1][0]) <= 1e-5 * abs(res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-4, atol=1e-6)


CASES = {
    "blank": (dict(blank=5), RuntimeError, "blank must be in label range"),
    "count": (dict(il=[6]), RuntimeError, "input_lengths must be of size batch_size"),
    "long input": (dict(il=[7, 6, 6]), RuntimeError, "Expected input_lengths to have value at most 6, but got value 7"),
    "negative": (dict(tl=[-1, 2, 1]), RuntimeError, "Expected target_lengths to have value at least 0, but got value -1"),
    "short targets": (dict(tl=[4, 2, 1]), RuntimeError,
                      "Expected tensor to have size at least 4 at dimension 1, but got size 3 for argument #2 'targets'"),
    "dtype": (dict(dtype="float16"), NotImplementedError, "\"ctc_loss_cpu\" not implemented for 'Half'"),
    "rank": (dict(lp=lambda lib: lib.zeros(6)), RuntimeError,
             "Expected 3-dimensional tensor, but got 2-dimensional tensor for argument #1 'log_probs'"),
    "empty": (dict(lp=lambda lib: lib.zeros(6, 0, 5), il=[], tl=[], t=lambda lib: lib.zeros(0, 3, dtype=lib.long)),
              RuntimeError, "log_probs tensor must not be empty"),
    "reduction": (dict(reduction="avg"), ValueError, "avg is not a valid value for reduction"),
}


@pytest.mark.parametrize("case", CASES)
def test_errors_as_torchs(case):
    args, cls, message = CASES[case]
    for lib in (ember, torch):
        lp = args.get("lp", lambda lib: lib.zeros(6, 3, 5, dtype=getattr(lib, args.get("dtype", "float32"))))(lib)
        targets = args.get("t", lambda lib: lib.tensor(TARGETS))(lib)
        with pytest.raises(cls, match="^" + message.replace("(", "\\(").replace(")", "\\)")):
            lib.nn.functional.ctc_loss(lp, targets, args.get("il", [6, 6, 6]), args.get("tl", [3, 2, 1]),
                                       blank=args.get("blank", 0), reduction=args.get("reduction", "mean"))


@pytest.mark.parametrize("T, N, C, S, il, tl", [(1, 2, 3, 1, [1, 0], [0, 0]), (4, 2, 3, 2, [4, 3], [0, 0]),
                                                (1, 1, 3, 1, [1], [1]), (3, 3, 4, 3, [3, 3, 0], [3, 1, 0])])
def test_edges_one_frame_no_frames_and_empty_targets(T, N, C, S, il, tl):
    rng = np.random.default_rng(3)
    x, targets = rng.standard_normal((T, N, C)), rng.integers(1, C, (N, S))
    e, t = (run(lib, x, lambda lib: lib.tensor(targets), lambda lib: (il, tl), reduction="none")
            for lib in (ember, torch))
    np.testing.assert_allclose(e[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-10, atol=1e-12)


def test_backward_reuses_the_forward_variables(monkeypatch):
    """The recursions (Python loops over time) run once per loss, in the forward, not again in
    the backward: torch's _ctc_loss hands its log_alpha to the backward too."""
    from ember._ops import ctc
    calls = []
    recursions = ctc._scaled_variables
    monkeypatch.setattr(ctc, "_scaled_variables", lambda *args: calls.append(1) or recursions(*args))
    x = ember.tensor(np.random.default_rng(4).standard_normal((6, 2, 4)), requires_grad=True)
    loss = ember.nn.functional.ctc_loss(x.log_softmax(2), ember.tensor([[1, 2], [3, 0]]), [6, 5], [2, 1])
    assert len(calls) == 1
    loss.backward()
    assert len(calls) == 1 and x.grad.abs().sum() > 0


def count_log_space_runs(monkeypatch):
    """The samples the log-space recursions are run for (again), as a list."""
    from ember._ops import ctc
    samples = []
    for name in ("_log_alpha", "_log_beta"):
        recursion = getattr(ctc, name)
        monkeypatch.setattr(ctc, name, lambda emit, *args, f=recursion: samples.append(emit.shape[1]) or f(emit, *args))
    return samples


@pytest.mark.parametrize("logit_scale, reruns, atol", [(1.0, False, 1e-11), (10.0, False, 1e-10), (100.0, True, 1e-10),
                                                       (1000.0, True, 1e-9)])
def test_long_inputs_equal_torchs_through_scaled_and_log_space_recursions(monkeypatch, logit_scale, reruns, atol):
    """A speech-sized batch (T=150, targets of up to 40 labels): the recursions on scaled
    probabilities give torch's losses and gradients; logits scaled so that a frame's classes
    differ by hundreds or thousands of nats make them underflow, and those samples are computed
    again in log space (torch's gradient there too: the posterior of a class 2000 nats below
    the frame's best is still 1 where the alignment needs it). Log-likelihoods of 10^3-10^4 nats carry
    absolute rounding errors of ~1e-12 per frame in either library, hence the bounds."""
    rng = np.random.default_rng(5)
    T, N, C = 150, 16, 30
    x = rng.standard_normal((T, N, C)) * logit_scale
    tl = [int(n) for n in rng.integers(0, 41, N)]
    targets = rng.integers(1, C, (N, 40))
    il = [T - int(n) for n in rng.integers(0, 20, N)]
    samples = count_log_space_runs(monkeypatch)
    e, t = (run(lib, x, lambda lib: lib.tensor(targets), lambda lib: (il, tl), reduction="none")
            for lib in (ember, torch))
    np.testing.assert_allclose(e[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-9, atol=atol)
    assert bool(samples) == reruns


def test_frames_past_the_input_length_are_never_read():
    x = np.random.default_rng(6).standard_normal((8, 3, 5))
    targets, lengths = (lambda lib: lib.tensor(TARGETS)), (lambda lib: ([8, 5, 3], [3, 2, 1]))
    clean = run(ember, x, targets, lengths, reduction="none")
    x[5:, 1] = np.nan
    x[3:, 2] = np.inf
    e, t = (run(lib, x, targets, lengths, reduction="none") for lib in (ember, torch))
    np.testing.assert_allclose(e[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(e[0], clean[0], rtol=0)
    np.testing.assert_allclose(e[1][:3], t[1][:3], rtol=1e-10, atol=1e-12)
