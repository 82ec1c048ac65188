"""``ember.ao.nn.quantized.dynamic``: modules with quantized weights and float activations
(PyTorch's ``torch.ao.nn.quantized.dynamic``)."""
from .linear import Linear, LinearPackedParams
from .rnn import GRU, LSTM, GRUCell, LSTMCell, RNNCell

__all__ = ["Linear", "LinearPackedParams", "LSTM", "GRU", "LSTMCell", "GRUCell", "RNNCell"]
