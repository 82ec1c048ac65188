"""Recurrent layers as fused primitives.

:class:`RNNLayer` runs one direction of one layer of an Elman RNN (tanh or ReLU), an LSTM
(optionally with a projection) or a GRU over a whole sequence in one op: the input-to-hidden
products of all time steps are one GEMM, then each step is one GEMM with ``weight_hh`` and a
few in-place array expressions. Per-step ember ops would cost a dispatch and a graph node
for every gate of every step; here a layer is one node, and its backward is one
:class:`RNNLayerBackward` op that walks the steps in reverse (backpropagation through time).

The sequence is given in PackedSequence layout: ``x`` is (T, H_in) with ``batch_sizes[t]``
rows for step t, sorted by decreasing sequence length (a padded (L, N, H_in) input is the
case ``batch_sizes = (N,) * L``, given as ``batch_sizes=None``: no attribute then holds the
length, so a compiled graph's length can be a size symbol). A sequence that ends early
keeps its last state, which is its final state; run in reverse, a sequence joins at its own
last step from the initial state. This is PyTorch's packed-sequence semantics.

The layer's results (:data:`RESULTS`) are the output (T, H_out), the final hidden state
(N, H_out), for an LSTM the final cell state (N, H), and then what backward reads (activated
gates, cell states and the previous hidden state of every row; cuDNN calls this the
reserve); a result the mode does not have is None. The backward's results are the gradients
of the layer's inputs, None where not wanted.

Equations (gate order and names are PyTorch's,
https://pytorch.org/docs/stable/generated/torch.nn.LSTM.html and GRU.html):

* RNN:  h' = act(W_ih x + b_ih + W_hh h + b_hh), act = tanh or relu
* LSTM: i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (W_ih x + b_ih + W_hh h + b_hh);
  c' = f c + i g; h' = o tanh(c'), then h' = W_hr h' with a projection
* GRU:  r, z = sigmoid(W_i{r,z} x + b_i{r,z} + W_h{r,z} h + b_h{r,z});
  n = tanh(W_in x + b_in + r (W_hn h + b_hn)); h' = (1 - z) n + z h
"""
import itertools

import numpy as np

from .. import _backend
from ..autograd.engine import grad
from ..autograd.grad_mode import STATE, enable_grad
from .core import Op, apply
from .join import cat

