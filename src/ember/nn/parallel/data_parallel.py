"""DataParallel on one device: ember runs on the CPU (one "device"), where torch's
single-process multi-GPU replication reduces to calling the module. Kept so torch scripts
that wrap their model run unchanged (``data_parallel``, the function, refuses as torch's
does without a GPU); use DistributedDataParallel to train on many
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
    """torch's functional form replicates ``module`` over GPUs and needs one: without a GPU
    (always, in ember) it raises RuntimeError "device type could not be determined", as
    torch's does on a CPU-only machine; ``DataParallel`` (the module) is the pass-through."""
    raise RuntimeError("device type could not be determined")
