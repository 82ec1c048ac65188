"""nn.parallel on one process: DataParallel is a pass-through with torch's state_dict keys,
data_parallel refuses without a GPU as torch's; DDP refuses to start without a process group."""
import numpy as np
import pytest
import torch

import ember
from ember import nn


def test_data_parallel_calls_the_module_and_prefixes_state_dict_keys_like_torch():
    ember.manual_seed(0)
    inner = nn.Linear(3, 2)
    wrapped = nn.DataParallel(inner)
    x = ember.randn(4, 3)
    np.testing.assert_array_equal(wrapped(x).detach().numpy(), inner(x).detach().numpy())
    for lib, module, inputs in ((torch, torch.nn.Linear(3, 2), torch.randn(4, 3)), (ember, inner, x)):
        with pytest.raises(RuntimeError, match="^device type could not be determined$"):
            lib.nn.parallel.data_parallel(module, inputs)      # the function needs a GPU in torch
    assert list(wrapped.state_dict()) == list(torch.nn.DataParallel(torch.nn.Linear(3, 2)).state_dict())
    assert wrapped.module is inner


def test_ddp_before_init_process_group_raises_torchs_error():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
