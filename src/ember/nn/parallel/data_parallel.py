"""DataParallel and data_parallel on one device: ember runs on the CPU (one "device"), where
torch's single-process multi-GPU replication reduces to calling the module. Kept so torch
scripts that wrap their model run unchanged; use DistributedDataParallel to train on many
processes.

Source: https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html
"""
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it (one device, nothing to scatter or gather).

    Attributes:
        module: the wrapped module (``state_dict`` keys gain the ``module.`` prefix, as in torch).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """``module(*inputs, **module_kwargs)`` (``inputs`` a tensor or a tuple of them)."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))
