"""``torch.multiprocessing``: Python's :mod:`multiprocessing`, with tensors that processes share.

Everything :mod:`multiprocessing` has is here under the same name (``Process``, ``Queue``,
``set_start_method``, ``get_context``...). A tensor sent to another process (a ``Process``
argument, an item put on a ``Queue``) is moved into shared memory first
(``Tensor.share_memory_``) and arrives as a tensor on the same memory, so in-place updates on
either side show on the other: several processes can train one model at once (Hogwild,
Recht et al. 2011, https://arxiv.org/abs/1106.5730), as pytorch/examples' mnist_hogwild does.
Semantics follow https://pytorch.org/docs/stable/multiprocessing.html: ``requires_grad`` travels,
``.grad`` does not, and a non-leaf tensor that requires grad is refused (autograd does not cross
processes). :func:`spawn` starts ``nprocs`` copies of a function and reports the first failure.
"""
import multiprocessing
from multiprocessing.reduction import ForkingPickler

from .._backend import shared as _shared
from .._tensor import Tensor, _rebuild
from ..nn.parameter import Parameter
from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException, spawn,
                    start_processes)

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
           "get_all_sharing_strategies"]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor"]


def get_all_sharing_strategies():
    """The names PyTorch uses for its ways of passing shared memory. ember passes a segment's
    name under either (POSIX shared memory), so the choice changes nothing here."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    """The current sharing strategy's name (``"file_descriptor"`` unless set)."""
    return _strategy[0]


def set_sharing_strategy(new_strategy):
    """Records ``new_strategy``, one of :func:`get_all_sharing_strategies` (AssertionError
    otherwise, as in PyTorch)."""
    assert new_strategy in _STRATEGIES, new_strategy
    _strategy[0] = new_strategy


def _reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries. If you just want to transfer the data, "
            "call detach() on the tensor before serializing (e.g., putting it on the queue).")
    if t.numel() == 0:  # nothing to share: sent by value, not shared on either side, as in torch
        return t.__reduce_ex__(2)
    t.share_memory_()
    return _rebuild_shared, (type(t), _shared.handle(t._data), t.requires_grad)


def _rebuild_shared(cls, handle, requires_grad):
    return _rebuild(cls, _shared.attach(*handle), requires_grad)


for _cls in (Tensor, Parameter):  # a Buffer is a marked Tensor
    ForkingPickler.register(_cls, _reduce_tensor)


def __getattr__(name):  # the rest of the standard library's multiprocessing, unchanged
    return getattr(multiprocessing, name)


def __dir__():
    return sorted(set(globals()) | set(dir(multiprocessing)))