# The modes and their gate counts G: the weights stack G blocks of hidden_size rows.
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
# The inputs of RNNLayer, in order; RNNLayerBackward's ``needs`` names some of them, and its
# results are their gradients in this order.
INPUTS = ("input", "hx", "cx", "weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
# The results of RNNLayer, in order: what the layer returns, then the reserve backward reads.
RESULTS = ("output", "h_n", "c_n", "gates", "c", "c_prev", "hh_new", "h_prev")


def result_shapes(mode, rows, batch, hidden_size, output_size):
    """``{name: shape}`` of the results of :class:`RNNLayer` that ``mode`` has."""
    shapes = {"output": (rows, output_size), "h_n": (batch, output_size)}
    if mode == "LSTM":
        shapes.update(c_n=(batch, hidden_size), gates=(rows, 4 * hidden_size), c=(rows, hidden_size),
                      c_prev=(rows, hidden_size))
    elif mode == "GRU":
        # W_hn h + b_hn of every row: the reset gate multiplies it, so it is not in ``gates``.
        shapes.update(gates=(rows, 3 * hidden_size), hh_new=(rows, hidden_size))
    shapes["h_prev"] = (rows, output_size)
    return shapes


def _result_shapes(mode, x, hx, w_hh):
    return result_shapes(mode, x.shape[0], hx.shape[0], w_hh.shape[0] // GATES[mode], hx.shape[1])


def step_rows(batch_sizes, reverse, rows, batch):
    """``(rows, b)`` per step in processing order: the step's row slice and its batch size.
    ``batch_sizes`` None is a padded sequence: ``rows // batch`` steps of ``batch`` rows."""
    if batch_sizes is None:
        batch_sizes = (batch,) * (rows // batch if batch else 0)
    starts = itertools.accumulate(batch_sizes, initial=0)
    steps = [(slice(s, s + b), b) for s, b in zip(starts, batch_sizes)]
    return steps[::-1] if reverse else steps


def _sigmoid(a):
    _backend.special(a).expit(a, out=a)


class RNNLayer(Op):
    """One direction of one recurrent layer over a packed sequence (see the module docstring).

    Inputs: ``x`` (T, H_in), ``hx`` (N, H_out) with N = ``batch_sizes[0]``, ``cx`` (N, H) for
    an LSTM else None, ``weight_ih`` (G*H, H_in), ``weight_hh`` (G*H, H_out), ``bias_ih`` and
    ``bias_hh`` (G*H) or None, ``weight_hr`` (H_out, H) for a projected LSTM else None; G is
    the gate count (1, 4, 3) and H_out = H without a projection. All of one float dtype.
    Attributes: ``mode`` (a key of :data:`GATES`), ``batch_sizes`` (tuple of ints, not
    increasing, summing to T; None for T // N steps of N rows) and ``reverse`` (run from the
    last step to the first).
    Results: the arrays of :func:`result_shapes` in the order of :data:`RESULTS`, None where
    the mode has none.
    """
    promote = None
    num_outputs = len(RESULTS)
    save_output = True

    @classmethod
    def infer(cls, x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes, reverse=False):
        shapes = _result_shapes(mode, x, hx, w_hh)
        return tuple((shapes[name], x.dtype) if name in shapes else None for name in RESULTS)

    @staticmethod
    def forward(x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes, reverse=False):
        hidden = w_hh.shape[0] // GATES[mode]
        xp = _backend.namespace(x, w_ih)
        p = {name: xp.empty(shape, x.dtype) for name, shape in _result_shapes(mode, x, hx, w_hh).items()}
        gx = _backend.matmul(x, w_ih.T)
        if b_ih is not None:
            gx += b_ih
        if b_hh is not None:
            if mode == "GRU":
                gx[:, :2 * hidden] += b_hh[:2 * hidden]
            else:
                gx += b_hh
        h = p["h_n"]
        h[...] = hx
        w_hh_t = w_hh.T
        step = _STEP[mode]
        if mode == "LSTM":
            p["c_n"][...] = cx
        for rows, b in step_rows(batch_sizes, reverse, x.shape[0], hx.shape[0]):
            p["h_prev"][rows] = h[:b]
            h[:b] = p["output"][rows] = step(xp, p, rows, b, gx[rows], _backend.matmul(h[:b], w_hh_t),
                                             hidden, b_hh, w_hr)
        return tuple(p.get(name) for name in RESULTS)

    @staticmethod
    def backward(ctx, g_output, g_h_n, g_c_n, *g_reserve):
        needs = tuple(name for name, need in zip(INPUTS, ctx.needs_input_grad) if need)
        return apply(RNNLayerBackward, g_output, g_h_n, g_c_n, *ctx.inputs, *ctx.output, needs=needs,
                     **ctx.attrs)


def _rnn_step(xp, p, rows, b, gx, gh, hidden, b_hh, w_hr, relu):
    a = xp.add(gx, gh, out=gh)
    return xp.maximum(a, 0, out=a) if relu else xp.tanh(a, out=a)


def _lstm_step(xp, p, rows, b, gx, gh, hidden, b_hh, w_hr):
    H = hidden
    gates = xp.add(gx, gh, out=p["gates"][rows])
    _sigmoid(gates[:, :2 * H])
    xp.tanh(gates[:, 2 * H:3 * H], out=gates[:, 2 * H:3 * H])
    _sigmoid(gates[:, 3 * H:])
    i, f, cell_in, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
    c_prev = p["c_prev"][rows]
    c_prev[...] = p["c_n"][:b]
    c = xp.multiply(f, c_prev, out=p["c"][rows])
    c += i * cell_in
    p["c_n"][:b] = c
    h = xp.tanh(c) * o
    return h if w_hr is None else _backend.matmul(h, w_hr.T)


def _gru_step(xp, p, rows, b, gx, gh, hidden, b_hh, w_hr):
    H = hidden
    gates = p["gates"][rows]
    xp.add(gx[:, :2 * H], gh[:, :2 * H], out=gates[:, :2 * H])
    _sigmoid(gates[:, :2 * H])
    hh_new = p["hh_new"][rows]
    hh_new[...] = gh[:, 2 * H:]
    if b_hh is not None:
        hh_new += b_hh[2 * H:]
    n = xp.multiply(gates[:, :H], hh_new, out=gates[:, 2 * H:])
    n += gx[:, 2 * H:]
    xp.tanh(n, out=n)
    z = gates[:, H:2 * H]
    # (1 - z) n + z h, with one product
    return n + z * (p["h_prev"][rows] - n)


_STEP = {"RNN_TANH": lambda *a: _rnn_step(*a, relu=False),
         "RNN_RELU": lambda *a: _rnn_step(*a, relu=True),
         "LSTM": _lstm_step, "GRU": _gru_step}


class RNNLayerBackward(Op):
    """The gradients of :class:`RNNLayer`'s inputs named in ``needs`` (in the order of
    :data:`INPUTS`, None for the others), given the gradients of its output, h_n and c_n (None
    for one that received none), the layer's inputs and its results (whose reserve holds the
    activations of every step)."""
    promote = None
    num_outputs = len(INPUTS)

    @classmethod
    def infer(cls, g_output, g_h_n, g_c_n, *inputs, mode, needs, **attrs):
        return tuple((tuple(t.shape), t.dtype) if name in needs else None
                     for name, t in zip(INPUTS, inputs))

    @staticmethod
    def forward(g_output, g_h_n, g_c_n, x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, *results, mode,
                batch_sizes, needs, reverse=False):
        T = x.shape[0]
        H = w_hh.shape[0] // GATES[mode]
        p = dict(zip(RESULTS, results))
        xp = _backend.namespace(x, w_hh)
        d_out = xp.zeros(p["output"].shape, x.dtype) if g_output is None else g_output
        dh = xp.zeros(hx.shape, x.dtype) if g_h_n is None else g_h_n.copy()
        # Gradient of the gate pre-activations of each row (the x side; for a GRU the
        # candidate's h side differs: it is scaled by the reset gate, kept in d_hh).
        d_gates = xp.empty((T, w_hh.shape[0]), x.dtype)
        d_hh = xp.empty((T, w_hh.shape[0]), x.dtype) if mode == "GRU" else d_gates
        # The gradient reaching each row's output h', kept for the projection's weight.
        d_h_rows = xp.empty((T, hx.shape[1]), x.dtype) if w_hr is not None else None
        if mode == "LSTM":
            dc = xp.zeros(cx.shape, x.dtype) if g_c_n is None else g_c_n.copy()
            tanh_c = xp.tanh(p["c"])
        for rows, b in reversed(step_rows(batch_sizes, reverse, x.shape[0], hx.shape[0])):
            dh_b = dh[:b]
            dh_b += d_out[rows]
            dg = d_gates[rows]
            if mode == "LSTM":
                if w_hr is not None:
                    d_h_rows[rows] = dh_b
                    dh_b = _backend.matmul(dh_b, w_hr)
                gates = p["gates"][rows]
                i, f, cell_in, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
                tc = tanh_c[rows]
                dc_b = dc[:b]
                dc_b += dh_b * o * (1 - tc * tc)
                xp.multiply(dc_b * cell_in, i * (1 - i), out=dg[:, :H])
                xp.multiply(dc_b * p["c_prev"][rows], f * (1 - f), out=dg[:, H:2 * H])
                xp.multiply(dc_b * i, 1 - cell_in * cell_in, out=dg[:, 2 * H:3 * H])
                xp.multiply(dh_b * tc, o * (1 - o), out=dg[:, 3 * H:])
                dc_b *= f
                dh[:b] = _backend.matmul(dg, w_hh)
            elif mode == "GRU":
                gates = p["gates"][rows]
                r, z, n = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:]
                h_prev = p["h_prev"][rows]
                dn = dh_b * (1 - z) * (1 - n * n)
                dg[:, 2 * H:] = dn
                dhh = d_hh[rows]
                xp.multiply(dn, r, out=dhh[:, 2 * H:])
                xp.multiply(dn * p["hh_new"][rows], r * (1 - r), out=dg[:, :H])
                xp.multiply(dh_b * (h_prev - n), z * (1 - z), out=dg[:, H:2 * H])
                dhh[:, :2 * H] = dg[:, :2 * H]
                dh[:b] = dh_b * z + _backend.matmul(dhh, w_hh)
            else:
                y = p["output"][rows]
                if mode == "RNN_TANH":
                    xp.multiply(dh_b, 1 - y * y, out=dg)
                else:
                    xp.multiply(dh_b, y > 0, out=dg)
                dh[:b] = _backend.matmul(dg, w_hh)
        grads = {"hx": dh}
        if mode == "LSTM":
            grads["cx"] = dc
        if "input" in needs:
            grads["input"] = _backend.matmul(d_gates, w_ih)
        if "weight_ih" in needs:
            grads["weight_ih"] = _backend.matmul(d_gates.T, x)
        if "weight_hh" in needs:
            grads["weight_hh"] = _backend.matmul(d_hh.T, p["h_prev"])
        if "bias_ih" in needs:
            grads["bias_ih"] = d_gates.sum(0)
        if "bias_hh" in needs:
            grads["bias_hh"] = d_hh.sum(0)
        if "weight_hr" in needs:
            grads["weight_hr"] = _backend.matmul(d_h_rows.T, tanh_c * p["gates"][:, 3 * H:])
        return tuple(grads[name] if name in needs else None for name in INPUTS)

    @staticmethod
    def backward(ctx, *gg):
        """Gradients of gradients: the layer is recomputed with per-step ember ops
        (:func:`_composed_layer`) on detached copies of its inputs, and the engine
        differentiates that twice. Taking a third derivative would need the result to
        remember the real inputs, so it is refused rather than silently dropped."""
        if STATE.enabled:
            raise RuntimeError("ember's fused recurrent layers can be differentiated twice, not "
                               "three times (create_graph=True through a second derivative of "
                               "nn.RNN, nn.LSTM or nn.GRU)")
        attrs = ctx.attrs
        mode, needs = attrs["mode"], attrs["needs"]
        inputs = ctx.inputs
        given = 3 + len(INPUTS)  # the gradients, then the layer's inputs (not its results)
        leaves = [None if t is None else t.detach().requires_grad_() for t in inputs[:given]]
        with enable_grad():
            results = _composed_layer(mode, *leaves[3:], attrs["batch_sizes"], attrs.get("reverse", False))
            seeded = [(r, g) for r, g in zip(results, leaves[:3]) if g is not None]
            wrt = [leaves[3 + INPUTS.index(name)] for name in needs]
            first = grad([r for r, _ in seeded], wrt, grad_outputs=[g for _, g in seeded],
                         create_graph=True, allow_unused=True)
            pairs = [(f, gg[INPUTS.index(name)]) for f, name in zip(first, needs)
                     if f is not None and f.requires_grad and gg[INPUTS.index(name)] is not None]
            wanted = [t for t, need in zip(leaves, ctx.needs_input_grad) if need and t is not None]
            if not pairs or not wanted:
                return (None,) * len(ctx.needs_input_grad)
            found = iter(grad([f for f, _ in pairs], wanted, grad_outputs=[h for _, h in pairs],
                              allow_unused=True))
        return tuple(next(found) if need and i < given and inputs[i] is not None else None
                     for i, need in enumerate(ctx.needs_input_grad))


def _composed_layer(mode, x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    """:class:`RNNLayer` written with one ember op per product and gate, so that the engine can
    differentiate it; returns (output, h_n) and for an LSTM c_n too."""
    H = w_hh.shape[0] // GATES[mode]
    gx = x @ w_ih.mT if b_ih is None else x @ w_ih.mT + b_ih
    h, c, outputs = hx, cx, {}
    for rows, b in step_rows(batch_sizes, reverse, x.shape[0], hx.shape[0]):
        h_prev = h[:b]
        gh = h_prev @ w_hh.mT if b_hh is None else h_prev @ w_hh.mT + b_hh
        a = gx[rows] + gh
        if mode == "RNN_TANH":
            new = a.tanh()
        elif mode == "RNN_RELU":
            new = a.relu()
        elif mode == "LSTM":
            c_new = a[:, H:2 * H].sigmoid() * c[:b] + a[:, :H].sigmoid() * a[:, 2 * H:3 * H].tanh()
            new = a[:, 3 * H:].sigmoid() * c_new.tanh()
            if w_hr is not None:
                new = new @ w_hr.mT
            c = c_new if b == c.shape[0] else cat([c_new, c[b:]])
        else:
            r, z = a[:, :H].sigmoid(), a[:, H:2 * H].sigmoid()
            n = (gx[rows][:, 2 * H:] + r * gh[:, 2 * H:]).tanh()
            new = n + z * (h_prev - n)
        h = new if b == h.shape[0] else cat([new, h[b:]])
        outputs[rows.start] = new
    output = cat([outputs[start] for start in sorted(outputs)])
    return (output, h, c) if mode == "LSTM" else (output, h)


# ---- packing: each op is the other's adjoint, so each one's derivative is the other ------------
def _packed_rows(xp, batch_sizes, batch):
    """Row numbers in a (L * batch, ...) time-major array of the packed rows, in packed order,
    as an array of the namespace ``xp``."""
    bs = xp.asarray(batch_sizes, np.int64)
    step = xp.repeat(xp.arange(len(batch_sizes)), bs)
    within = xp.arange(sum(batch_sizes)) - xp.repeat(xp.cumsum(bs) - bs, bs)
    return step * batch + within


class PackPadded(Op):
    """The packed rows of a time-major padded ``x`` (L, B, *): step t contributes
    ``x[t, :batch_sizes[t]]`` (PyTorch's ``_pack_padded_sequence``). Result (T, *)."""
    promote = None
    infer = classmethod(lambda op, x, batch_sizes: ((sum(batch_sizes),) + tuple(x.shape[2:]), x.dtype))
    save_inputs = False

    @staticmethod
    def forward(x, batch_sizes):
        flat = x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:])
        return flat[_packed_rows(_backend.namespace(x), batch_sizes, x.shape[1])]

    @staticmethod
    def backward(ctx, g):
        length, batch = ctx.shapes[0][:2]
        return (apply(PadPacked, g, batch_sizes=ctx.attrs["batch_sizes"], batch=batch,
                      total_length=length),)


class PadPacked(Op):
    """Packed rows ``data`` (T, *) written into a time-major (total_length, batch, *) array
    filled with ``padding_value`` (PyTorch's ``_pad_packed_sequence``)."""
    promote = None

    @classmethod
    def infer(cls, data, batch_sizes, batch, total_length, padding_value=0.0):
        return (total_length, batch) + tuple(data.shape[1:]), data.dtype
    save_inputs = False

    @staticmethod
    def forward(data, batch_sizes, batch, total_length, padding_value=0.0):
        xp = _backend.namespace(data)
        out = xp.full((total_length * batch,) + data.shape[1:], padding_value, data.dtype)
        out[_packed_rows(xp, batch_sizes, batch)] = data
        return out.reshape((total_length, batch) + data.shape[1:])

    @staticmethod
    def backward(ctx, g):
        return (apply(PackPadded, g, batch_sizes=ctx.attrs["batch_sizes"]),)
