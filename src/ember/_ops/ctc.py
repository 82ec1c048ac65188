"""Connectionist temporal classification: the ``CtcLoss`` op behind
:func:`ember.nn.functional.ctc_loss`, after Graves et al., "Connectionist Temporal
Classification: Labelling Unsegmented Sequence Data with Recurrent Neural Networks", ICML 2006.

A target ``l`` of length S is extended with blanks to ``l'`` = (blank, l1, blank, ..., lS, blank)
of length 2S + 1. The forward variable ``alpha[t, s]`` (log-probability of the paths through
``l'[:s+1]`` ending at state s at time t) and the backward variable ``beta[t, s]`` (eqs. 5-10 of
the paper, in log space) are each one recursion over time, vectorised over the batch and the
states; a state s may be entered from s, s - 1, and s - 2 when ``l'[s]`` is a label differing
from ``l'[s-2]``. The loss is ``-log(alpha[L-1, 2S] + alpha[L-1, 2S-1])`` with L the sample's
input length. Kernels compute in float64 and round to the input's dtype.

The gradient is PyTorch's (``CtcLossBackward0``): ``exp(lp) - exp(log sum_{s: l'[s]=c}
alpha beta + nll - lp)`` at times before the input length, zero after. It is the gradient
of the loss w.r.t. the *logits* of a log_softmax (eq. 16) rather than w.r.t. ``lp`` itself:
both give the same gradient through ``log_softmax``, which is how the loss is meant to be fed.
"""
import numpy as np

from .. import _dtype
from .core import Op, apply

NEG_INF = -np.inf


