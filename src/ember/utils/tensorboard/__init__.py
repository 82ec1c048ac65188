"""``torch.utils.tensorboard``: ``SummaryWriter`` writes TensorBoard event files
(https://pytorch.org/docs/stable/tensorboard.html). It needs the ``tensorboard`` package
(``pip install tensorboard``), as PyTorch's does; without it, importing this module raises
ImportError saying so."""
try:
    import tensorboard  # noqa: F401  (the event-file writer and protocol buffers come from it)
except ImportError:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above "
                      "(pip install tensorboard)") from None

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
