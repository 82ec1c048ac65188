"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells
(https://pytorch.org/docs/stable/nn.html#recurrent-layers).

Shapes follow PyTorch: L sequence length, N batch size, H_in ``input_size``, H
``hidden_size``, H_out ``proj_size`` if set else H, D = 2 if bidirectional else 1. Parameter
names, shapes and gate order (LSTM i, f, g, o; GRU r, z, n) are PyTorch's, so a state_dict
maps one to one. Every layer of every direction is one fused op
(:class:`ember._ops.rnn.RNNLayer`); :mod:`ember.nn.functional.rnn` stacks them.
"""
import math
import numbers
import warnings

from ... import _dtype
from ..._creation import empty
from ..._ops.core import _type_name, named
from ..._ops.rnn import GATES
from .. import init
from ..functional.rnn import rnn_layer, rnn_layers
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_CELL_OUTPUT_NODES = {"LSTM": "MulBackward0", "GRU": "AddBackward0", "RNN_TANH": "TanhBackward0",
                      "RNN_RELU": "ReluBackward0"}


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: argument checks, parameters, their PyTorch
    initialisation U(-1/sqrt(H), 1/sqrt(H)), input and state checks, and the forward pass.

    ``mode`` is "RNN_TANH", "RNN_RELU", "LSTM" or "GRU" (ValueError otherwise). Per layer k
    and direction (suffix ``_reverse`` for the second) the parameters are ``weight_ih_l{k}``
    (G*H, H_in for layer 0 else D*H_out), ``weight_hh_l{k}`` (G*H, H_out), ``bias_ih_l{k}``,
    ``bias_hh_l{k}`` (G*H) if ``bias``, and ``weight_hr_l{k}`` (H_out, H) if ``proj_size``;
    G = 1, 4, 3 gates for RNN, LSTM, GRU.
    """
    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) \
                or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = GATES[mode] * hidden_size
        output_size = proj_size or hidden_size
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else output_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {"weight_ih": (gate_size, layer_input_size),
                          "weight_hh": (gate_size, output_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    setattr(self, kind + suffix, Parameter(empty(shape, **factory)))
                    names.append(kind + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters as one list per layer and direction, in ``_all_weights`` order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: PyTorch packs the weights into one buffer for cuDNN; ember reads them as
        they are."""

    def reset_parameters(self):
        """Draws every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _layer_weights(self):
        """``(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr)`` per layer and direction."""
        out = []
        for names in self._all_weights:
            w = [getattr(self, name) for name in names]
            biases = (w[2], w[3]) if self.bias else (None, None)
            out.append((w[0], w[1]) + biases + ((w[-1],) if self.proj_size else (None,)))
        return out

    def _check_input(self, input, ndim):
        weight = self.weight_ih_l0
        if input.dtype is not weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        if input.ndim != ndim:
            raise RuntimeError(f"input must have {ndim} dimensions, got {input.ndim}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_hidden(self, state, expected, message, input):
        if tuple(state.shape) != expected:
            raise RuntimeError(message.format(expected, list(state.shape)))
        if state.dtype is not input.dtype:
            raise RuntimeError(f"Input and hidden tensors are not the same dtype, found input "
                               f"tensor with {_type_name(input.dtype)} and hidden tensor with "
                               f"{_type_name(state.dtype)}")

    def forward(self, input, hx=None):
        """Runs the layers over ``input``.

        Args:
            input: (L, N, H_in), (N, L, H_in) if ``batch_first``, (L, H_in) unbatched, or a
                :class:`~ember.nn.utils.rnn.PackedSequence`.
            hx: initial hidden state (D * num_layers, N, H_out), or (D * num_layers, H_out)
                for unbatched input; for an LSTM a pair (h_0, c_0) with c_0 shaped
                (D * num_layers, N, H). Zeros if omitted.

        Returns ``(output, h_n)`` (for an LSTM ``(output, (h_n, c_n))``): output (L, N,
        D * H_out) (batch-first, unbatched or packed like the input), holding the last
        layer's hidden state at every step, with the two directions concatenated; h_n and
        c_n the final states of every layer and direction, shaped as hx. For packed input
        the final state of each sequence is the one at its own length.

        Raises ValueError for input that is not 2-D or 3-D or whose dtype differs from the
        weights'; RuntimeError for a wrong ``input.size(-1)``, a wrong hidden state shape
        ("Expected hidden size (2, 3, 20), got [1, 3, 20]") or dtype, or an empty sequence.
        """
        lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        output_size = self.proj_size or self.hidden_size
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            self._check_input(data, 2)
            steps_batch = tuple(int(b) for b in batch_sizes.tolist())
            batch, batched = steps_batch[0], True
        else:
            if input.ndim not in (2, 3):
                kind = "D tensor instead" if self.mode.startswith("RNN") else "D instead"
                name = "RNN" if self.mode.startswith("RNN") else self.mode
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}{kind}")
            batched = input.ndim == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                input = input.unsqueeze(batch_dim)
            hx = self._batch_state(hx, batched)
            self._check_input(input, 3)
            if self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[:2]
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            data = input.reshape(steps * batch, self.input_size)
            steps_batch = None  # (batch,) * steps: the op reads it from the shapes
            sorted_indices = unsorted_indices = None
        h_shape = (self.num_layers * directions, batch, output_size)
        c_shape = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            h0 = data.new_zeros(h_shape)
            c0 = data.new_zeros(c_shape) if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            self._check_hidden(h0, h_shape, "Expected hidden[0] size {}, got {}" if lstm
                               else "Expected hidden size {}, got {}", data)
            if lstm:
                self._check_hidden(c0, c_shape, "Expected hidden[1] size {}, got {}", data)
            if sorted_indices is not None:
                h0 = h0.index_select(1, sorted_indices)
                c0 = c0.index_select(1, sorted_indices) if lstm else None
        output, h_n, c_n = rnn_layers(self.mode, data, steps_batch, h0, c0, self._layer_weights(),
                                      self.num_layers, self.dropout, self.training,
                                      self.bidirectional)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = c_n.index_select(1, unsorted_indices) if lstm else None
        if packed:
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        else:
            # grad_fn names as torch's CPU kernels leave them: a float32/bfloat16 LSTM in one
            # direction without projections runs oneDNN's layer, whose output is its own node;
            # otherwise the output stacks the steps (or cats the directions); batch_first
            # transposes it.
            onednn = lstm and not self.bidirectional and not self.proj_size and \
                data.dtype in (_dtype.float32, _dtype.bfloat16)
            output = named(output.view(steps, batch, directions * output_size),
                           "MkldnnRnnLayerBackward0" if onednn else
                           "CatBackward0" if self.bidirectional else "StackBackward0")
            if self.batch_first:
                output = named(output.transpose(0, 1), "TransposeBackward0" if lstm else "TransposeBackward1")
            if not batched:
                output = output.squeeze(batch_dim)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if lstm else None
        return output, ((h_n, c_n) if lstm else h_n)

    def _batch_state(self, hx, batched):
        """``hx`` with the batch dim added for unbatched input, after PyTorch's rank checks."""
        if hx is None:
            return None
        want = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if self.mode == "LSTM":
            if hx[0].ndim != want or hx[1].ndim != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
            return hx if batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        if hx.ndim != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.ndim}-D tensor")
        return hx if batched else hx.unsqueeze(1)


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``, act tanh or relu,
    stacked ``num_layers`` deep.

    Args:
        input_size: H_in. hidden_size: H. num_layers: stacked layers (default 1).
        nonlinearity: "tanh" (default) or "relu" (ValueError otherwise).
        bias: use ``bias_ih``/``bias_hh`` (default True).
        batch_first: input and output as (N, L, *) instead of (L, N, *); not the states.
        dropout: dropout probability on every layer's output but the last, in training.
        bidirectional: also run each layer from the last step to the first.
        device, dtype: of the parameters.

    Inputs ``input, h_0`` and outputs ``output, h_n`` as in :meth:`RNNBase.forward`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.RNN.html

    Example::

        >>> import ember
        >>> rnn = ember.nn.RNN(10, 20, 2)
        >>> output, h_n = rnn(ember.randn(5, 3, 10), ember.randn(2, 3, 20))
        >>> output.shape, h_n.shape
        (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None,
                 **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class LSTM(RNNBase):
    """Long short-term memory (Hochreiter & Schmidhuber, 1997), stacked ``num_layers`` deep::

        i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)
        c_t = f * c_{t-1} + i * g
        h_t = o * tanh(c_t)        (then h_t = h_t W_hr^T with proj_size > 0)

    Args as for :class:`RNN` (no ``nonlinearity``), plus ``proj_size``: if > 0, project
    h_t to this size (Sak et al., 2014, https://arxiv.org/abs/1402.1128); must be smaller than
    ``hidden_size``.

    Inputs ``input, (h_0, c_0)`` and outputs ``output, (h_n, c_n)`` as in
    :meth:`RNNBase.forward`. Source: https://pytorch.org/docs/stable/generated/torch.nn.LSTM.html

    Example::

        >>> import ember
        >>> lstm = ember.nn.LSTM(10, 20, 2)
        >>> output, (h_n, c_n) = lstm(ember.randn(5, 3, 10))
        >>> output.shape, c_n.shape
        (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    """Gated recurrent unit (Cho et al., 2014, https://arxiv.org/abs/1406.1078), stacked
    ``num_layers`` deep::

        r, z = sigmoid(x_t W_i{r,z}^T + b_i{r,z} + h_{t-1} W_h{r,z}^T + b_h{r,z})
        n = tanh(x_t W_in^T + b_in + r * (h_{t-1} W_hn^T + b_hn))
        h_t = (1 - z) * n + z * h_{t-1}

    Args as for :class:`RNN` (no ``nonlinearity``). Inputs ``input, h_0`` and outputs
    ``output, h_n`` as in :meth:`RNNBase.forward`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.GRU.html

    Example::

        >>> import ember
        >>> gru = ember.nn.GRU(10, 20, batch_first=True)
        >>> output, h_n = gru(ember.randn(3, 5, 10))
        >>> output.shape, h_n.shape
        (torch.Size([3, 5, 20]), torch.Size([1, 3, 20]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)


class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` (G*H, H_in), ``weight_hh`` (G*H, H), ``bias_ih``
    and ``bias_hh`` (G*H) or None, all drawn from U(-1/sqrt(H), 1/sqrt(H)); G = ``num_chunks``.
    """
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        factory = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        """Draws every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def _step(self, mode, input, states):
        """One step of ``mode`` on batched (N, H_in) ``input`` from ``states`` (hidden, and
        cell for an LSTM), after PyTorch's checks; returns (h', c' or None)."""
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                               f"{self.input_size}")
        for k, state in enumerate(states):
            if state.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} "
                                   f"batch size {state.shape[0]}")
            if state.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {state.shape[1]}, "
                                   f"expected {self.hidden_size}")
        for t in (self.weight_ih,) + tuple(states):
            if t.dtype is not input.dtype:
                raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                                   f"{_type_name(input.dtype)} and {_type_name(t.dtype)}")
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)
        _, h, c = rnn_layer(mode, input, None, states[0],  # one step of the whole batch
                            states[1] if len(states) > 1 else None, weights)
        # torch's cells end in h = o * tanh(c) (LSTM), (1 - z) * n + z * h (GRU), tanh or relu;
        # an LSTM's c shares h's node here, so it shows the same name (torch: AddBackward0)
        return named(h, _CELL_OUTPUT_NODES[mode]), c

    def _batched(self, input, hx, name, hidden_names):
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        states = () if hx is None else ((hx,) if len(hidden_names) == 1 else tuple(hx))
        for label, state in zip(hidden_names, states):
            if state.ndim not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {state.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
            states = tuple(s.unsqueeze(0) for s in states)
        if not states:
            zero = input.new_zeros((input.shape[0], self.hidden_size))
            states = (zero,) * len(hidden_names)
        return input, states, batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Args: input_size (H_in), hidden_size (H), bias (default True), nonlinearity ("tanh" or
    "relu"; RuntimeError at the first call otherwise, as in PyTorch), device, dtype.
    Shape: input (N, H_in) or (H_in); hidden (N, H) or (H), zeros if omitted; output like
    hidden. Raises ValueError for inputs that are not 1-D or 2-D, RuntimeError for
    inconsistent sizes. Source: https://pytorch.org/docs/stable/generated/torch.nn.RNNCell.html

    Example::

        >>> import ember
        >>> cell = ember.nn.RNNCell(10, 20)
        >>> cell(ember.randn(3, 10)).shape
        torch.Size([3, 20])
    """
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, states, batched = self._batched(input, hx, "RNNCell", ("hidden",))
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h, _ = self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, states)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM (gates i, f, g, o as in :class:`LSTM`); returns ``(h', c')``.

    Args: input_size (H_in), hidden_size (H), bias (default True), device, dtype.
    Shape: input (N, H_in) or (H_in); ``hx`` a pair (h, c) of (N, H) or (H), zeros if omitted.
    Raises ValueError for tensors that are not 1-D or 2-D, RuntimeError for inconsistent
    sizes. Source: https://pytorch.org/docs/stable/generated/torch.nn.LSTMCell.html

    Example::

        >>> import ember
        >>> cell = ember.nn.LSTMCell(10, 20)
        >>> h, c = cell(ember.randn(3, 10))
        >>> h.shape, c.shape
        (torch.Size([3, 20]), torch.Size([3, 20]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, states, batched = self._batched(input, hx, "LSTMCell", ("hx[0]", "hx[1]"))
        h, c = self._step("LSTM", input, states)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU (gates r, z, n as in :class:`GRU`).

    Args: input_size (H_in), hidden_size (H), bias (default True), device, dtype.
    Shape: input (N, H_in) or (H_in); hidden (N, H) or (H), zeros if omitted; output like
    hidden. Raises ValueError for tensors that are not 1-D or 2-D, RuntimeError for
    inconsistent sizes. Source: https://pytorch.org/docs/stable/generated/torch.nn.GRUCell.html

    Example::

        >>> import ember
        >>> cell = ember.nn.GRUCell(10, 20)
        >>> cell(ember.randn(10)).shape
        torch.Size([20])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, states, batched = self._batched(input, hx, "GRUCell", ("hidden",))
        h, _ = self._step("GRU", input, states)
        return h if batched else h.squeeze(0)