def _padded_targets(targets, target_lengths):
    """(N, S) int64 labels from padded (N, S_max) or concatenated 1-d ``targets``."""
    lengths = np.asarray(target_lengths, dtype=np.int64)
    width = int(lengths.max(initial=0))
    if targets.ndim == 2:
        return targets[:, :width].astype(np.int64)
    padded = np.zeros((len(lengths), width), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    for n, (start, length) in enumerate(zip(starts, lengths)):
        padded[n, :length] = targets[start:start + length]
    return padded


def _lattice(log_probs, targets, target_lengths, blank):
    """(emissions (T, N, 2S+1) with -inf at states past a sample's end, extended labels
    (N, 2S+1), skip mask (N, 2S+1): state s may be entered from s - 2)."""
    labels = _padded_targets(targets, target_lengths)
    n, width = labels.shape
    ext = np.full((n, 2 * width + 1), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    valid = np.arange(2 * width + 1)[None] < 2 * np.asarray(target_lengths, dtype=np.int64)[:, None] + 1
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    emit = np.where(valid, log_probs[:, np.arange(n)[:, None], ext], NEG_INF)
    return emit, ext, skip


def _alpha(emit, skip):
    """Forward variables (T, N, S'): state s at time t is entered from s, s - 1 and, where
    ``skip``, s - 2 (two always -inf columns in front make those three slices of one row)."""
    T, n, states = emit.shape
    padded = np.full((T, n, states + 2), NEG_INF)
    padded[0, :, 2:4] = emit[0, :, :2]
    jump = np.where(skip, 0.0, NEG_INF)
    for t in range(1, T):
        prev = padded[t - 1]
        np.add(np.logaddexp(np.logaddexp(prev[:, 2:], prev[:, 1:-1]), prev[:, :-2] + jump), emit[t],
               out=padded[t, :, 2:])
    return padded[:, :, 2:]


def _beta(emit, skip, input_lengths, target_lengths):
    """Backward variables (T, N, S'), each sample's starting at its last frame (L - 1) in its
    two final states; state s goes on to s, s + 1 and, where state s + 2 may be entered by a
    skip, s + 2 (two -inf columns behind)."""
    T, n, states = emit.shape
    rows = np.arange(n)
    padded = np.full((T + 1, n, states + 2), NEG_INF)
    jump = np.full((n, states), NEG_INF)
    jump[:, :-2][skip[:, 2:]] = 0.0
    ends = np.stack([2 * target_lengths, np.maximum(2 * target_lengths - 1, 0)], axis=1)
    for t in range(T - 1, -1, -1):
        after, b = padded[t + 1], padded[t, :, :states]
        np.add(np.logaddexp(np.logaddexp(after[:, :states], after[:, 1:states + 1]), after[:, 2:] + jump),
               emit[t], out=b)
        b[input_lengths <= t] = NEG_INF
        last = input_lengths == t + 1
        if last.any():
            b[last] = NEG_INF
            for k in range(2):
                b[rows[last], ends[last, k]] = emit[t, rows[last], ends[last, k]]
    return padded[:T, :, :states]


def _nll(alpha, input_lengths, target_lengths):
    """-log p(l | x) per sample from the forward variables."""
    n = alpha.shape[1]
    rows = np.arange(n)
    t = np.maximum(input_lengths - 1, 0)
    last = alpha[t, rows, 2 * target_lengths]
    before = np.where(target_lengths > 0, alpha[t, rows, np.maximum(2 * target_lengths - 1, 0)], NEG_INF)
    ll = np.logaddexp(last, before)
    ll = np.where(input_lengths == 0, np.where(target_lengths == 0, 0.0, NEG_INF), ll)
    return -ll


def _arrays(log_probs, input_lengths, target_lengths):
    return (log_probs.astype(np.float64), np.asarray(input_lengths, dtype=np.int64),
            np.asarray(target_lengths, dtype=np.int64))


def ctc_forward(log_probs, targets, input_lengths, target_lengths, blank):
    """Per-sample negative log-likelihoods (N,) of ``log_probs`` (T, N, C), in its dtype, and
    the forward variables (T, N, 2S+1) in float64, which the backward reuses (torch's
    ``_ctc_loss`` returns its ``log_alpha`` for the same reason)."""
    lp, lengths, tlengths = _arrays(log_probs, input_lengths, target_lengths)
    emit, _, skip = _lattice(lp, targets, tlengths, blank)
    alpha = _alpha(emit, skip)
    return _nll(alpha, lengths, tlengths).astype(log_probs.dtype), alpha


def ctc_backward(g, log_probs, targets, alpha, input_lengths, target_lengths, blank, zero_infinity):
    """The gradient (T, N, C) w.r.t. ``log_probs`` of ``sum(g * nll)`` (PyTorch's formula),
    from the forward variables ``alpha`` the loss computed."""
    lp, lengths, tlengths = _arrays(log_probs, input_lengths, target_lengths)
    emit, ext, skip = _lattice(lp, targets, tlengths, blank)
    nll = _nll(alpha, lengths, tlengths)
    ab = alpha + _beta(emit, skip, lengths, tlengths)
    top = ab.max(axis=2, keepdims=True, initial=NEG_INF)
    top[~np.isfinite(top)] = 0.0
    onehot = (ext[:, :, None] == np.arange(lp.shape[2])).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # sum over the states of each class: one (T, S') @ (S', C) product per sample
        occupancy = np.log(np.matmul(np.exp(ab - top).transpose(1, 0, 2), onehot).transpose(1, 0, 2)) + top
        grad = (np.exp(lp) - np.exp(occupancy + nll[None, :, None] - lp)) * g.astype(np.float64)[None, :, None]
    grad[np.arange(lp.shape[0])[:, None] >= lengths[None, :]] = 0.0
    if zero_infinity:
        grad[:, nll == np.inf] = 0.0
    return grad.astype(log_probs.dtype)


class CtcLoss(Op):
    """Per-sample CTC negative log-likelihoods (N,) of ``log_probs`` (T, N, C) at ``targets``
    (padded (N, S) or concatenated 1-d), +inf where no alignment exists, and the forward
    variables (T, N, 2S+1), float64, that its gradient reads (not differentiable); the lengths
    are tuples of ints, as ``blank`` and ``zero_infinity`` attributes."""
    promote = None
    num_outputs = 2
    save_output = True

    @classmethod
    def infer(cls, log_probs, targets, input_lengths=(), target_lengths=(), **attrs):
        states = 2 * max(target_lengths, default=0) + 1
        return ((log_probs.shape[1],), log_probs.dtype), ((log_probs.shape[0], log_probs.shape[1], states),
                                                            _dtype.float64)

    @staticmethod
    def forward(log_probs, targets, input_lengths=(), target_lengths=(), blank=0, zero_infinity=False):
        return ctc_forward(log_probs, targets, input_lengths, target_lengths, blank)

    @staticmethod
    def backward(ctx, g, g_alpha):
        if g is None or not ctx.needs_input_grad[0]:
            return None, None
        return apply(CtcLossBackward, g, ctx.input(0), ctx.input(1), ctx.output[1].detach(), **ctx.attrs), None


class CtcLossBackward(Op):
    """The gradient of :class:`CtcLoss` w.r.t. its log-probabilities, from the loss's
    gradient ``g`` (N,) and the loss's forward variables. Not differentiable again (PyTorch's
    is not either)."""
    promote = None

    @classmethod
    def infer(cls, g, log_probs, targets, alpha, **attrs):
        return tuple(log_probs.shape), log_probs.dtype

    @staticmethod
    def forward(g, log_probs, targets, alpha, input_lengths=(), target_lengths=(), blank=0, zero_infinity=False):
        return ctc_backward(g, log_probs, targets, alpha, input_lengths, target_lengths, blank, zero_infinity)

    @staticmethod
    def backward(ctx, h):
        raise RuntimeError("the derivative for '_ctc_loss_backward' is not implemented.")
