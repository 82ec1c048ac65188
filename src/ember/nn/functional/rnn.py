"""The computation behind ``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells: stacked layers
of the fused :class:`~ember._ops.rnn.RNNLayer` op over a packed sequence. PyTorch has no
public functional form of these layers, so nothing here is exported."""
from ..._ops.join import cat, stack
from ..._ops.core import apply
from ..._ops.rnn import RNNLayer
from .dropout import dropout as _dropout

__all__ = []


def rnn_layer(mode, data, batch_sizes, hx, cx, weights, reverse=False):
    """One direction of one layer.

    Args:
        mode: "RNN_TANH", "RNN_RELU", "LSTM" or "GRU".
        data: (T, H_in) rows of a packed sequence (see :mod:`ember._ops.rnn`).
        batch_sizes: tuple of L ints, the rows of each step; None for a padded sequence
            (``T // N`` steps of N rows).
        hx: (N, H_out) initial hidden state, N = ``batch_sizes[0]``.
        cx: (N, H) initial cell state of an LSTM, else None.
        weights: ``(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr)``, None where absent.
        reverse: run from the last step to the first.

    Returns ``(output (T, H_out), h_n (N, H_out), c_n (N, H) or None)``.
    """
    output, h_n, c_n = apply(RNNLayer, data, hx, cx, *weights, mode=mode, batch_sizes=batch_sizes,
                             reverse=reverse)[:3]
    return output, h_n, c_n


def rnn_layers(mode, data, batch_sizes, hx, cx, weights, num_layers, dropout, training,
               bidirectional):
    """Stacked layers over a packed sequence.

    ``data`` (T, H_in) and ``batch_sizes`` as in :func:`rnn_layer`; ``hx`` (num_layers * D,
    N, H_out) and ``cx`` (num_layers * D, N, H) or None, with D = 2 if ``bidirectional``
    else 1; ``weights`` one tuple per layer and direction, in PyTorch's order (layer 0
    forward, layer 0 reverse, layer 1 forward, ...). In training, dropout with probability
    ``dropout`` is applied to the output of every layer but the last.

    Returns ``(output (T, D * H_out), h_n, c_n or None)`` with h_n and c_n shaped as hx, cx.
    """
    directions = 2 if bidirectional else 1
    h_n, c_n = [], []
    x = data
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            k = layer * directions + direction
            y, h, c = rnn_layer(mode, x, batch_sizes, hx[k], None if cx is None else cx[k],
                                weights[k], reverse=direction == 1)
            outputs.append(y)
            h_n.append(h)
            c_n.append(c)
        x = outputs[0] if directions == 1 else cat(outputs, 1)
        if dropout and training and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    return x, stack(h_n), (stack(c_n) if cx is not None else None)
