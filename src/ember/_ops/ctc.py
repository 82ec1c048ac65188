"""Connectionist temporal classification: the ``CtcLoss`` op behind
:func:`ember.nn.functional.ctc_loss`, after Graves et al., "Connectionist Temporal
Classification: Labelling Unsegmented Sequence Data with Recurrent Neural Networks", ICML 2006.

A target ``l`` of length S is extended with blanks to ``l'`` = (blank, l1, blank, ..., lS, blank)
of length 2S + 1. The forward variable ``alpha[t, s]`` (log-probability of the paths through
``l'[:s+1]`` ending at state s at time t) and the backward variable ``beta[t, s]`` (eqs. 5-10 of
the paper) are each one recursion over time, vectorised over the batch and the states; a state
s may be entered from s, s - 1, and s - 2 when ``l'[s]`` is a label differing from ``l'[s-2]``.
The loss is ``-log(alpha[L-1, 2S] + alpha[L-1, 2S-1])`` with L the sample's input length.
Kernels compute in float64 and round to the input's dtype.

Both recursions run on probabilities scaled per frame (the paper's section 4.1), which costs a
few products and sums a frame where log space needs log-sum-exps; both are kept in log space
afterwards. Scaling leaves values below the float64 range only where a sample's frames differ
by hundreds of nats: a sample whose alpha and beta then break the identity
``sum_s alpha[t, s] beta[t, s] / y[t, s] = p(l | x)`` at some frame (or have no alignment) is
computed again by the log-space recursions, so results are the log-space ones throughout.

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


# Each frame's sum over the states of alpha beta / emission is p(l | x) (before the input length);
# a sample whose scaled variables miss that by more than this (relative) lost mass to underflow.
_IDENTITY_TOLERANCE = 1e-11
_TINY = np.finfo(np.float64).tiny
# Frames whose variables are divided by their sum: every fourth (with emissions at most 1, four
# frames shrink a sum by 1e-300 only where the check above then sends the sample to log space).
_RESCALE_EVERY = 4


def _scaled_variables(emit, skip, input_lengths, target_lengths):
    """log alpha and log beta (T, N, S' each) from recursions on scaled probabilities (Rabiner,
    "A tutorial on hidden Markov models", Proc. IEEE 77(2), 1989, V.A): each frame's emissions are
    divided by their largest (so that one is 1 and the frame itself underflows nothing), and the
    variables by their sum every ``_RESCALE_EVERY`` frames; the log variables are the logs of the
    scaled ones plus the cumulated log scales. Two products and three sums a frame, where log
    space needs two log-sum-exps.

    alpha: state s at time t is entered from s, s - 1 and, where ``skip``, s - 2. beta starts at
    each sample's last frame (L - 1) in its two final states; state s goes on to s, s + 1 and,
    where state s + 2 may be entered by a skip, s + 2. With beta's frames and states taken in
    reverse, its recursion is alpha's, so step k computes alpha at frame k and beta at frame
    T - 1 - k on one contiguous row: 2N blocks of S' + 4 (the states between two zero columns
    each side), where the states one and two before are the row shifted by one and two (what the
    sums put into the zero columns is wiped by the emissions, zero there and from each sample's
    input length on)."""
    T, n, states = emit.shape
    width = states + 4
    frames = np.arange(T)[:, None]
    past = frames >= input_lengths
    top = emit.max(axis=2)
    top[past | ~np.isfinite(top)] = 0.0
    scaled = np.exp(emit - top[:, :, None])
    scaled[past] = 0.0
    emissions = np.zeros((T, 2 * n, width))
    emissions[:, :n, 2:-2] = scaled
    emissions[:, n:, 2:-2] = scaled[::-1, :, ::-1]
    jump = np.zeros((2 * n, width))
    jump[:n, 2:-2] = skip
    jump[n:, 4:-2] = skip[:, :1:-1]  # reversed state s' = S' - 1 - s skips back to s' - 2 where s + 2 may be skipped into
    emissions, jump = emissions.reshape(T, -1), jump.reshape(-1)[2:-2]
    starts = 2 + states - 1 - np.stack([2 * target_lengths, np.maximum(2 * target_lengths - 1, 0)], axis=1)
    beginning = {T - int(length): np.flatnonzero(input_lengths == length) for length in np.unique(input_lengths)
                 if length > 0}
    padded = np.zeros((T + 1, 2 * n * width))
    sums = np.ones((T, 2 * n))
    for k in range(T):
        previous, current = padded[k], padded[k + 1]
        inner = current[2:-2]
        np.add(previous[2:-2], previous[1:-3], out=inner)
        inner += previous[:-4] * jump
        current *= emissions[k]
        blocks, scaled_k = current.reshape(2 * n, width), emissions[k].reshape(2 * n, width)
        if k == 0:
            blocks[:n, 2:4] = scaled_k[:n, 2:4]
        last = beginning.get(k)
        if last is not None:  # beta's first frame (L - 1) for these samples
            blocks[n + last] = 0.0
            for j in range(2):
                blocks[n + last, starts[last, j]] = scaled_k[n + last, starts[last, j]]
        if k % _RESCALE_EVERY == 0:
            np.maximum(blocks.sum(axis=1), _TINY, out=sums[k])
            blocks /= sums[k][:, None]
    log_scale = np.log(sums) + np.concatenate([top, top[::-1]], axis=1)
    log_scale[np.concatenate([past, past[::-1]], axis=1)] = 0.0
    variables = padded[1:].reshape(T, 2 * n, width)[:, :, 2:-2]
    with np.errstate(divide="ignore"):
        logs = np.log(variables) + np.cumsum(log_scale, axis=0)[:, :, None]
    return logs[:, :n], logs[::-1, n:, ::-1]


def _log_alpha(emit, skip):
    """The forward variables of :func:`_scaled_variables` in log space, exact where the scaled
    recursion underflows; two always -inf columns in front make the three predecessors slices
    of one row."""
    T, n, states = emit.shape
    padded = np.full((T, n, states + 2), NEG_INF)
    padded[0, :, 2:4] = emit[0, :, :2]
    jump = np.where(skip, 0.0, NEG_INF)
    for t in range(1, T):
        prev = padded[t - 1]
        np.add(np.logaddexp(np.logaddexp(prev[:, 2:], prev[:, 1:-1]), prev[:, :-2] + jump), emit[t],
               out=padded[t, :, 2:])
    return padded[:, :, 2:]


def _log_beta(emit, skip, input_lengths, target_lengths):
    """The backward variables of :func:`_scaled_variables` in log space (two -inf columns
    behind)."""
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


def _paths_through(emit, log_alpha, log_beta):
    """log(alpha beta / y) (T, N, S'): the log-probability of the alignments through each state
    at each frame (alpha and beta both hold the frame's emission y), and its largest per frame
    (0 where none is finite), subtracted before exponentials."""
    through = log_alpha + log_beta - np.where(np.isfinite(emit), emit, 0.0)
    top = through.max(axis=2, keepdims=True, initial=NEG_INF)
    top[~np.isfinite(top)] = 0.0
    return through, top


def _underflowed(emit, log_alpha, log_beta, nll, input_lengths):
    """(N,) bool: the samples whose scaled variables lost mass that matters. Deleting a node of the
    lattice by underflow leaves each frame's sum over states of alpha beta / emission equal to
    p(l | x) no more at the frames on one side of it; a first frame's emission that underflows
    (its initial alpha) is caught directly."""
    through, top = _paths_through(emit, log_alpha, log_beta)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_frame = np.log(np.exp(through - top).sum(axis=2)) + top[:, :, 0]
        missed = ~(np.abs(per_frame + nll) <= _IDENTITY_TOLERANCE * (1 + np.abs(nll)))
    missed[np.arange(emit.shape[0])[:, None] >= input_lengths] = False
    first = emit[0, :, :2] - emit[0].max(axis=1, initial=NEG_INF)[:, None]
    lost_start = (np.isfinite(emit[0, :, :2]) & (first < np.log(_TINY))).any(axis=1) & (input_lengths > 0)
    return missed.any(axis=0) | lost_start


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
    the forward and backward variables, log alpha and log beta stacked (2, T, N, 2S+1) in
    float64, which the backward reads (torch's ``_ctc_loss`` returns its ``log_alpha`` for the
    same reason; beta comes with it here, as the check of both needs it). Both recursions run on
    scaled probabilities; a sample whose scaled variables underflowed where it matters is run
    again in log space."""
    lp, lengths, tlengths = _arrays(log_probs, input_lengths, target_lengths)
    emit, _, skip = _lattice(lp, targets, tlengths, blank)
    alpha, beta = _scaled_variables(emit, skip, lengths, tlengths)
    nll = _nll(alpha, lengths, tlengths)
    redo = _underflowed(emit, alpha, beta, nll, lengths)
    if redo.any():
        emit, skip = emit[:, redo], skip[redo]
        alpha[:, redo] = _log_alpha(emit, skip)
        beta[:, redo] = _log_beta(emit, skip, lengths[redo], tlengths[redo])
        nll = _nll(alpha, lengths, tlengths)
    return nll.astype(log_probs.dtype), np.stack([alpha, beta])


def ctc_backward(g, log_probs, targets, variables, input_lengths, target_lengths, blank, zero_infinity):
    """The gradient (T, N, C) w.r.t. ``log_probs`` of ``sum(g * nll)``, PyTorch's formula
    ``exp(lp) - exp(log sum_{s: l'[s]=c} alpha beta + nll - lp)`` (the probability of class c
    minus its posterior), zero from each sample's input length on, from the variables
    (2, T, N, 2S+1) the loss computed."""
    lp, lengths, tlengths = _arrays(log_probs, input_lengths, target_lengths)
    emit, ext, _ = _lattice(lp, targets, tlengths, blank)
    alpha, beta = variables
    nll = _nll(alpha, lengths, tlengths)
    # alpha beta / y summed over each class's states, so that a class far less likely than the
    # frame's best (by more than float64's range) still gets its posterior
    through, top = _paths_through(emit, alpha, beta)
    onehot = (ext[:, :, None] == np.arange(lp.shape[2])).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # sum over the states of each class: one (T, S') @ (S', C) product per sample
        occupancy = np.log(np.matmul(np.exp(through - top).transpose(1, 0, 2), onehot).transpose(1, 0, 2)) + top
        grad = (np.exp(lp) - np.exp(occupancy + nll[None, :, None])) * g.astype(np.float64)[None, :, None]
    grad[np.arange(lp.shape[0])[:, None] >= lengths[None, :]] = 0.0
    if zero_infinity:
        grad[:, nll == np.inf] = 0.0
    return grad.astype(log_probs.dtype)


class CtcLoss(Op):
    """Per-sample CTC negative log-likelihoods (N,) of ``log_probs`` (T, N, C) at ``targets``
    (padded (N, S) or concatenated 1-d), +inf where no alignment exists, and the log forward and
    backward variables (2, T, N, 2S+1), float64, that its gradient reads (not differentiable);
    the lengths are tuples of ints, as ``blank`` and ``zero_infinity`` attributes."""
    promote = None
    num_outputs = 2
    save_output = True

    @classmethod
    def infer(cls, log_probs, targets, input_lengths=(), target_lengths=(), **attrs):
        states = 2 * max(target_lengths, default=0) + 1
        return ((log_probs.shape[1],), log_probs.dtype), ((2, log_probs.shape[0], log_probs.shape[1], states),
                                                            _dtype.float64)

    @staticmethod
    def forward(log_probs, targets, input_lengths=(), target_lengths=(), blank=0, zero_infinity=False):
        return ctc_forward(log_probs, targets, input_lengths, target_lengths, blank)

    @staticmethod
    def backward(ctx, g, g_variables):
        if g is None or not ctx.needs_input_grad[0]:
            return None, None
        return apply(CtcLossBackward, g, ctx.input(0), ctx.input(1), ctx.output[1].detach(), **ctx.attrs), None


class CtcLossBackward(Op):
    """The gradient of :class:`CtcLoss` w.r.t. its log-probabilities, from the loss's
    gradient ``g`` (N,) and the loss's variables (2, T, N, 2S+1). Not differentiable again
    (PyTorch's is not either)."""
    promote = None

    @classmethod
    def infer(cls, g, log_probs, targets, variables, **attrs):
        return tuple(log_probs.shape), log_probs.dtype

    @staticmethod
    def forward(g, log_probs, targets, variables, input_lengths=(), target_lengths=(), blank=0, zero_infinity=False):
        return ctc_backward(g, log_probs, targets, variables, input_lengths, target_lengths, blank, zero_infinity)

    @staticmethod
    def backward(ctx, h):
        raise RuntimeError("the derivative for '_ctc_loss_backward' is not implemented.")
